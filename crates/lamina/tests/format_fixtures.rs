//! Databases of the last released format, format 1
//! (`tests/fixtures/format1/`), open in this build with every key, value and
//! keyspace they were written with; a file of a layout only a pre-release
//! build wrote is refused in words. A fixture is never regenerated: see
//! `tests/fixtures/README.md` and docs/format.md#format-1--the-first-release.

#![allow(clippy::indexing_slicing)]

use lamina::coding::{masked_crc, Decoder};
use lamina::filename::{parse_file_name, FileKind};
use lamina::fs::RealFs;
use lamina::iter::InternalIterator;
use lamina::key;
use lamina::manifest::VersionEdit;
use lamina::table::{Block, BlockHandle, Footer, KeyBuf, FOOTER_LEN};
use lamina::wal::{LogReader, MANIFEST_MAGIC, WAL_HEADER_LEN, WAL_MAGIC};
use lamina::{Db, Error, Options};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Keyspace name (empty: default) to its keys and values.
type Contents = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// The fixtures of the last released format: every database in it must
/// open in this build.
fn released() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format1")
}

/// Every fixture directory: `tests/fixtures/format1/NAME/`.
fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in std::fs::read_dir(released()).expect("read fixtures") {
        let f = f.expect("entry").path();
        if f.join("db").is_dir() {
            out.push(f);
        }
    }
    out.sort();
    out
}

fn unhex(s: &str) -> Vec<u8> {
    s.as_bytes()
        .chunks(2)
        .map(|pair| {
            assert_eq!(pair.len(), 2, "odd hex {s:?}");
            u8::from_str_radix(std::str::from_utf8(pair).expect("ascii"), 16).expect("hex")
        })
        .collect()
}

fn expected(fixture: &Path) -> (Contents, Vec<String>) {
    let tsv = std::fs::read_to_string(fixture.join("expected.tsv")).expect("expected.tsv");
    let mut want = Contents::new();
    want.entry(String::new()).or_default();
    for line in tsv.lines().filter(|l| !l.starts_with('#')) {
        let mut f = line.split('\t');
        let (ks, k, v) = (f.next(), f.next(), f.next());
        let (Some(ks), Some(k), Some(v), None) = (ks, k, v, f.next()) else {
            panic!("bad line in expected.tsv: {line:?}");
        };
        want.entry(ks.to_string())
            .or_default()
            .insert(unhex(k), unhex(v));
    }
    let names = std::fs::read_to_string(fixture.join("keyspaces.txt")).expect("keyspaces.txt");
    let names: Vec<String> = names
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    for n in &names {
        want.entry(n.clone()).or_default();
    }
    (want, names)
}

fn shape(fixture: &Path) -> Vec<(usize, usize)> {
    let tsv = std::fs::read_to_string(fixture.join("shape.tsv")).expect("shape.tsv");
    tsv.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (level, tables) = l.split_once('\t').expect("level\ttables");
            (
                level.parse().expect("level"),
                tables.parse().expect("tables"),
            )
        })
        .collect()
}

/// Everything the database holds, read by iteration.
fn contents(db: &Db) -> Contents {
    let mut got = Contents::new();
    let mut names = db.keyspaces();
    names.push(String::new());
    for name in names {
        let ks = if name.is_empty() {
            db.default_keyspace()
        } else {
            db.open_keyspace(&name).expect("open keyspace")
        };
        let map = ks
            .iter()
            .collect::<Result<BTreeMap<_, _>, _>>()
            .expect("iterate");
        got.insert(name, map);
    }
    got
}

/// The database agrees with the expectation by iteration and by point reads.
fn assert_holds(db: &Db, want: &Contents, names: &[String], fixture: &Path) {
    let mut live = db.keyspaces();
    live.sort();
    let mut names = names.to_vec();
    names.sort();
    assert_eq!(live, names, "keyspaces of {}", fixture.display());
    let got = contents(db);
    for (ks, map) in want {
        let got_map = got.get(ks).expect("keyspace present");
        for (k, v) in map {
            assert_eq!(
                got_map.get(k),
                Some(v),
                "{}: keyspace {ks:?} key {k:02x?}",
                fixture.display()
            );
        }
        assert_eq!(
            got_map.len(),
            map.len(),
            "{}: keyspace {ks:?} holds keys it should not",
            fixture.display()
        );
        let handle = if ks.is_empty() {
            db.default_keyspace()
        } else {
            db.open_keyspace(ks).expect("open keyspace")
        };
        for (k, v) in map {
            assert_eq!(
                handle.get(k).expect("get").as_ref(),
                Some(v),
                "get {k:02x?}"
            );
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

fn file_kinds(db: &Path) -> Vec<String> {
    let mut kinds: Vec<String> = std::fs::read_dir(db)
        .expect("read db")
        .map(|e| {
            let name = e.expect("entry").file_name().to_string_lossy().to_string();
            match name.rsplit_once('.') {
                Some((_, ext)) => ext.to_string(),
                None => name.split('-').next().unwrap_or("").to_string(),
            }
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

#[test]
fn there_are_fixtures_and_they_hold_every_file_kind() {
    let all = fixtures();
    let names: Vec<_> = all.iter().filter_map(|f| f.file_name()).collect();
    assert_eq!(
        names,
        ["mixed", "plain", "wal_blobs"],
        "fixtures found: {all:?}"
    );
    for f in &all {
        let kinds = file_kinds(&f.join("db"));
        for kind in ["CURRENT", "LOCK", "MANIFEST", "sst", "wal"] {
            assert!(
                kinds.iter().any(|k| k == kind),
                "{} has no {kind} file: {kinds:?}",
                f.display()
            );
        }
    }
}

#[test]
fn every_fixture_opens_read_only_with_its_contents_and_shape() {
    for fixture in fixtures() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("db");
        copy_dir(&fixture.join("db"), &path);
        let (want, names) = expected(&fixture);
        let opts = Options {
            read_only: true,
            ..Options::default()
        };
        let db = Db::open(&path, opts).expect("open read-only");
        assert_holds(&db, &want, &names, &fixture);
        let levels: Vec<(usize, usize)> = db
            .stats()
            .levels
            .iter()
            .filter(|l| l.tables > 0)
            .map(|l| (l.level, l.tables))
            .collect();
        assert_eq!(levels, shape(&fixture), "{}", fixture.display());
        let report = db.check().expect("check");
        assert!(report.is_ok(), "{}: {report:?}", fixture.display());
        db.close().expect("close");
    }
}

#[test]
fn every_fixture_opens_read_write_takes_writes_and_reopens() {
    for fixture in fixtures() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("db");
        copy_dir(&fixture.join("db"), &path);
        let (mut want, mut names) = expected(&fixture);
        let db = Db::open(&path, Options::default()).expect("open read-write");
        assert_holds(&db, &want, &names, &fixture);
        let report = db.check().expect("check");
        assert!(report.is_ok(), "{}: {report:?}", fixture.display());

        // Write more: overwrite the first key, delete the last, and add a
        // keyspace under a name that may once have been dropped.
        let default = want.entry(String::new()).or_default();
        let first = default.keys().next().cloned().expect("a key");
        db.put(&first, b"written by today's code").expect("put");
        default.insert(first, b"written by today's code".to_vec());
        let last = default.keys().next_back().cloned().expect("a key");
        db.delete(&last).expect("delete");
        default.remove(&last);
        let ks = db.keyspace("dropped").expect("keyspace");
        assert_eq!(
            ks.iter().count(),
            0,
            "a dropped keyspace's entries came back"
        );
        ks.put(b"new", b"value").expect("put");
        want.entry("dropped".into())
            .or_default()
            .insert(b"new".to_vec(), b"value".to_vec());
        names.push("dropped".into());
        db.flush().expect("flush");
        db.compact().expect("compact");
        assert_holds(&db, &want, &names, &fixture);
        db.close().expect("close");

        let db = Db::open(&path, Options::default()).expect("reopen");
        assert_holds(&db, &want, &names, &fixture);
        let report = db.check().expect("check");
        assert!(report.is_ok(), "{}: {report:?}", fixture.display());
        db.close().expect("close");
    }
}

/// The block at `h` of `table`, decompressed, and its compression byte.
fn stored_block(table: &[u8], h: BlockHandle) -> (Vec<u8>, u8) {
    let (off, size) = (h.offset as usize, h.size as usize);
    let stored = &table[off..off + size];
    let kind = table[off + size];
    let raw = match kind {
        0 => stored.to_vec(),
        1 => lz4_flex::block::decompress_size_prepended(stored).expect("lz4"),
        2 => zstd::decode_all(stored).expect("zstd"),
        k => panic!("compression byte {k}"),
    };
    (raw, kind)
}

/// What the files of one fixture show, read directly (not through `Db`).
#[derive(Default)]
struct Features {
    compressions: BTreeSet<u8>,
    filters: BTreeSet<bool>,
    wal_bytes: u64,
    edits: usize,
    lifetime_edits: usize,
    keyspaces_dropped: usize,
    /// Blob files a crash or a close left without a footer (written at
    /// commit, their pointers only in the WAL).
    open_blob_files: usize,
    /// Blob files a WAL segment's marks say were synced.
    blob_marks: usize,
}

/// Each file of the database directory `db`, with its kind when its name
/// is one lamina gives.
fn files(db: &Path) -> Vec<(PathBuf, Option<FileKind>)> {
    std::fs::read_dir(db)
        .expect("read db")
        .map(|e| {
            let path = e.expect("entry").path();
            let name = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .to_string();
            (path, parse_file_name(&name).map(|(k, _)| k))
        })
        .collect()
}

fn features(db: &Path) -> Features {
    let mut f = Features::default();
    for (path, kind) in files(db) {
        match kind {
            Some(FileKind::Table) => data_blocks(&path, |footer, _, kind| {
                f.filters.insert(footer.filter.size > 0);
                f.compressions.insert(kind);
            }),
            Some(FileKind::Blob) => {
                let b = std::fs::read(&path).expect("read blob file");
                f.open_blob_files += usize::from(!b.ends_with(b"LAMNABLB") || b.len() < 44);
            }
            Some(FileKind::Wal) => {
                let mut r = LogReader::open(&RealFs, &path, WAL_MAGIC).expect("wal");
                while r.next_record().expect("record").is_some() {}
                f.wal_bytes += r.valid_end() - WAL_HEADER_LEN as u64;
                f.blob_marks += r.blob_synced().len();
            }
            Some(FileKind::Manifest) => {
                let mut r = LogReader::open(&RealFs, &path, MANIFEST_MAGIC).expect("manifest");
                while let Some(rec) = r.next_record().expect("record") {
                    let e = VersionEdit::decode(&rec).expect("edit");
                    f.edits += 1;
                    f.lifetime_edits += usize::from(e.lifetime.is_some());
                    f.keyspaces_dropped += e.keyspaces_dropped.len();
                }
            }
            _ => {}
        }
    }
    f
}

/// Calls `f` with the footer of the table at `path` and each of its data
/// blocks, decompressed, with its compression byte.
fn data_blocks(path: &Path, mut f: impl FnMut(&Footer, Vec<u8>, u8)) {
    let t = std::fs::read(path).expect("read table");
    let footer = Footer::decode(&t[t.len() - FOOTER_LEN..], path, 0).expect("footer");
    let (index, _) = stored_block(&t, footer.index);
    let index = Arc::new(Block::new(index, Arc::from(path), 0).expect("index"));
    let mut it = index.iter();
    it.seek_to_first();
    while it.valid() {
        let h = BlockHandle::decode(it.value()).expect("handle");
        let (raw, kind) = stored_block(&t, h);
        f(&footer, raw, kind);
        it.next();
    }
    it.status().expect("index entries");
}

/// The entries of a data block read straight from its bytes (docs/format.md#block), not through `Block`: each key, value and
/// whether it is a restart point.
fn entries_of_hashed_block(raw: &[u8]) -> Vec<(Vec<u8>, Vec<u8>, bool)> {
    let n = raw.len();
    let restarts = u32::from_le_bytes(raw[n - 4..].try_into().expect("4 bytes")) as usize;
    let buckets = usize::from(u16::from_le_bytes([raw[n - 6], raw[n - 5]]));
    let array = n - 6 - buckets - 4 * restarts;
    let points: BTreeSet<usize> = (0..restarts)
        .map(|i| {
            u32::from_le_bytes(raw[array + 4 * i..array + 4 * i + 4].try_into().expect("4"))
                as usize
        })
        .collect();
    let (mut out, mut pos, mut key) = (Vec::new(), 0, Vec::<u8>::new());
    while pos < array {
        let mut d = Decoder::new(&raw[pos..array]);
        let shared = d.varint32().expect("shared") as usize;
        let unshared = d.varint32().expect("unshared") as usize;
        let value_len = d.varint32().expect("value length") as usize;
        key.truncate(shared);
        key.extend_from_slice(d.bytes(unshared).expect("key"));
        let value = d.bytes(value_len).expect("value").to_vec();
        out.push((key.clone(), value, points.contains(&pos)));
        pos += d.position();
    }
    out
}

/// The fixtures' data blocks answer every point lookup through their hash
/// index (docs/format.md#data-block-hash-index) as a scan of their entries
/// does: each tree key of each data block of the fixtures' tables, at each
/// of its seqnos, one below each, and the newest. Among them, keys whose
/// first entry is a restart point, answered through their bucket (a
/// bucket names the interval of the key's first entry, scanned from its
/// restart point).
#[test]
fn fixture_blocks_answer_hash_lookups_as_a_scan_does() {
    let (mut lookups, mut from_own_restart) = (0, 0);
    for fixture in fixtures() {
        for (path, kind) in files(&fixture.join("db")) {
            if kind != Some(FileKind::Table) {
                continue;
            }
            data_blocks(&path, |_, raw, _| {
                let entries = entries_of_hashed_block(&raw);
                let block =
                    Block::with_hash_index(raw, Arc::from(path.as_path()), 0).expect("block");
                let mut key = KeyBuf::new();
                for (i, (ikey, _, restart)) in entries.iter().enumerate() {
                    let tk = key::tree_key_of(ikey);
                    if i > 0 && key::tree_key_of(&entries[i - 1].0) == tk {
                        continue;
                    }
                    let seqnos = entries[i..]
                        .iter()
                        .take_while(|(k, _, _)| key::tree_key_of(k) == tk)
                        .map(|(k, _, _)| key::parse(k).expect("internal key").seqno);
                    let seqnos: Vec<u64> = seqnos
                        .flat_map(|s| [s, s.saturating_sub(1)])
                        .chain([key::MAX_SEQNO])
                        .collect();
                    for seqno in seqnos {
                        let target = key::seek_key_at(tk, seqno);
                        let want = entries
                            .iter()
                            .find(|(k, _, _)| key::compare(k, &target) != std::cmp::Ordering::Less)
                            .filter(|(k, _, _)| key::tree_key_of(k) == tk)
                            .map(|(_, v, _)| v.clone());
                        let h = xxhash_rust::xxh3::xxh3_64(tk);
                        let through_bucket = block
                            .hash_seek(tk, h, &target, &mut key)
                            .expect("hash lookup");
                        let found = match through_bucket {
                            Some(found) => {
                                from_own_restart += usize::from(*restart);
                                found
                            }
                            None => block
                                .seek_in_place(&target, &mut key)
                                .expect("binary search"),
                        };
                        let got = found
                            .filter(|_| key::tree_key_of(&key) == tk)
                            .map(|v| block.slice(v).to_vec());
                        assert_eq!(got, want, "{}: {tk:02x?} at {seqno}", path.display());
                        lookups += 1;
                    }
                }
            });
        }
    }
    assert!(lookups > 1000, "{lookups} lookups");
    assert!(
        from_own_restart > 100,
        "{from_own_restart} lookups through the bucket of a key at a restart point"
    );
}

/// Format 1's fixtures, taken together, hold every kind of block, tables
/// with and without a filter, a WAL with records, a manifest of several
/// edits with the lifetime counters and a dropped keyspace, a blob file
/// written at commit and left open, and a WAL segment marking a blob file's
/// sync: a later build that stops reading any of them fails here or in the
/// tests above.
#[test]
fn the_fixtures_cover_every_feature_of_format_1() {
    let fs: Vec<Features> = fixtures().iter().map(|f| features(&f.join("db"))).collect();
    let compressions: BTreeSet<u8> = fs.iter().flat_map(|f| f.compressions.clone()).collect();
    assert_eq!(
        compressions,
        BTreeSet::from([0, 1, 2]),
        "block compressions"
    );
    let filters: BTreeSet<bool> = fs.iter().flat_map(|f| f.filters.clone()).collect();
    assert_eq!(filters, BTreeSet::from([false, true]), "filters");
    assert!(fs.iter().all(|f| f.wal_bytes > 0), "a WAL with records");
    assert!(fs.iter().any(|f| f.edits >= 5), "manifest edits");
    assert!(fs.iter().all(|f| f.lifetime_edits > 0), "lifetime counters");
    assert!(
        fs.iter().any(|f| f.keyspaces_dropped > 0),
        "a dropped keyspace"
    );
    assert!(
        fs.iter().any(|f| f.open_blob_files > 0),
        "a blob file written at commit, left open"
    );
    assert!(
        fs.iter().any(|f| f.blob_marks > 0),
        "a WAL segment marking a blob file's sync"
    );
}

/// Overwrites the `u32` at `at` of the file at `path` with `version`, and
/// the `u32` at `crc_at` with the masked CRC-32C of the bytes from
/// `covered_from` to `crc_at`: a file of another version, whole.
fn set_version(path: &Path, at: usize, version: u32, covered_from: usize, crc_at: usize) {
    let mut b = std::fs::read(path).expect("read");
    b[at..at + 4].copy_from_slice(&version.to_le_bytes());
    let crc = masked_crc(&b[covered_from..crc_at]);
    b[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(path, b).expect("write");
}

/// `e` is corruption of `file` at offset 0 for the reason `words`.
fn assert_refused(e: &Error, file: &Path, words: &str) {
    match e {
        Error::Corruption {
            file: f,
            offset: 0,
            reason,
        } => {
            assert_eq!(f, file, "{e}");
            assert_eq!(reason, words, "{e}");
        }
        other => panic!(
            "expected corruption of {} at offset 0, got {other}",
            file.display()
        ),
    }
}

/// A format-1 database with one file set back to a pre-release layout — a
/// WAL segment's header to version 5, a table's footer to version 1, a
/// blob file's header to version 1, each with a correct checksum — is
/// refused in words: corruption naming the file, at offset 0.
#[test]
fn a_file_of_a_pre_release_layout_is_refused_in_words() {
    let fixture = released().join("wal_blobs");
    let ro = Options {
        read_only: true,
        ..Options::default()
    };
    let fresh = || {
        let tmp = tempfile::tempdir().expect("tempdir");
        copy_dir(&fixture.join("db"), &tmp.path().join("db"));
        tmp
    };

    // The WAL segment: its header (40 bytes, checksum over the first 36).
    let tmp = fresh();
    let wal = tmp.path().join("db/000004.wal");
    set_version(&wal, 8, 5, 0, 36);
    let words = "written by a pre-release build of lamina (WAL header version 5); \
                 this build reads format 1 only";
    for opts in [ro.clone(), Options::default()] {
        let e = Db::open(tmp.path().join("db"), opts).expect_err("open");
        assert_refused(&e, &wal, words);
    }

    // A table: its footer (the last 64 bytes, checksum over the first 52).
    let tmp = fresh();
    let table = tmp.path().join("db/000005.sst");
    let len = std::fs::metadata(&table).expect("table").len() as usize;
    let footer = len - FOOTER_LEN;
    set_version(&table, footer + 48, 1, footer, footer + 52);
    let words = "written by a pre-release build of lamina (table format version 1); \
                 this build reads format 1 only";
    for opts in [ro.clone(), Options::default()] {
        let e = match Db::open(tmp.path().join("db"), opts) {
            Err(e) => e,
            Ok(db) => db
                .iter()
                .collect::<Result<Vec<_>, _>>()
                .expect_err("a read of the table"),
        };
        assert_refused(&e, &table, words);
    }

    // A blob file: its header (16 bytes, checksum over the first 12), read
    // in whole by `check`.
    let tmp = fresh();
    let blob = tmp.path().join("db/000003.blob");
    set_version(&blob, 8, 1, 0, 12);
    let db = Db::open(tmp.path().join("db"), ro).expect("open read-only");
    let report = db.check().expect("check");
    let words = "written by a pre-release build of lamina (blob file header version 1)";
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains(words) && p.contains("000003.blob")),
        "{:?}",
        report.problems
    );
}
