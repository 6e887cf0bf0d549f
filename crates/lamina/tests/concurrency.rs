//! Many threads at once: group commit shares fsyncs, readers and scans run
//! beside writers, and every acknowledged write is there.

use lamina::{Batch, Db, Durability, Options};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[test]
fn concurrent_sync_writers_share_fsyncs_and_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options {
        memtable_size: 256 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path().join("db"), opts.clone()).expect("open");
    let threads = 8u32;
    let per_thread = 150u32;
    std::thread::scope(|s| {
        for t in 0..threads {
            let db = db.clone();
            s.spawn(move || {
                for i in 0..per_thread {
                    let mut b = Batch::new();
                    b.put(format!("t{t}-k{i:04}").as_bytes(), &[t as u8; 64]);
                    b.merge(b"total", &1u64.to_le_bytes());
                    db.write_with(b, Durability::Sync).expect("write");
                }
            });
        }
    });
    let stats = db.stats();
    let commits = u64::from(threads * per_thread);
    assert!(
        stats.wal_syncs < commits,
        "{} fsyncs for {commits} commits: no group commit",
        stats.wal_syncs
    );
    assert_eq!((stats.commits, stats.sync_commits), (commits, commits));
    assert!(
        stats.commits_per_fsync() > 1.0,
        "{}",
        stats.commits_per_fsync()
    );
    db.close().expect("close");
    let db = Db::open(dir.path().join("db"), opts).expect("reopen");
    assert_eq!(
        db.get(b"total").expect("get"),
        Some(commits.to_le_bytes().to_vec())
    );
    for t in 0..threads {
        let n = db.prefix(format!("t{t}-").as_bytes()).count();
        assert_eq!(n, per_thread as usize, "thread {t}");
    }
}

#[test]
fn scans_and_reads_run_beside_writers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options {
        memtable_size: 64 << 10,
        block_size: 512,
        l0_compaction_trigger: 2,
        ..Options::default()
    };
    let db = Db::open(dir.path().join("db"), opts).expect("open");
    for i in 0..2000u32 {
        db.put(format!("base{i:05}").as_bytes(), b"v").expect("put");
    }
    let done = Arc::new(AtomicBool::new(false));
    std::thread::scope(|s| {
        let writer = {
            let (db, done) = (db.clone(), Arc::clone(&done));
            s.spawn(move || {
                let mut i = 0u32;
                while !done.load(Ordering::Relaxed) && i < 20_000 {
                    db.put(format!("new{i:06}").as_bytes(), &[1; 100])
                        .expect("put");
                    i += 1;
                }
                i
            })
        };
        for _ in 0..2 {
            let db = db.clone();
            s.spawn(move || {
                for _ in 0..5 {
                    // Each scan sees a consistent view: all 2000 base keys.
                    let snap = db.snapshot();
                    let base = snap.prefix(b"base").count();
                    assert_eq!(base, 2000);
                    let fresh: Vec<_> = snap.prefix(b"new").map(|e| e.expect("entry").0).collect();
                    assert!(fresh.windows(2).all(|w| w[0] < w[1]), "scan out of order");
                    assert_eq!(db.get(b"base00042").expect("get"), Some(b"v".to_vec()));
                }
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        done.store(true, Ordering::Relaxed);
        let written = writer.join().expect("writer");
        assert_eq!(db.prefix(b"new").count(), written as usize);
    });
}
