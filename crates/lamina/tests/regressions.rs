//! Regression tests, each found by the model tests, each telling its bug's story.

use lamina::fs::{FaultFs, FaultKind, MemFs};
use lamina::{Db, Durability, Options};
use std::path::Path;
use std::sync::Arc;

/// Found by `model_tiny_memtables_and_blocks`: a crash came while an open
/// was recovering, after it had created its new WAL segment but before
/// `CURRENT` durably named the manifest recording it. The next recovery saw
/// that segment on disk, replayed it, then handed out its file number again
/// for its own new segment — and removed the "replayed" file, which was now
/// the live one. Every write after that recovery vanished at the next reopen.
///
/// Here the crash is placed at every sync point of a recovery in turn.
#[test]
fn wal_numbers_unknown_to_the_manifest_are_never_reused() {
    let opts = |fs: Arc<dyn lamina::fs::FileSystem>| Options {
        fs,
        memtable_size: 4 << 10,
        ..Options::default()
    };
    let base = MemFs::new();
    let db = Db::open(Path::new("/db"), opts(Arc::new(base.clone()))).expect("open");
    for i in 0..100 {
        db.write_with(batch(i), Durability::Sync).expect("write");
    }
    drop(db);
    let mut failed_opens = 0;
    for k in 0..40 {
        let mem = base.crash_clone();
        let faulty = FaultFs::new(Arc::new(mem.clone()));
        faulty.faults().fail_after(FaultKind::Sync, k);
        if let Ok(db) = Db::open(Path::new("/db"), opts(Arc::new(faulty))) {
            drop(db);
            continue;
        }
        failed_opens += 1;
        let crashed = mem.crash_clone();
        let db = Db::open(Path::new("/db"), opts(Arc::new(crashed.clone()))).expect("recover");
        db.put(b"after-recovery", b"kept").expect("put");
        db.close().expect("close");
        let db = Db::open(Path::new("/db"), opts(Arc::new(crashed))).expect("reopen");
        assert_eq!(
            db.get(b"after-recovery").expect("get"),
            Some(b"kept".to_vec()),
            "crash at sync {k}"
        );
        for i in (0..100).step_by(9) {
            assert!(
                db.get(format!("key{i:06}").as_bytes())
                    .expect("get")
                    .is_some(),
                "crash at sync {k}: key {i}"
            );
        }
    }
    // An open syncs the directory (naming its new segment), the manifest
    // and `CURRENT`: each of those syncs fails in turn.
    assert!(
        failed_opens >= 3,
        "the injected sync failures interrupted only {failed_opens} opens"
    );
}

fn batch(i: u32) -> lamina::Batch {
    let mut b = lamina::Batch::new();
    b.put(format!("key{i:06}").as_bytes(), &[7u8; 200]);
    b
}
