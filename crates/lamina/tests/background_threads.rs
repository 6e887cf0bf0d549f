//! A handle starts its flush and compaction threads when work first comes
//! for them, not at open: a database opened to write a key or two and
//! closed (`shelve`) makes and joins no thread. Once a memtable fills, the
//! threads start and flush it. (One test in its own process: it counts the
//! process's threads by name.)
#![cfg(target_os = "linux")]

use lamina::{Db, Options};

/// How many threads of this process bear `name`.
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("list /proc/self/task")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.trim_end() == name)
        .count()
}

#[test]
fn the_background_threads_start_with_the_first_work_for_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let opts = Options {
        memtable_size: 64 << 10,
        ..Options::default()
    };
    for round in 0..3 {
        let db = Db::open(&path, opts.clone()).expect("open");
        db.put(b"a", format!("{round}").as_bytes()).expect("put");
        assert_eq!(
            (
                threads_named("lamina-flush"),
                threads_named("lamina-compact")
            ),
            (0, 0),
            "round {round}: threads started for a write or two"
        );
        db.close().expect("close");
    }
    let db = Db::open(&path, opts).expect("open");
    // Three memtables' worth.
    for key in 0..2000u32 {
        db.put(&key.to_be_bytes(), &[7; 100]).expect("put");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while db.stats().flushes == 0 {
        assert!(std::time::Instant::now() < deadline, "no flush");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(
        (
            threads_named("lamina-flush"),
            threads_named("lamina-compact")
        ),
        (1, 1),
        "a full memtable started the threads"
    );
    db.close().expect("close");
    assert_eq!(
        threads_named("lamina-flush") + threads_named("lamina-compact"),
        0,
        "close joined them"
    );
    let db = Db::open(&path, Options::default()).expect("reopen");
    assert_eq!(db.get(b"a").expect("get"), Some(b"2".to_vec()));
    assert_eq!(
        db.get(&0u32.to_be_bytes()).expect("get"),
        Some(vec![7; 100])
    );
}
