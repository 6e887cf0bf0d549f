//! Property tests of every public decoder of on-disk bytes: (a) arbitrary
//! bytes never make one panic, and (b) whatever decodes encodes back.
//!
//! Canonical encodings (decode then encode gives the same bytes): the table
//! footer, the WAL/manifest file header. Non-canonical ones (decode, encode,
//! decode gives an equal value): version edits (tags in any order, a repeated
//! field, overlong varints), block handles (overlong varints), properties
//! (counters past the known ones ignored), blocks
//! (the writer's restart interval and shared-prefix lengths are choices).
//!
//! The WAL batch record and the block trailer decoders are private; their
//! properties are unit tests beside them (`batch.rs`, `table/compress.rs`).
//!
//! Blob pointers are canonical when they decode; blob files are checked by
//! `scan` (header, every record's checksums, footer): a file the writer made
//! lists what was added, and damaged or arbitrary bytes are an error or a
//! listing, never a panic. The filter (a blocked filter) is checked when a
//! table opens: arbitrary bytes never panic, and a built one matches every
//! key added to it.

#![allow(clippy::indexing_slicing)]

use lamina::blob::{self, BlobPointer, BlobWriter};
use lamina::fs::{FileSystem, MemFs};
use lamina::iter::InternalIterator;
use lamina::key;
use lamina::manifest::{FileMeta, Lifetime, VersionEdit, NUM_LEVELS};
use lamina::table::{
    Block, BlockBuilder, BlockHandle, BlockedBloom, BloomBuilder, Footer, Properties, FOOTER_LEN,
    TABLE_VERSION,
};
use lamina::wal::{
    LogReader, LogWriter, Origin, FILE_HEADER_LEN, MANIFEST_MAGIC, WAL_HEADER_LEN, WAL_MAGIC,
};
use proptest::prelude::*;
use std::path::Path;
use std::sync::Arc;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

// ---- version edit ------------------------------------------------------

fn internal_key() -> impl Strategy<Value = Vec<u8>> {
    (any::<u32>(), bytes(12), 0..=key::MAX_SEQNO, 0u8..3).prop_map(|(ks, user, seqno, kind)| {
        key::internal_key(&key::tree_key(ks, &user), seqno, kind)
    })
}

fn file_meta() -> impl Strategy<Value = (usize, Arc<FileMeta>)> {
    (
        0..NUM_LEVELS,
        (any::<u64>(), any::<u64>(), any::<u64>()),
        internal_key(),
        internal_key(),
        (any::<u64>(), any::<u64>()),
    )
        .prop_map(
            |(level, (number, size, entries), smallest, largest, (lo, hi))| {
                let meta = FileMeta {
                    number,
                    size,
                    smallest,
                    largest,
                    smallest_seqno: lo,
                    largest_seqno: hi,
                    entries,
                };
                (level, Arc::new(meta))
            },
        )
}

fn version_edit() -> impl Strategy<Value = VersionEdit> {
    (base_version_edit(), blob_fields()).prop_map(|(e, (new_blobs, deleted_blobs, blob_dead))| {
        VersionEdit {
            new_blobs,
            deleted_blobs,
            blob_dead,
            ..e
        }
    })
}

/// Tags 12-14: blob files added and removed, dead bytes.
#[allow(clippy::type_complexity)]
fn blob_fields(
) -> impl Strategy<Value = (Vec<Arc<lamina::blob::BlobMeta>>, Vec<u64>, Vec<(u64, u64)>)> {
    (
        prop::collection::vec(
            (any::<[u64; 4]>(), bytes(8), bytes(8)).prop_map(
                |([number, size, records, value_bytes], smallest, largest)| {
                    Arc::new(lamina::blob::BlobMeta {
                        number,
                        size,
                        records,
                        value_bytes,
                        smallest,
                        largest,
                    })
                },
            ),
            0..3,
        ),
        prop::collection::vec(any::<u64>(), 0..3),
        prop::collection::vec(any::<(u64, u64)>(), 0..3),
    )
}

fn base_version_edit() -> impl Strategy<Value = VersionEdit> {
    (
        (
            any::<Option<u64>>(),
            any::<Option<u64>>(),
            any::<Option<u64>>(),
        ),
        prop::collection::vec(file_meta(), 0..3),
        prop::collection::vec((0..NUM_LEVELS, any::<u64>()), 0..3),
        prop::collection::vec((any::<u32>(), ".{0,12}"), 0..3),
        prop::collection::vec(any::<u32>(), 0..3),
        any::<Option<u32>>(),
        any::<Option<[u64; 5]>>(),
        any::<Option<u128>>(),
        prop::collection::vec(any::<u64>(), 0..3),
    )
        .prop_map(
            |((log, next, last), new, deleted, created, dropped, ks_id, life, identity, wals)| {
                VersionEdit {
                    log_number: log,
                    next_file_number: next,
                    last_seqno: last,
                    new_files: new,
                    deleted_files: deleted,
                    keyspaces_created: created,
                    keyspaces_dropped: dropped,
                    next_keyspace_id: ks_id,
                    lifetime: life.map(|[a, b, c, d, e]| Lifetime {
                        user_bytes: a,
                        wal_bytes: b,
                        flush_bytes: c,
                        compaction_read_bytes: d,
                        compaction_written_bytes: e,
                    }),
                    identity,
                    wals_started: wals,
                    ..Default::default()
                }
            },
        )
}

/// Arbitrary bytes that often start like a version edit: a known tag, then
/// anything.
fn edit_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        bytes(64),
        (1u8..=14, bytes(64)).prop_map(|(tag, mut rest)| {
            rest.insert(0, tag);
            rest
        }),
        (version_edit(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(e, at, b)| {
            let mut enc = e.encode();
            if !enc.is_empty() {
                let i = at.index(enc.len());
                enc[i] ^= b;
            }
            enc
        }),
    ]
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn version_edit_round_trips(e in version_edit()) {
        let enc = e.encode();
        prop_assert_eq!(VersionEdit::decode(&enc), Ok(e));
    }

    #[test]
    fn version_edit_decode_never_panics_and_what_decodes_re_encodes(b in edit_like_bytes()) {
        if let Ok(e) = VersionEdit::decode(&b) {
            let again = VersionEdit::decode(&e.encode());
            prop_assert_eq!(again, Ok(e));
        }
    }
}

// ---- footer and block handle ------------------------------------------

fn handle() -> impl Strategy<Value = BlockHandle> {
    (any::<u64>(), any::<u64>()).prop_map(|(offset, size)| BlockHandle { offset, size })
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn footer_round_trips(
        filter in handle(),
        properties in handle(),
        index in handle(),
    ) {
        let f = Footer { filter, properties, index, version: TABLE_VERSION };
        let enc = f.encode();
        prop_assert_eq!(Footer::decode(&enc, Path::new("t.sst"), 0).ok(), Some(f));
    }

    /// Canonical: a footer that decodes is exactly the bytes it encodes to.
    #[test]
    fn footer_decode_never_panics_and_is_canonical(
        f in (handle(), handle(), handle()),
        mutate in prop::option::of((0..FOOTER_LEN, 1u8..)),
        len in prop::option::of(0usize..80),
    ) {
        let footer = Footer { filter: f.0, properties: f.1, index: f.2, version: TABLE_VERSION };
        let mut b = footer.encode().to_vec();
        if let Some((at, x)) = mutate {
            b[at] ^= x;
        }
        if let Some(len) = len {
            b.resize(len, 0xa5);
        }
        if let Ok(d) = Footer::decode(&b, Path::new("t.sst"), 7) {
            prop_assert_eq!(d.encode().to_vec(), b);
        }
    }

    #[test]
    fn footer_decode_of_arbitrary_bytes_never_panics(b in bytes(80)) {
        if let Ok(d) = Footer::decode(&b, Path::new("t.sst"), 0) {
            prop_assert_eq!(d.encode().to_vec(), b);
        }
    }

    #[test]
    fn block_handle_round_trips(h in handle()) {
        let mut enc = Vec::new();
        h.encode_to(&mut enc);
        prop_assert_eq!(BlockHandle::decode(&enc), Some(h));
    }

    /// Not canonical (a varint may be overlong): the value round-trips.
    #[test]
    fn block_handle_decode_never_panics(b in bytes(24)) {
        if let Some(h) = BlockHandle::decode(&b) {
            let mut enc = Vec::new();
            h.encode_to(&mut enc);
            prop_assert_eq!(BlockHandle::decode(&enc), Some(h));
        }
    }
}

// ---- properties --------------------------------------------------------

fn properties_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        bytes(120),
        (0u32..16, bytes(8 * 16)).prop_map(|(count, body)| {
            let mut b = count.to_le_bytes().to_vec();
            b.extend(body.iter().take(8 * count as usize));
            b
        }),
    ]
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn properties_round_trip(c in any::<[u64; 13]>()) {
        let p = Properties {
            entries: c[0],
            deletes: c[1],
            merges: c[2],
            key_bytes: c[3],
            value_bytes: c[4],
            data_blocks: c[5],
            data_stored_bytes: c[6],
            data_raw_bytes: c[7],
            smallest_seqno: c[8],
            largest_seqno: c[9],
            identity: u128::from(c[10]) | (u128::from(c[11]) << 64),
            file_number: c[12],
            writer: None,
        };
        let enc = p.encode();
        prop_assert_eq!(Properties::decode(&enc, Path::new("t.sst"), 0).ok(), Some(p));
    }

    /// Not canonical (unknown counters are skipped): the value round-trips.
    #[test]
    fn properties_decode_never_panics(b in properties_like_bytes()) {
        if let Ok(p) = Properties::decode(&b, Path::new("t.sst"), 0) {
            let again = Properties::decode(&p.encode(), Path::new("t.sst"), 0);
            prop_assert_eq!(again.ok(), Some(p));
        }
    }
}

// ---- data and index blocks --------------------------------------------

/// Keys and values of a block, in order.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Every entry of `block` in order, and the iterator's status.
fn entries(block: &Arc<Block>) -> (Entries, bool) {
    let mut it = block.iter();
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() && out.len() <= block.data().len() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    (out, it.status().is_ok())
}

/// Moves every way over `block`; none may panic.
fn wander(block: &Arc<Block>, target: &[u8]) {
    let mut it = block.iter();
    it.seek_to_last();
    let mut steps = 0;
    while it.valid() && steps <= block.data().len() {
        let _ = (it.key(), it.value());
        it.prev();
        steps += 1;
    }
    it.seek(target);
    if it.valid() {
        it.next();
    }
    it.seek_for_prev(target);
    if it.valid() {
        it.prev();
    }
    let _ = it.status();
}

fn block_of(data: Vec<u8>) -> lamina::Result<Arc<Block>> {
    Block::new(data, Arc::from(Path::new("t.sst")), 0).map(Arc::new)
}

fn sorted_entries() -> impl Strategy<Value = Entries> {
    prop::collection::btree_map(internal_key(), bytes(20), 1..40).prop_map(|m| {
        let mut v: Vec<_> = m.into_iter().collect();
        v.sort_by(|a, b| key::compare(&a.0, &b.0));
        v.dedup_by(|a, b| key::compare(&a.0, &b.0).is_eq());
        v
    })
}

fn built_block(entries: &[(Vec<u8>, Vec<u8>)], restart_interval: usize) -> Vec<u8> {
    let mut b = BlockBuilder::new(restart_interval);
    for (k, v) in entries {
        b.add(k, v);
    }
    b.finish().to_vec()
}

/// Arbitrary bytes, and built blocks with a byte changed.
fn block_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        bytes(200),
        (
            sorted_entries(),
            1usize..20,
            any::<prop::sample::Index>(),
            any::<u8>()
        )
            .prop_map(|(e, interval, at, x)| {
                let mut b = built_block(&e, interval);
                let i = at.index(b.len());
                b[i] ^= x;
                b
            }),
    ]
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn block_round_trips(e in sorted_entries(), interval in 1usize..20) {
        let block = block_of(built_block(&e, interval)).expect("built block");
        let (got, ok) = entries(&block);
        prop_assert!(ok);
        prop_assert_eq!(got, e);
    }

    /// Not canonical (restart interval and shared prefixes are the writer's
    /// choice): the entries decoded from a block re-encode into a block that
    /// decodes to the same entries.
    #[test]
    fn block_decode_never_panics_and_what_decodes_re_encodes(
        b in block_like_bytes(),
        target in bytes(24),
    ) {
        if let Ok(block) = block_of(b) {
            wander(&block, &target);
            let (got, ok) = entries(&block);
            if ok && !got.is_empty() {
                let again = block_of(built_block(&got, 16)).expect("rebuilt block");
                prop_assert_eq!(entries(&again), (got, true));
            }
        }
    }

    /// An index block is a block with restart interval 1 whose values are
    /// block handles.
    #[test]
    fn index_entries_decode_never_panics(b in block_like_bytes()) {
        if let Ok(block) = block_of(b) {
            for (_, v) in entries(&block).0 {
                if let Some(h) = BlockHandle::decode(&v) {
                    let _ = h.end_with_trailer();
                }
            }
        }
    }
}

// ---- WAL and manifest framing -----------------------------------------

/// Every record of the log at `path`, stopping at the first error.
fn read_all(fs: &MemFs, path: &Path, magic: &[u8; 8]) -> lamina::Result<Vec<Vec<u8>>> {
    let mut r = LogReader::open(fs, path, magic)?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}

fn write_file(fs: &MemFs, path: &Path, bytes: &[u8]) {
    let mut f = fs.create(path).expect("create");
    f.append(bytes).expect("append");
}

/// A log as the writer writes it: a WAL segment (`WAL_MAGIC`, segment 7
/// of a database) or a manifest.
fn written_log(magic: &[u8; 8], records: &[Vec<u8>]) -> Vec<u8> {
    let fs = MemFs::new();
    let path = Path::new("/log");
    let mut w = if magic == WAL_MAGIC {
        let origin = Origin {
            identity: 0x0123_4567_89ab_cdef_0011_2233_4455_6677,
            number: 7,
        };
        LogWriter::create_wal(&fs, path, origin).expect("create")
    } else {
        LogWriter::create(&fs, path, magic).expect("create")
    };
    for r in records {
        w.add_record(r);
    }
    w.flush().expect("flush");
    let mut b = fs.read_all(path).expect("read");
    // A segment runs on in zeros it was filled with ahead of its records.
    b.truncate(w.len() as usize);
    b
}

/// Records from empty to several 32 KiB blocks long.
fn records() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop_oneof![
            4 => bytes(100),
            1 => (0usize..80_000).prop_map(|n| (0..n).map(|i| (i % 251) as u8).collect()),
        ],
        0..8,
    )
}

/// A log written by the writer with one byte changed, or cut short, or
/// arbitrary bytes after a good header.
fn log_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        bytes(200),
        bytes(200).prop_map(|tail| {
            let mut b = written_log(WAL_MAGIC, &[]);
            b.extend(tail);
            b
        }),
        (
            records(),
            any::<prop::sample::Index>(),
            any::<u8>(),
            any::<bool>()
        )
            .prop_map(|(recs, at, x, cut)| {
                let mut b = written_log(WAL_MAGIC, &recs);
                let i = at.index(b.len());
                if cut {
                    b.truncate(i);
                } else {
                    b[i] ^= x;
                }
                b
            }),
    ]
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn log_round_trips(recs in records(), manifest in any::<bool>()) {
        let magic = if manifest { MANIFEST_MAGIC } else { WAL_MAGIC };
        let fs = MemFs::new();
        let path = Path::new("/log");
        write_file(&fs, path, &written_log(magic, &recs));
        let mut r = LogReader::open(&fs, path, magic).expect("open");
        let mut got = Vec::new();
        while let Some(rec) = r.next_record().expect("read") {
            got.push(rec);
        }
        prop_assert_eq!(got, recs);
        prop_assert_eq!(r.torn_tail(), None);
    }

    /// Whatever a damaged log yields is a prefix of what was written, or of
    /// arbitrary bytes, without a panic.
    #[test]
    fn log_reader_never_panics(b in log_like_bytes()) {
        let fs = MemFs::new();
        let path = Path::new("/log");
        write_file(&fs, path, &b);
        let _ = read_all(&fs, path, WAL_MAGIC);
        let _ = read_all(&fs, path, MANIFEST_MAGIC);
    }

    /// Canonical: the only header that opens is the one the writer writes
    /// for that magic: a changed byte (magic, version, checksum, or a WAL
    /// segment's identity or number) is corruption at offset 0.
    #[test]
    fn file_header_is_canonical(
        mutate in prop::option::of((0..WAL_HEADER_LEN, 1u8..)),
        manifest in any::<bool>(),
    ) {
        let magic = if manifest { MANIFEST_MAGIC } else { WAL_MAGIC };
        let good = written_log(magic, &[]);
        let len = if manifest { FILE_HEADER_LEN } else { WAL_HEADER_LEN };
        prop_assert_eq!(good.len(), len);
        let mut b = good.clone();
        if let Some((at, x)) = mutate {
            b[at % len] ^= x;
        }
        let fs = MemFs::new();
        let path = Path::new("/log");
        write_file(&fs, path, &b);
        match LogReader::open(&fs, path, magic) {
            Ok(mut r) => {
                prop_assert!(b == good, "a changed header opened");
                prop_assert_eq!(r.next_record().expect("read"), None);
                prop_assert_eq!(r.torn_tail(), None);
            }
            Err(e) => {
                prop_assert!(b != good, "{}", e);
                prop_assert!(matches!(e, lamina::Error::Corruption { offset: 0, .. }), "{}", e);
            }
        }
    }
}

// ---- filter ------------------------------------------------------------

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn blocked_filter_of_arbitrary_bytes_never_panics(
        b in prop_oneof![bytes(300), (1usize..5, bytes(8)).prop_map(|(m, tail)| {
            // The right length, arbitrary probe count.
            let mut b = vec![0xa5u8; 64 * m];
            b.extend(tail.into_iter().take(2));
            b
        })],
        h in any::<u64>(),
    ) {
        if let Ok(f) = BlockedBloom::new(&b) {
            prop_assert!(f.is_empty() || f.len() == b.len());
            let _ = f.may_contain_hash(h);
        }
    }

    #[test]
    fn built_blocked_filter_matches_every_key_added(
        keys in prop::collection::btree_set(bytes(16), 1..100),
        bits_per_key in 1u32..40,
    ) {
        let mut b = BloomBuilder::new();
        for k in &keys {
            b.add(k);
        }
        let bytes = b.build(bits_per_key);
        let f = BlockedBloom::new(&bytes).expect("the builder's filter opens");
        prop_assert_eq!(f.len(), bytes.len());
        for k in &keys {
            let h = xxhash_rust::xxh3::xxh3_64(k);
            prop_assert!(f.may_contain_hash(h), "false negative for {:02x?}", k);
        }
    }
}

// ---- blob pointer and blob file ---------------------------------------

fn blob_pointer() -> impl Strategy<Value = BlobPointer> {
    (
        any::<u64>(),
        any::<u64>(),
        0..=lamina::MAX_VALUE_LEN as u32,
        any::<u32>(),
    )
        .prop_map(|(file, offset, len, crc)| BlobPointer {
            file,
            offset,
            len,
            crc,
        })
}

/// A blob file the writer made: its bytes and what was added.
fn written_blob(records: &[(Vec<u8>, Vec<u8>)]) -> (Vec<u8>, Vec<BlobPointer>) {
    let fs = MemFs::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).expect("dir");
    let mut w = BlobWriter::create(&fs, dir, 7).expect("create");
    let pointers = records
        .iter()
        .map(|(k, v)| w.add(k, v).expect("add"))
        .collect();
    let path = w.path().to_path_buf();
    w.finish().expect("finish");
    (fs.read_all(&path).expect("read"), pointers)
}

fn scan_bytes(b: &[u8]) -> lamina::Result<blob::BlobListing> {
    let fs = MemFs::new();
    let path = Path::new("/000007.blob");
    write_file(&fs, path, b);
    let file = fs.open(path).expect("open");
    blob::scan(file.as_ref(), path, 7)
}

fn blob_records() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    prop::collection::vec((bytes(16), bytes(300)), 0..6)
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn blob_pointer_round_trips(p in blob_pointer()) {
        prop_assert_eq!(BlobPointer::decode(&p.encode()), Ok(p));
    }

    #[test]
    fn blob_pointer_decode_never_panics_and_is_canonical(b in bytes(32)) {
        if let Ok(p) = BlobPointer::decode(&b) {
            // Overlong varints would decode too; what decodes must at least
            // decode again to the same pointer.
            prop_assert_eq!(BlobPointer::decode(&p.encode()), Ok(p));
        }
    }

    #[test]
    fn blob_file_round_trips(recs in blob_records()) {
        let (b, pointers) = written_blob(&recs);
        let listing = scan_bytes(&b).expect("scan of a file the writer made");
        prop_assert_eq!(listing.footer_records, recs.len() as u64);
        let keys: Vec<Vec<u8>> = listing.records.iter().map(|r| r.tree_key.clone()).collect();
        let want: Vec<Vec<u8>> = recs.iter().map(|(k, _)| k.clone()).collect();
        prop_assert_eq!(keys, want);
        let got: Vec<BlobPointer> = listing.records.iter().map(|r| r.pointer).collect();
        prop_assert_eq!(got, pointers);
    }

    /// Every byte of a blob file is under a checksum or is a magic number:
    /// one changed byte or a cut is an error naming the damage, and
    /// arbitrary bytes are an error or a listing, never a panic.
    #[test]
    fn blob_file_scan_never_panics_and_sees_damage(
        recs in blob_records(),
        at in any::<prop::sample::Index>(),
        x in 1u8..,
        how in 0u8..3,
        junk in bytes(200),
    ) {
        let (mut b, _) = written_blob(&recs);
        match how {
            0 => {
                let i = at.index(b.len());
                b[i] ^= x;
                prop_assert!(scan_bytes(&b).is_err(), "byte {} changed, scan passed", i);
            }
            1 => {
                b.truncate(at.index(b.len()));
                prop_assert!(scan_bytes(&b).is_err(), "cut to {} bytes, scan passed", b.len());
            }
            _ => {
                let _ = scan_bytes(&junk);
            }
        }
    }
}
