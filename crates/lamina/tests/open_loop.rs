//! Shelve-style use: a database opened, written once and closed, over and
//! over. After a clean close an open keeps the small log it replays in its
//! memtable and goes on writing the WAL segment the close left
//! (docs/format.md#appending-to-a-closed-segment): it writes and syncs
//! nothing, and the close syncs that segment once. What each round costs
//! and leaves on disk stays bounded, and every round's write is there.

use lamina::fs::{FaultFs, FaultKind, FileSystem, MemFs};
use lamina::{Db, Options};
use std::path::Path;
use std::sync::Arc;

fn opts(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        fs,
        ..Options::default()
    }
}

fn manifests(fs: &MemFs, path: &Path) -> Vec<String> {
    fs.file_names(path)
        .into_iter()
        .filter(|n| n.starts_with("MANIFEST-"))
        .collect()
}

#[test]
fn a_round_of_open_put_close_syncs_once_and_its_open_writes_nothing() {
    let mem = MemFs::new();
    let faulty = FaultFs::new(Arc::new(mem.clone()));
    let faults = faulty.faults();
    let fs: Arc<dyn FileSystem> = Arc::new(faulty);
    let path = Path::new("/loop");
    let db = Db::open(path, opts(Arc::clone(&fs))).expect("create");
    db.put(b"a", b"0").expect("put");
    db.close().expect("close");
    let files = mem.file_names(path);
    let manifest = &manifests(&mem, path)[0];
    let manifest_size = mem.file_size(&path.join(manifest)).expect("size");
    for round in 1..=100u32 {
        let writes = faults.count(FaultKind::Write);
        let syncs = faults.count(FaultKind::Sync);
        let db = Db::open(path, opts(Arc::clone(&fs))).expect("open");
        assert_eq!(
            (
                faults.count(FaultKind::Write) - writes,
                faults.count(FaultKind::Sync) - syncs
            ),
            (0, 0),
            "round {round}: the open wrote or synced (writes, syncs)"
        );
        assert_eq!(
            db.get(b"a").expect("get"),
            Some((round - 1).to_string().into_bytes()),
            "round {round}: the last round's write is there"
        );
        db.put(b"a", round.to_string().as_bytes()).expect("put");
        db.close().expect("close");
        assert_eq!(
            faults.count(FaultKind::Sync) - syncs,
            1,
            "round {round}: a round syncs once, the WAL segment at close"
        );
        assert_eq!(
            mem.file_names(path),
            files,
            "round {round}: the directory changed"
        );
        assert!(
            mem.total_bytes() < 64 << 10,
            "round {round}: {} bytes",
            mem.total_bytes()
        );
    }
    assert_eq!(
        mem.file_size(&path.join(manifest)).expect("size"),
        manifest_size,
        "the opens leave the manifest as it was"
    );
    let db = Db::open(path, opts(Arc::new(mem.crash_clone()))).expect("open after a crash");
    assert_eq!(db.get(b"a").expect("get"), Some(b"100".to_vec()));
    assert!(db.check().expect("check").is_ok());
}

#[test]
fn a_manifest_grown_by_many_sessions_is_rewritten_at_an_open() {
    let fs = MemFs::new();
    let path = Path::new("/grown");
    let db = Db::open(path, opts(Arc::new(fs.clone()))).expect("create");
    db.close().expect("close");
    let first = manifests(&fs, path);
    let mut rewritten = None;
    for round in 0..2000u32 {
        let db = Db::open(path, opts(Arc::new(fs.clone()))).expect("open");
        db.put(format!("k{}", round % 3).as_bytes(), b"v")
            .expect("put");
        // Each session's flush appends its edit to the manifest.
        db.flush().expect("flush");
        db.close().expect("close");
        let now = manifests(&fs, path);
        assert_eq!(now.len(), 1, "one manifest: {now:?}");
        assert!(
            fs.file_size(&path.join(&now[0])).expect("size") < 20 << 10,
            "round {round}: the manifest grows past its bound"
        );
        if now != first {
            rewritten = Some(round);
            break;
        }
    }
    assert!(
        rewritten.is_some(),
        "a manifest past its bound is rewritten"
    );
    let db = Db::open(path, opts(Arc::new(fs.clone()))).expect("open");
    for k in 0..3 {
        assert_eq!(
            db.get(format!("k{k}").as_bytes()).expect("get"),
            Some(b"v".to_vec())
        );
    }
    assert!(db.check().expect("check").is_ok());
}

/// A loop of rounds that each write once appends to one segment, and the
/// log an open replays would grow with every round: past a few hundred
/// records an open writes the log to a table and starts a new segment, so
/// the log on disk (and what an open replays) stays small.
#[test]
fn a_long_loop_keeps_the_log_an_open_replays_small() {
    let fs = MemFs::new();
    let path = Path::new("/long");
    let wal_bytes = |fs: &MemFs| -> u64 {
        fs.file_names(path)
            .iter()
            .filter(|n| n.ends_with(".wal"))
            .map(|n| fs.file_size(&path.join(n)).expect("size"))
            .sum()
    };
    let mut largest = 0;
    for round in 0..1000u32 {
        let db = Db::open(path, opts(Arc::new(fs.clone()))).expect("open");
        if round > 0 {
            assert_eq!(
                db.get(b"a").expect("get"),
                Some((round - 1).to_string().into_bytes()),
                "round {round}"
            );
        }
        db.put(b"a", round.to_string().as_bytes()).expect("put");
        db.close().expect("close");
        largest = largest.max(wal_bytes(&fs));
    }
    // 256 records of 25 to 27 bytes, and the zeros ahead of them.
    assert!(largest <= 16 << 10, "the WAL reached {largest} bytes");
    assert!(
        fs.file_names(path).iter().any(|n| n.ends_with(".sst")),
        "the log was written to a table"
    );
}
