//! Dumps of single database files — a WAL segment, a table, a blob file,
//! the manifest — as text, one record or entry per line, for tools such as
//! `lamina inspect`. They are read with the engine's own readers (layouts in
//! `docs/format.md`); the file is only read, and the database is not opened.
//!
//! The text is for people: its shape may change between versions. Keys and
//! values are escaped as in `lamina dump`'s TSV: `\\`, `\t`, `\n`, `\r`,
//! other control bytes as `\xHH`, everything else as is.

use crate::cache::BlockCache;
use crate::filename::{self, FileKind};
use crate::fs::FileSystem;
use crate::iter::InternalIterator;
use crate::manifest::VersionEdit;
use crate::table::Table;
use crate::wal::{LogReader, MANIFEST_MAGIC, WAL_MAGIC};
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `d` to `out`, escaped (see the module documentation).
fn escape(d: &[u8], out: &mut Vec<u8>) {
    for &b in d {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0..=0x1f | 0x7f => {
                out.extend_from_slice(b"\\x");
                out.push(HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'));
                out.push(HEX.get(usize::from(b & 15)).copied().unwrap_or(b'0'));
            }
            _ => out.push(b),
        }
    }
}

fn out_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

fn torn_tail(reader: &LogReader, out: &mut dyn Write) -> std::io::Result<()> {
    match reader.torn_tail() {
        Some(t) => writeln!(out, "torn tail after offset {}: {t:?}", reader.valid_end()),
        None => writeln!(out, "end at offset {}", reader.valid_end()),
    }
}

/// Prints one WAL segment: per record, its length, first seqno and number of
/// operations (the [batch](docs/format.md#batch) header); then, per blob
/// file its marks name, how far they say it was synced
/// (docs/format.md#blob-sync-marks).
pub fn dump_wal(fs: &dyn FileSystem, path: &Path, out: &mut dyn Write) -> Result<()> {
    let mut reader = LogReader::open(fs, path, WAL_MAGIC)?;
    let mut n = 0u64;
    while let Some(record) = reader.next_record()? {
        let u64_at = |r: std::ops::Range<usize>| record.get(r).and_then(|b| b.try_into().ok());
        let seqno = u64_at(0..8).map(u64::from_le_bytes);
        let count = record
            .get(8..12)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes);
        match (seqno, count) {
            (Some(s), Some(c)) => writeln!(
                out,
                "record {n}: {} bytes, seqnos {s}..{}, {c} operations",
                record.len(),
                s + u64::from(c)
            ),
            _ => writeln!(
                out,
                "record {n}: {} bytes, too short for a batch header",
                record.len()
            ),
        }
        .map_err(out_err(path))?;
        n += 1;
    }
    for (file, end) in reader.blob_synced() {
        writeln!(
            out,
            "marks: blob file {file:06} synced through offset {end}"
        )
        .map_err(out_err(path))?;
    }
    torn_tail(&reader, out).map_err(out_err(path))
}

/// Prints the manifest: one version edit per line.
pub fn dump_manifest(fs: &dyn FileSystem, path: &Path, out: &mut dyn Write) -> Result<()> {
    let mut reader = LogReader::open(fs, path, MANIFEST_MAGIC)?;
    let mut n = 0u64;
    while let Some(record) = reader.next_record()? {
        let line = match VersionEdit::decode(&record) {
            Ok(edit) => format!("edit {n}: {edit:?}"),
            Err(why) => format!("edit {n}: undecodable ({why})"),
        };
        writeln!(out, "{line}").map_err(out_err(path))?;
        n += 1;
    }
    torn_tail(&reader, out).map_err(out_err(path))
}

/// Prints one table: its properties, then every entry as keyspace, user key
/// (escaped as in TSV), seqno, kind and value.
pub fn dump_table(fs: &dyn FileSystem, path: &Path, out: &mut dyn Write) -> Result<()> {
    let file = fs.open(path).map_err(|e| Error::io(path, e))?;
    let table = Arc::new(Table::open(
        file,
        path.to_path_buf(),
        0,
        Arc::new(BlockCache::new(8 << 20)),
    )?);
    let props = table.properties();
    writeln!(
        out,
        "table {}: {} bytes, filter {} bytes, index {} bytes, {props:?}",
        path.display(),
        table.file_size(),
        table.filter_bytes(),
        table.index_bytes()
    )
    .map_err(out_err(path))?;
    let mut it = table.iter();
    it.seek_to_first();
    let mut line = Vec::new();
    while it.valid() {
        line.clear();
        match crate::key::parse(it.key()) {
            Some(p) => {
                line.extend_from_slice(format!("ks {} ", p.keyspace()).as_bytes());
                escape(p.user_key(), &mut line);
                line.extend_from_slice(format!(" @{} {:?}\t", p.seqno, p.kind).as_bytes());
            }
            None => {
                line.extend_from_slice(b"(unparsable key) ");
                escape(it.key(), &mut line);
                line.push(b'\t');
            }
        }
        match crate::key::parse(it.key()).filter(|p| p.kind == crate::key::Kind::Blob) {
            Some(_) => match crate::blob::BlobPointer::decode(it.value()) {
                Ok(b) => line.extend_from_slice(
                    format!(
                        "-> {} offset {} length {}",
                        filename::file_name(FileKind::Blob, b.file),
                        b.offset,
                        b.len
                    )
                    .as_bytes(),
                ),
                Err(why) => line.extend_from_slice(format!("(bad blob pointer: {why})").as_bytes()),
            },
            None => escape(it.value(), &mut line),
        }
        line.push(b'\n');
        out.write_all(&line).map_err(out_err(path))?;
        it.next();
    }
    it.status()
}

/// Prints one blob file (docs/format.md#blob-file): a line per record with
/// its key, the value's offset, length and checksum (every checksum is
/// verified), then the footer's counts, or, for a file written at commit
/// and not yet sealed, the counts of the records found.
pub fn dump_blob(fs: &dyn FileSystem, path: &Path, out: &mut dyn Write) -> Result<()> {
    let file = fs.open(path).map_err(|e| Error::io(path, e))?;
    let number = match path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(filename::parse_file_name)
    {
        Some((FileKind::Blob, n)) => n,
        _ => 0,
    };
    // A file that does not end with the magic has no footer: written at
    // commit and not yet sealed (docs/format.md#blob-files-written-at-commit).
    let len = file.len();
    let tail = file.read_at(len.saturating_sub(8), 8.min(len as usize));
    let sealed = tail.is_ok_and(|t| t.as_slice() == crate::blob::MAGIC.as_slice())
        && len >= (crate::blob::HEADER_LEN + crate::blob::FOOTER_LEN) as u64;
    let listing = if sealed {
        crate::blob::scan(file.as_ref(), path, number)?
    } else {
        crate::blob::scan_open(file.as_ref(), path, number)?
    };
    writeln!(out, "blob file {}: {} bytes", path.display(), len).map_err(out_err(path))?;
    let mut line = Vec::new();
    for r in &listing.records {
        line.clear();
        let ks = crate::key::keyspace_of(&r.tree_key);
        let user_key = r.tree_key.get(crate::key::KEYSPACE_ID_LEN..).unwrap_or(&[]);
        line.extend_from_slice(format!("ks {ks} ").as_bytes());
        escape(user_key, &mut line);
        let p = &r.pointer;
        line.extend_from_slice(
            format!("\toffset {} length {} crc {:08x}\n", p.offset, p.len, p.crc).as_bytes(),
        );
        out.write_all(&line).map_err(out_err(path))?;
    }
    if sealed {
        writeln!(
            out,
            "footer: {} records, {} value bytes",
            listing.footer_records, listing.footer_value_bytes
        )
    } else {
        writeln!(
            out,
            "no footer (written at commit, not yet sealed; the WAL holds its pointers): \
             {} records, {} value bytes",
            listing.footer_records, listing.footer_value_bytes
        )
    }
    .map_err(out_err(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::MemFs;
    use crate::{Db, Options};

    /// The names of `dir`'s files of `kind`.
    fn files(fs: &MemFs, dir: &Path, kind: FileKind) -> Vec<std::path::PathBuf> {
        filename::list(fs, dir)
            .unwrap()
            .iter()
            .filter_map(|n| match filename::parse_file_name(n) {
                Some((k, number)) if k == kind => Some(filename::path(dir, k, number)),
                _ => None,
            })
            .collect()
    }

    fn dump(
        f: fn(&dyn FileSystem, &Path, &mut dyn Write) -> Result<()>,
        fs: &MemFs,
        path: &Path,
    ) -> String {
        let mut out = Vec::new();
        f(fs, path, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn dumps_name_what_the_files_hold() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        let opts = Options {
            fs: Arc::new(fs.clone()),
            ..Options::default()
        };
        let db = Db::open(dir, opts).unwrap();
        db.put(b"apple\tpie", b"red\n").unwrap();
        db.flush().unwrap();
        db.put(b"banana", b"yellow").unwrap();

        let tables = files(&fs, dir, FileKind::Table);
        assert_eq!(tables.len(), 1, "{tables:?}");
        let table = dump(dump_table, &fs, &tables[0]);
        assert!(
            table.contains("ks 0 apple\\tpie @1 Put\tred\\n\n"),
            "{table}"
        );

        let wal = files(&fs, dir, FileKind::Wal).pop().unwrap();
        let wal = dump(dump_wal, &fs, &wal);
        assert!(
            wal.contains("record 0: ") && wal.contains("seqnos 2..3, 1 operations"),
            "{wal}"
        );

        let manifest = files(&fs, dir, FileKind::Manifest).pop().unwrap();
        let manifest = dump(dump_manifest, &fs, &manifest);
        assert!(manifest.starts_with("edit 0: "), "{manifest}");
        let table_number = tables[0]
            .file_name()
            .and_then(|n| filename::parse_file_name(n.to_str()?))
            .map(|(_, n)| n)
            .unwrap();
        let listed = format!("new_files: [(0, FileMeta {{ number: {table_number},");
        assert!(manifest.contains(&listed), "{manifest}");
        assert!(manifest.contains("\nend at offset "), "{manifest}");
        db.close().unwrap();
    }
}
