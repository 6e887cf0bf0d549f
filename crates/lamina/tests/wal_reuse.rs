//! WAL segments are reused (docs/format.md#recyclable-segments):
//! a power loss at every sync point of their life — zero fill, header sync,
//! rename, manifest record, END — loses no acknowledged write and never
//! replays a record of a segment's earlier life.

use lamina::fs::{FaultFs, FaultKind, FileSystem, MemFs};
use lamina::{Batch, Db, Durability, Options};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
/// A key and the value a write that failed tried to give it.
type InFlight = Option<(Vec<u8>, Vec<u8>)>;

const DB: &str = "/reuse";

fn opts(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        fs,
        memtable_size: 2 << 10,
        block_size: 256,
        ..Options::default()
    }
}

/// A durable put.
fn put(db: &Db, key: &[u8], value: &[u8]) -> lamina::Result<()> {
    let mut b = Batch::new();
    b.put(key, value);
    db.write_with(b, Durability::Sync)
}

fn contents(db: &Db) -> Model {
    db.iter().collect::<Result<_, _>>().expect("iterate")
}

/// A database whose retired segments hold recognisable records (`old/…`
/// puts) of keys that no longer exist: they were deleted in one batch and
/// compacted away, so any of those records replayed would bring a key back.
///
/// How many retired segments are kept when the process stops depends on
/// when the background flushes ran; the fixture is built again (a few
/// times at most) until both kept segments and the live one are there.
fn with_old_lives() -> MemFs {
    let mut last = Vec::new();
    for _ in 0..10 {
        let fs = old_lives_once();
        let names = fs.file_names(Path::new(DB));
        let wals = names.iter().filter(|n| n.ends_with(".wal")).count();
        if wals >= 3 {
            return fs;
        }
        last = names;
    }
    panic!("retired segments are kept for reuse: too few segments in {last:?}");
}

fn old_lives_once() -> MemFs {
    let fs = MemFs::new();
    let db = Db::open(Path::new(DB), opts(Arc::new(fs.clone()))).expect("open");
    let mut delete_all = Batch::new();
    for i in 0..200u32 {
        let key = format!("old/{i:04}");
        put(&db, key.as_bytes(), format!("OLD LIFE {i}").as_bytes()).expect("put");
        delete_all.delete(key.as_bytes());
    }
    db.write_with(delete_all, Durability::Sync).expect("delete");
    // A ranged compaction: `flush` and `compact` would also remove the
    // kept segments.
    db.compact_range(Some(b"old/"), Some(b"old/9999"))
        .expect("compact");
    assert!(contents(&db).is_empty());
    db.sync().expect("sync");
    // A closed database keeps no segment for reuse: the process stops
    // without closing, as a killed one would, so the retired segments stay.
    let fs = fs.crash_clone();
    drop(db);
    fs
}

/// Writes `new/…` keys with `Sync` until one fails; returns what was
/// acknowledged and the write that failed (which may land or not).
fn write_new(db: &Db) -> (Model, InFlight) {
    let mut acknowledged = Model::new();
    for i in 0..150u32 {
        let key = format!("new/{:03}", i % 60).into_bytes();
        let value = format!("new value {i} {}", "n".repeat(40)).into_bytes();
        if put(db, &key, &value).is_err() {
            return (acknowledged, Some((key, value)));
        }
        acknowledged.insert(key, value);
    }
    (acknowledged, None)
}

#[test]
fn reuse_happens_and_no_earlier_record_comes_back() {
    let fs = with_old_lives();
    let db = Db::open(Path::new(DB), opts(Arc::new(fs.clone()))).expect("open");
    let (acknowledged, failed) = write_new(&db);
    assert!(failed.is_none());
    let stats = db.stats();
    assert_eq!((stats.commits, stats.sync_commits), (150, 150));
    // One thread: no commit shares an fsync.
    assert!(
        stats.wal_syncs >= 150 && stats.commits_per_fsync() <= 1.0,
        "{} fsyncs",
        stats.wal_syncs
    );
    let reused = stats.wal_segments_reused;
    assert!(reused >= 2, "only {reused} segments were reused");
    let crashed = fs.crash_clone();
    drop(db);
    let db = Db::open(Path::new(DB), opts(Arc::new(crashed))).expect("reopen");
    assert_eq!(contents(&db), acknowledged);
    assert!(db.check().expect("check").is_ok());
}

/// A power loss at every sync point while segments holding `old/…` records
/// are reused: every acknowledged `new/…` write is there, no `old/…` key
/// is, and the database checks clean.
#[test]
fn a_crash_at_every_sync_point_of_reuse_loses_nothing_and_replays_no_old_record() {
    let base = with_old_lives();
    let mut k = 0u64;
    loop {
        let mem = base.crash_clone();
        let faulty = FaultFs::new(Arc::new(mem.clone()));
        faulty.faults().fail_after(FaultKind::Sync, k);
        let (acknowledged, in_flight, failed) =
            match Db::open(Path::new(DB), opts(Arc::new(faulty))) {
                Ok(db) => {
                    let (a, f) = write_new(&db);
                    let failed = f.is_some();
                    (a, f, failed)
                }
                Err(_) => (Model::new(), None, true),
            };
        for crashed in [mem.crash_clone(), mem.crash_clone_with(k)] {
            let db = Db::open(Path::new(DB), opts(Arc::new(crashed)))
                .unwrap_or_else(|e| panic!("sync point {k}: open after the crash: {e}"));
            let got = contents(&db);
            if let Some(old) = got.keys().find(|key| key.starts_with(b"old/")) {
                panic!(
                    "sync point {k}: a record of an earlier life came back: {}",
                    old.escape_ascii()
                );
            }
            for (key, value) in &acknowledged {
                let landed = in_flight
                    .as_ref()
                    .is_some_and(|(k, v)| k == key && got.get(key) == Some(v));
                assert!(
                    got.get(key) == Some(value) || landed,
                    "sync point {k}: an acknowledged write is lost"
                );
            }
            let report = db.check().expect("check");
            assert!(report.is_ok(), "sync point {k}: {:?}", report.problems);
        }
        if !failed {
            break;
        }
        k += 1;
    }
    assert!(k > 50, "the workload passed only {k} sync points");
}

/// Retired segments are kept for reuse only while the database is open:
/// after `close` the directory holds no WAL segment the manifest does not
/// need (a closed database pays no disk space for them).
#[test]
fn close_removes_the_segments_kept_for_reuse() {
    let fs = MemFs::new();
    let db = Db::open(Path::new(DB), opts(Arc::new(fs.clone()))).expect("open");
    for i in 0..400u32 {
        put(&db, format!("k/{i:04}").as_bytes(), &[b'v'; 40]).expect("put");
    }
    // A ranged compaction flushes, retiring the segments, and keeps some
    // for reuse (`flush` and `compact` would let them go).
    db.compact_range(Some(b"k/"), Some(b"k/9999"))
        .expect("compact");
    let open_wals = wal_count(&fs);
    db.close().expect("close");
    let closed_wals = wal_count(&fs);
    assert!(open_wals > 1, "segments kept while open: {open_wals}");
    assert_eq!(closed_wals, 1, "only the live segment stays after close");
    let db = Db::open(Path::new(DB), opts(Arc::new(fs.clone()))).expect("reopen");
    assert_eq!(contents(&db).len(), 400);
}

fn wal_count(fs: &MemFs) -> usize {
    fs.file_names(Path::new(DB))
        .into_iter()
        .filter(|n| n.ends_with(".wal"))
        .count()
}

/// A segment that held a batch larger than the memtable is not kept for
/// reuse once retired: reused, it would keep its length, and its space,
/// for the writes of one memtable.
#[test]
fn a_segment_longer_than_two_memtables_is_not_kept_for_reuse() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = || Options {
        memtable_size: 64 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts()).expect("open");
    let mut big = Batch::new();
    for i in 0..40_000u32 {
        big.put(format!("big/{i:06}").as_bytes(), &[b'v'; 70]);
    }
    db.write_with(big, Durability::Sync).expect("big batch");
    for i in 0..4_000u32 {
        put(&db, format!("k/{i:04}").as_bytes(), &[b'v'; 40]).expect("put");
    }
    db.compact_range(Some(b"k/"), Some(b"k/9999"))
        .expect("compact");
    let sizes: Vec<(String, u64)> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry"))
        .filter(|e| e.file_name().to_string_lossy().ends_with(".wal"))
        .map(|e| {
            let len = e.metadata().expect("size").len();
            (e.file_name().to_string_lossy().into_owned(), len)
        })
        .collect();
    assert!(
        sizes.iter().all(|(_, len)| *len < 3 << 20),
        "segments kept: {sizes:?}"
    );
    db.close().expect("close");
    let db = Db::open(dir.path(), opts()).expect("reopen");
    assert_eq!(contents(&db).len(), 44_000);
}
