//! The commit pipeline (docs/design.md#write-path): many writers hand their
//! records to the WAL while one syncs, insert into the memtable unlocked and
//! publish their seqnos in order. A power loss at any moment keeps every
//! acknowledged `Sync` write; a snapshot never changes once taken (no seqno
//! is published before every lower one is in the memtable); a failed sync
//! acknowledges nothing it did not cover.

use lamina::fs::{FaultFs, FaultKind, FileSystem, MemFs};
use lamina::{Batch, Db, Durability, Options};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const DB: &str = "/pipeline";
const THREADS: u32 = 8;

fn opts(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        fs,
        memtable_size: 32 << 10,
        block_size: 512,
        ..Options::default()
    }
}

fn key(t: u32, i: u32) -> Vec<u8> {
    format!("t{t}/k{i:05}").into_bytes()
}

fn value(t: u32, i: u32) -> Vec<u8> {
    format!("value {t} {i} {}", "v".repeat((i % 40) as usize)).into_bytes()
}

fn put(db: &Db, k: &[u8], v: &[u8]) -> lamina::Result<()> {
    let mut b = Batch::new();
    b.put(k, v);
    db.write_with(b, Durability::Sync)
}

/// Power losses taken while eight threads commit `Sync` writes (and rotate
/// memtables, so segments are sealed under the pipeline): each crash image
/// holds every write acknowledged before it was taken.
#[test]
fn a_power_loss_while_writers_share_syncs_keeps_every_acknowledged_write() {
    let fs = MemFs::new();
    let db = Db::open(Path::new(DB), opts(Arc::new(fs.clone()))).expect("open");
    let acked: Mutex<BTreeMap<Vec<u8>, Vec<u8>>> = Mutex::new(BTreeMap::new());
    let stop = AtomicBool::new(false);
    let mut images = Vec::new();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (db, acked, stop) = (db.clone(), &acked, &stop);
            s.spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) && i < 3000 {
                    let (k, v) = (key(t, i), value(t, i));
                    put(&db, &k, &v).expect("write");
                    acked.lock().unwrap().insert(k, v);
                    i += 1;
                }
            });
        }
        for _ in 0..12 {
            std::thread::sleep(std::time::Duration::from_millis(15));
            // Taken after the copy of the acknowledged set: all of it was
            // acknowledged before the crash.
            let before = acked.lock().unwrap().clone();
            images.push((before, fs.crash_clone()));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let stats = db.stats();
    assert!(
        stats.commits_per_fsync() > 1.0,
        "eight writers shared no fsync: {} commits, {} fsyncs",
        stats.sync_commits,
        stats.wal_syncs
    );
    drop(db);
    let mut checked = 0;
    for (n, (acknowledged, image)) in images.into_iter().enumerate() {
        let db = Db::open(Path::new(DB), opts(Arc::new(image)))
            .unwrap_or_else(|e| panic!("crash image {n}: open: {e}"));
        for (k, v) in &acknowledged {
            let got = db.get(k).expect("get");
            assert_eq!(
                got.as_deref(),
                Some(v.as_slice()),
                "crash image {n}: acknowledged {} is lost",
                k.escape_ascii()
            );
        }
        checked += acknowledged.len();
        let report = db.check().expect("check");
        assert!(report.is_ok(), "crash image {n}: {:?}", report.problems);
    }
    assert!(
        checked > 0,
        "no write was acknowledged before a crash image"
    );
}

/// Seqnos are published in order: what a snapshot sees is fixed when it is
/// taken. Writers race in pairs so that a later seqno often finishes its
/// insert before an earlier one; a snapshot read twice, with writes in
/// between, must give the same answer both times.
#[test]
fn a_snapshot_never_changes_while_writers_race() {
    let fs = MemFs::new();
    let db = Db::open(Path::new(DB), opts(Arc::new(fs))).expect("open");
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (db, stop) = (db.clone(), &stop);
            s.spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) && i < 4000 {
                    let mut b = Batch::new();
                    // Batches of different sizes take different times to insert.
                    for j in 0..(1 + (i + t) % 5) {
                        b.put(&key(t, i * 8 + j), &value(t, i));
                    }
                    let d = if i % 3 == 0 {
                        Durability::Sync
                    } else {
                        Durability::Os
                    };
                    db.write_with(b, d).expect("write");
                    i += 1;
                }
            });
        }
        for round in 0..30 {
            let snap = db.snapshot();
            let first: Vec<_> = snap.iter().collect::<Result<_, _>>().expect("scan");
            std::thread::yield_now();
            let second: Vec<_> = snap.iter().collect::<Result<_, _>>().expect("scan");
            assert_eq!(
                first.len(),
                second.len(),
                "round {round}: a snapshot at seqno {} changed",
                snap.seqno()
            );
            assert!(first == second, "round {round}: a snapshot changed");
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// A sync that fails while several writers wait on it: the handle is
/// poisoned, every writer that returned `Ok` is durable in the crash image,
/// and no writer hangs.
#[test]
fn a_failed_shared_sync_acknowledges_only_what_was_durable() {
    for fail_at in [3u64, 10, 40] {
        let mem = MemFs::new();
        let faulty = FaultFs::new(Arc::new(mem.clone()));
        let db = Db::open(Path::new(DB), opts(Arc::new(faulty.clone()))).expect("open");
        faulty.faults().fail_after(FaultKind::Sync, fail_at);
        let acked: Mutex<Vec<(Vec<u8>, Vec<u8>)>> = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (db, acked) = (db.clone(), &acked);
                s.spawn(move || {
                    for i in 0..200 {
                        let (k, v) = (key(t, i), value(t, i));
                        if put(&db, &k, &v).is_err() {
                            return;
                        }
                        acked.lock().unwrap().push((k, v));
                    }
                });
            }
        });
        let err = put(&db, b"after", b"x").expect_err("the handle is poisoned");
        assert!(matches!(err, lamina::Error::Poisoned(_)), "{err}");
        drop(db);
        let db = Db::open(Path::new(DB), opts(Arc::new(mem.crash_clone()))).expect("reopen");
        for (k, v) in acked.lock().unwrap().iter() {
            assert_eq!(
                db.get(k).expect("get").as_deref(),
                Some(v.as_slice()),
                "sync {fail_at} failed: acknowledged {} is lost",
                k.escape_ascii()
            );
        }
    }
}
