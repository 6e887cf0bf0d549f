//! Injected I/O failures: a failed fsync or write poisons the handle, later
//! writes are refused, and a reopened database holds every acknowledged write.

use lamina::fs::{FaultFs, FaultKind, Faults, MemFs};
use lamina::{Db, Durability, Error, Options};
use std::path::Path;
use std::sync::Arc;

fn opts(fs: Arc<dyn lamina::fs::FileSystem>) -> Options {
    Options {
        fs,
        memtable_size: 8 << 10,
        block_size: 256,
        ..Options::default()
    }
}

#[test]
fn failed_sync_poisons_the_handle() {
    let (mem, faults, db) = open_with_faults();
    for i in 0..20u32 {
        db.write_with(one(i), Durability::Sync)
            .expect("write before the fault");
    }
    faults.fail_after(FaultKind::Sync, 0);
    let err = db
        .write_with(one(20), Durability::Sync)
        .expect_err("sync fails");
    assert!(matches!(err, Error::Io { .. }), "{err}");
    let err = db.put(b"after", b"x").expect_err("poisoned");
    assert!(matches!(err, Error::Poisoned(_)), "{err}");
    assert!(err.to_string().contains("reopen"), "{err}");
    drop(db);
    faults.clear();
    let db = Db::open(Path::new("/db"), opts(Arc::new(mem.crash_clone()))).expect("reopen");
    for i in 0..20u32 {
        assert_eq!(
            db.get(format!("k{i:04}").as_bytes()).expect("get"),
            Some(vec![1; 100]),
            "key {i}"
        );
    }
}

/// A database at `/db` on an in-memory file system wrapped in a [`FaultFs`]:
/// the file system (for crash clones), the faults' controller, the handle.
fn open_with_faults() -> (MemFs, Arc<Faults>, Db) {
    let mem = MemFs::new();
    let faulty = FaultFs::new(Arc::new(mem.clone()));
    let faults = faulty.faults();
    let db = Db::open(Path::new("/db"), opts(Arc::new(faulty))).expect("open");
    (mem, faults, db)
}

fn one(i: u32) -> lamina::Batch {
    let mut b = lamina::Batch::new();
    b.put(format!("k{i:04}").as_bytes(), &[1; 100]);
    b
}

#[test]
fn full_disk_during_flush_keeps_acknowledged_writes() {
    let (mem, faults, db) = open_with_faults();
    let mut acked = 0u32;
    faults.fail_after(FaultKind::Write, 200);
    for i in 0..5000u32 {
        match db.write_with(one(i), Durability::Sync) {
            Ok(()) => acked = i + 1,
            Err(Error::Io { .. } | Error::Poisoned(_)) => break,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert!(acked < 5000, "the write fault never fired");
    let _ = db.close();
    drop(db);
    faults.clear();
    let db =
        Db::open(Path::new("/db"), opts(Arc::new(mem.crash_clone()))).expect("reopen after ENOSPC");
    for i in 0..acked {
        assert_eq!(
            db.get(format!("k{i:04}").as_bytes()).expect("get"),
            Some(vec![1; 100]),
            "key {i} of {acked}"
        );
    }
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[test]
fn read_errors_surface_as_errors() {
    let mem = MemFs::new();
    let faulty = FaultFs::new(Arc::new(mem.clone()));
    let faults = faulty.faults();
    let db = Db::open(
        Path::new("/db"),
        Options {
            cache_size: 0,
            ..opts(Arc::new(faulty))
        },
    )
    .expect("open");
    for i in 0..500u32 {
        db.put(format!("k{i:04}").as_bytes(), &[1; 100])
            .expect("put");
    }
    db.flush().expect("flush");
    faults.fail_after(FaultKind::Read, 0);
    let scan: Result<Vec<_>, _> = db.iter().collect();
    assert!(
        scan.is_err(),
        "a failing read must not look like an empty database"
    );
    faults.clear();
    assert_eq!(db.iter().count(), 500);
}

/// A sync a memtable rotation owes (paid later, by the flush or the next
/// sync: docs/format.md#segments-started-ahead-of-their-syncs)
/// that fails poisons the handle like any failed sync: `sync()` reports it,
/// later writes are refused, and nothing after the last durable point is
/// claimed durable.
#[test]
fn a_failed_sync_owed_by_a_rotation_poisons_the_handle() {
    let (mem, faults, db) = open_with_faults();
    for i in 0..10u32 {
        db.write_with(one(i), Durability::Sync)
            .expect("synced write");
    }
    // Every sync fails from here: the rotations these writes cause (8 KiB
    // memtables) owe syncs that can no longer be paid.
    faults.fail_after(FaultKind::Sync, 0);
    let mut refused = None;
    for i in 10..400u32 {
        if let Err(e) = db.write_with(one(i), Durability::Os) {
            refused = Some(e);
            break;
        }
    }
    // Answered, not waited for forever: a payment that failed stays unpaid.
    let db = Arc::new(db);
    let (tx, rx) = std::sync::mpsc::channel();
    let syncer = Arc::clone(&db);
    std::thread::spawn(move || {
        let _ = tx.send(syncer.sync());
    });
    let synced = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("sync() returns after a failed payment");
    assert!(synced.is_err(), "sync after a failed payment must fail");
    if let Some(e) = refused {
        assert!(matches!(e, Error::Poisoned(_) | Error::Io { .. }), "{e}");
    }
    let err = db.put(b"after", b"x").expect_err("poisoned");
    assert!(matches!(err, Error::Poisoned(_)), "{err}");
    drop(db);
    faults.clear();
    let db = Db::open(Path::new("/db"), opts(Arc::new(mem.crash_clone()))).expect("reopen");
    for i in 0..10u32 {
        assert_eq!(
            db.get(format!("k{i:04}").as_bytes()).expect("get"),
            Some(vec![1; 100]),
            "synced write {i} lost"
        );
    }
}
