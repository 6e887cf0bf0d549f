//! Key-value separation: values at or above `Options::blob_threshold` live in
//! append-only blob files (`NNNNNN.blob`); the tree keeps a small pointer to
//! each as an entry of kind 3 ([`crate::key::Kind::Blob`]).
//!
//! Commits write large values to the blob file of the memtable they go into
//! and log a pointer (`db::commit_blobs`); flushes name that file beside the
//! table, and write any other large value of a memtable (a folded merge) to a
//! new blob file ([`Separator`]); compactions copy pointers without reading the
//! values, count the bytes of the pointers they drop as dead, and move the
//! live values out of files whose dead share passed `blob_gc_ratio` so those
//! files can be removed. Reads go from the file straight into the caller's
//! buffer ([`LazyValue`]); values never enter the block cache.
//!
//! Layout: docs/format.md#blob-file, docs/format.md#blob-pointer.

mod file;
mod hot;
mod pointer;
mod reader;
mod separator;
mod store;
mod value;
mod writer;

#[cfg(any(test, feature = "internals"))]
pub use file::BlobFile;
pub use hot::{Kept, KeptBytes};
pub use pointer::BlobPointer;
pub(crate) use reader::has_zero_page;
#[cfg(any(test, feature = "internals"))]
pub use reader::{read_value, BlobListing, BlobRecord};
pub use reader::{scan, scan_open};
pub use separator::Separator;
pub use store::BlobStore;
pub use value::LazyValue;
#[cfg(any(test, feature = "internals"))]
pub use writer::{BlobWriter, SealedBlob};
#[cfg(not(any(test, feature = "internals")))]
pub(crate) use writer::{BlobWriter, SealedBlob};

/// Magic number at both ends of a blob file.
pub const MAGIC: &[u8; 8] = b"LAMNABLB";
/// Format version in the header of a blob file, the one format 1 writes and
/// reads (docs/format.md#blob-file; version 1 was written only by
/// pre-release builds, and is refused).
pub const VERSION: u32 = 2;
/// Bytes of the file header.
pub const HEADER_LEN: usize = 16;
/// Bytes of the footer.
pub const FOOTER_LEN: usize = 28;
/// Bytes of a record header (before the tree key).
pub const RECORD_HEADER_LEN: usize = 16;

/// What the manifest records of a blob file (docs/format.md#version-edit, tag 12).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlobMeta {
    /// File number (`NNNNNN.blob`).
    pub number: u64,
    /// File size in bytes.
    pub size: u64,
    /// Values it holds.
    pub records: u64,
    /// Sum of their lengths.
    pub value_bytes: u64,
    /// Smallest tree key of its records.
    pub smallest: Vec<u8>,
    /// Largest tree key of its records.
    pub largest: Vec<u8>,
}

/// What one flush or compaction did to blob files.
#[derive(Debug, Default)]
pub struct BlobOutput {
    /// New blob files, synced.
    pub written: Vec<BlobMeta>,
    /// Value bytes that died, per existing blob file.
    pub dead: std::collections::BTreeMap<u64, u64>,
    /// Value bytes moved out of files being collected.
    pub moved: u64,
}

/// Whether a blob file with `dead` of its `value_bytes` dead has passed the
/// collection ratio: its live values are moved by the next compaction that
/// reads pointers to them.
pub fn should_collect(value_bytes: u64, dead: u64, ratio: f64) -> bool {
    value_bytes > 0 && dead > 0 && (dead as f64) >= ratio * value_bytes as f64
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::fs::{FileSystem, MemFs};
    use std::path::Path;

    #[test]
    fn written_values_read_back_and_list() {
        let fs = MemFs::new();
        let dir = Path::new("/b");
        fs.create_dir_all(dir).unwrap();
        let mut w = BlobWriter::create(&fs, dir, 7).unwrap();
        let a = w.add(b"\0\0\0\0k", b"hello").unwrap();
        assert_eq!(
            a.offset, 37,
            "the worked example of docs/format.md#blob-file"
        );
        let big = vec![7u8; 100_000];
        let b = w.add(b"\0\0\0\0m", &big).unwrap();
        let meta = w.finish().unwrap();
        assert_eq!((meta.records, meta.value_bytes), (2, 100_005));
        assert_eq!(meta.smallest, b"\0\0\0\0k");
        let path = crate::filename::path(dir, crate::filename::FileKind::Blob, 7);
        let f = fs.open(&path).unwrap();
        assert_eq!(f.len(), meta.size);
        let mut buf = vec![0u8; b.len as usize];
        read_value(f.as_ref(), &path, &b, &mut buf).unwrap();
        assert_eq!(buf, big);
        let listing = scan(f.as_ref(), &path, 7).unwrap();
        assert_eq!(listing.records.len(), 2);
        assert_eq!(listing.records[0].pointer, a);
        assert_eq!(listing.records[1].tree_key, b"\0\0\0\0m");
    }

    #[test]
    fn a_file_written_at_commit_lists_before_it_is_sealed() {
        let fs = MemFs::new();
        let dir = Path::new("/c");
        fs.create_dir_all(dir).unwrap();
        let mut w = BlobWriter::create_at_commit(&fs, dir, 9).unwrap();
        let a = w.add(b"\0\0\0\0a", &[1u8; 100]).unwrap();
        let b = w.add(b"\0\0\0\0b", &[2u8; 300]).unwrap();
        let path = crate::filename::path(dir, crate::filename::FileKind::Blob, 9);
        let open = |fs: &MemFs| fs.open(&path).unwrap();
        assert!(scan(open(&fs).as_ref(), &path, 9).is_err(), "no footer yet");
        let listing = scan_open(open(&fs).as_ref(), &path, 9).unwrap();
        let pointers: Vec<_> = listing.records.iter().map(|r| r.pointer).collect();
        assert_eq!(pointers, vec![a, b]);
        assert_eq!(
            (listing.footer_records, listing.footer_value_bytes),
            (2, 400)
        );
        // The zeros after the records run to a whole 256 KiB; a byte among
        // them that is not zero is corruption at its offset.
        let end = b.offset + 300;
        assert_eq!(open(&fs).len(), 256 << 10);
        fs.corrupt_byte(&path, end + 5000).unwrap();
        let err = scan_open(open(&fs).as_ref(), &path, 9)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("offset {}", end + 5000)), "{err}");
        // Zeros a full disk cut short, fewer than a record header, end the
        // records too (before, "record header runs into the end of the file").
        fs.truncate(&path, end + 5).unwrap();
        assert_eq!(
            scan_open(open(&fs).as_ref(), &path, 9)
                .unwrap()
                .records
                .len(),
            2
        );
        fs.corrupt_byte(&path, end + 3).unwrap();
        let err = scan_open(open(&fs).as_ref(), &path, 9)
            .unwrap_err()
            .to_string();
        assert!(err.contains("runs into the end of the file"), "{err}");
        // A torn append is corruption at the record it cuts.
        fs.truncate(&path, b.offset + 10).unwrap();
        let err = scan_open(open(&fs).as_ref(), &path, 9)
            .unwrap_err()
            .to_string();
        assert!(err.contains("runs into the end of the file"), "{err}");
        // Sealed, it lists through its footer.
        let fs = MemFs::new();
        fs.create_dir_all(dir).unwrap();
        let mut w = BlobWriter::create_at_commit(&fs, dir, 9).unwrap();
        w.add(b"\0\0\0\0a", &[1u8; 100]).unwrap();
        let meta = w.finish().unwrap();
        assert_eq!(
            meta.size,
            16 + 16 + 5 + 100 + FOOTER_LEN as u64,
            "the zeros cut"
        );
        assert_eq!(open(&fs).len(), meta.size);
        assert_eq!(scan(open(&fs).as_ref(), &path, 9).unwrap().records.len(), 1);
    }

    proptest::proptest! {
        #[test]
        fn scan_never_panics_on_damaged_files(
            values in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..300), 1..5),
            flips in proptest::collection::vec((0usize..2000, 1u8..=255), 0..4),
            cut in 0usize..2000,
        ) {
            let fs = MemFs::new();
            let dir = Path::new("/p");
            fs.create_dir_all(dir).unwrap();
            let mut w = BlobWriter::create(&fs, dir, 1).unwrap();
            for (i, v) in values.iter().enumerate() {
                w.add(format!("key{i}").as_bytes(), v).unwrap();
            }
            w.finish().unwrap();
            let path = crate::filename::path(dir, crate::filename::FileKind::Blob, 1);
            let mut bytes = fs.read_all(&path).unwrap();
            let damaged = !flips.is_empty() || cut < bytes.len();
            for (at, x) in flips {
                let n = bytes.len();
                bytes[at % n] ^= x;
            }
            bytes.truncate(cut.max(1));
            let mut f = fs.create(&path).unwrap();
            f.append(&bytes).unwrap();
            drop(f);
            let result = scan(fs.open(&path).unwrap().as_ref(), &path, 1);
            if damaged {
                proptest::prop_assert!(result.is_err());
            }
        }
    }

    #[test]
    fn collection_ratio() {
        assert!(!should_collect(100, 0, 0.5));
        assert!(!should_collect(100, 49, 0.5));
        assert!(should_collect(100, 50, 0.5));
        assert!(!should_collect(0, 0, 0.0));
    }
}
