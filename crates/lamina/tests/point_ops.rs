//! Point operations: `get_with` lends the stored value to a closure,
//! `contains_key` stops at a key's newest entry (a deleted key is absent, a
//! key holding only merge operands exists and its operands are not applied),
//! in the memtable, in level-0 tables and at the bottom of the tree, at
//! snapshots; and single writers mixed with concurrent ones lose nothing and
//! publish their writes in order.

use lamina::binding::{Cached, NonBlocking, NonBlockingSnapshot};
use lamina::{Db, Durability, Error, Options};
use std::sync::atomic::{AtomicBool, Ordering};

fn one() -> [u8; 8] {
    1u64.to_le_bytes()
}

/// Where the entries are when they are read.
#[derive(Debug, Clone, Copy)]
enum Place {
    Memtable,
    Level0,
    Bottom,
}

fn settle(db: &Db, place: Place) {
    match place {
        Place::Memtable => {}
        Place::Level0 => db.flush().expect("flush"),
        Place::Bottom => db.compact().expect("compact"),
    }
}

/// A database in `dir` holding `live` (a value), `gone` (deleted) and
/// `counter` (merge operands only, `operands` of them).
fn with_live_gone_and_counter(dir: &std::path::Path, operands: usize) -> Db {
    let db = Db::open(dir.join("db"), Options::default()).expect("open");
    db.put(b"live", b"value").expect("put");
    db.put(b"gone", b"value").expect("put");
    db.delete(b"gone").expect("delete");
    for _ in 0..operands {
        db.merge(b"counter", &one()).expect("merge");
    }
    db
}

#[test]
fn contains_and_get_with_agree_with_the_writes_wherever_the_entries_are() {
    for place in [Place::Memtable, Place::Level0, Place::Bottom] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = with_live_gone_and_counter(dir.path(), 2);
        // A base the Add operator cannot fold: reading it fails, but the
        // key exists, and an existence check does not apply the operand.
        // (The base is flushed first: onto a base still in the active
        // memtable the operand is refused at the call.)
        db.put(b"unfoldable", b"abc").expect("put");
        db.flush().expect("flush");
        db.merge(b"unfoldable", &one()).expect("merge");
        settle(&db, place);

        assert!(db.contains_key(b"live").expect("contains"), "{place:?}");
        assert!(!db.contains_key(b"gone").expect("contains"), "{place:?}");
        assert!(!db.contains_key(b"never").expect("contains"), "{place:?}");
        assert!(db.contains_key(b"counter").expect("contains"), "{place:?}");
        assert!(
            db.contains_key(b"unfoldable").expect("contains"),
            "{place:?}"
        );
        assert!(
            matches!(db.get(b"unfoldable"), Err(Error::Merge(_))),
            "{place:?}: the operand cannot fold onto b\"abc\""
        );

        let len = db.get_with(b"live", |v| (v.len(), v.first().copied()));
        assert_eq!(len.expect("get_with"), Some((5, Some(b'v'))), "{place:?}");
        assert_eq!(db.get_with(b"gone", <[u8]>::to_vec).expect("get"), None);
        assert_eq!(
            db.get_with(b"counter", <[u8]>::to_vec).expect("get"),
            Some(2u64.to_le_bytes().to_vec()),
            "{place:?}: operands folded"
        );
    }
}

#[test]
fn contains_at_a_snapshot_sees_the_database_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), Options::default()).expect("open");
    db.put(b"a", b"1").expect("put");
    let snap = db.snapshot();
    db.delete(b"a").expect("delete");
    db.put(b"b", b"2").expect("put");
    db.merge(b"c", &one()).expect("merge");
    for flush in [false, true] {
        if flush {
            db.flush().expect("flush");
        }
        assert!(snap.contains_key(b"a").expect("contains"));
        assert!(!snap.contains_key(b"b").expect("contains"));
        assert!(!snap.contains_key(b"c").expect("contains"));
        assert!(!db.contains_key(b"a").expect("contains"));
        assert!(db.contains_key(b"b").expect("contains"));
        assert!(db.contains_key(b"c").expect("contains"));
    }
    let ks = db.keyspace("other").expect("keyspace");
    ks.put(b"a", b"x").expect("put");
    assert!(ks.contains_key(b"a").expect("contains"));
    assert!(!snap.contains_key_in(&ks, b"a").expect("contains"));
    assert_eq!(
        ks.get_with(b"a", <[u8]>::to_vec).expect("get"),
        Some(b"x".to_vec())
    );
}

#[test]
fn bad_point_reads_keep_their_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), Options::default()).expect("open");
    let long = vec![b'k'; 65_537];
    let err = db.contains_key(&long).expect_err("too long");
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("65537"), "{err}");
    assert!(matches!(
        db.get_with(&long, |_| ()),
        Err(Error::InvalidArgument(_))
    ));
    db.close().expect("close");
    assert!(matches!(db.contains_key(b"k"), Err(Error::Closed)));
    assert!(matches!(db.get_with(b"k", |_| ()), Err(Error::Closed)));
}

/// Writers alternate between writing alone (the single-writer path: a
/// write that may not wait commits under the commit lock when it finds the
/// pipeline idle) and colliding with each other (the group path), with
/// every durability, across memtable switches; a reader checks that writes
/// become visible in each writer's order, and after a reopen every
/// acknowledged write is there.
#[test]
fn lone_and_grouped_writers_publish_in_order_and_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options {
        memtable_size: 64 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path().join("db"), opts.clone()).expect("open");
    let threads = 4u32;
    let per_thread = 400u32;
    let stop = AtomicBool::new(false);
    // A writer published out of order leaves the writers before it waiting
    // for ever: end the test instead of hanging it.
    let finished = std::sync::Arc::new(AtomicBool::new(false));
    let watched = std::sync::Arc::clone(&finished);
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(120));
        if !watched.load(Ordering::Acquire) {
            eprintln!("writers still waiting after 120 s: a write was published out of order");
            std::process::abort();
        }
    });
    std::thread::scope(|s| {
        for t in 0..threads {
            let db = db.clone();
            s.spawn(move || {
                for i in 0..per_thread {
                    let key = format!("t{t}-{i:05}");
                    let durability = match i % 4 {
                        // The default durability, through the write that
                        // may not wait when it can.
                        0 if db
                            .try_put(key.as_bytes(), &i.to_le_bytes())
                            .expect("try_put") =>
                        {
                            continue;
                        }
                        0 | 1 => Durability::Os,
                        2 => Durability::None,
                        _ => Durability::Sync,
                    };
                    let mut b = lamina::Batch::new();
                    b.put(key.as_bytes(), &i.to_le_bytes());
                    db.write_with(b, durability).expect("write");
                    if i % 50 == 0 {
                        std::thread::yield_now();
                    }
                }
            });
        }
        let reader = db.clone();
        let stop = &stop;
        s.spawn(move || {
            let db = reader;
            // The newest write of each thread seen so far: once visible, a
            // write stays visible (the published seqno never goes back).
            let mut newest_seen: Vec<Option<u32>> = vec![None; threads as usize];
            while !stop.load(Ordering::Acquire) {
                for t in 0..threads {
                    if let Some(Some(i)) = newest_seen.get(t as usize) {
                        let here = db
                            .contains_key(format!("t{t}-{i:05}").as_bytes())
                            .expect("contains");
                        assert!(here, "t{t}: write {i} seen, then not");
                    }
                    // A newer write of one thread visible implies its older
                    // ones (checked newest first, so the older checks come later).
                    let mut seen_newer = false;
                    for i in (0..per_thread).step_by(37).rev() {
                        let here = db
                            .contains_key(format!("t{t}-{i:05}").as_bytes())
                            .expect("contains");
                        assert!(
                            here || !seen_newer,
                            "t{t}: write {i} missing after a newer one"
                        );
                        if here && !seen_newer {
                            if let Some(n) = newest_seen.get_mut(t as usize) {
                                *n = Some(n.map_or(i, |n| n.max(i)));
                            }
                        }
                        seen_newer |= here;
                    }
                }
                std::thread::yield_now();
            }
        });
        // Let the writers finish, then stop the reader.
        loop {
            let done = (0..threads).all(|t| {
                db.contains_key(format!("t{t}-{:05}", per_thread - 1).as_bytes())
                    .expect("contains")
            });
            if done {
                break;
            }
            std::thread::yield_now();
        }
        stop.store(true, Ordering::Release);
    });
    finished.store(true, Ordering::Release);
    db.close().expect("close");
    let db = Db::open(dir.path().join("db"), opts).expect("reopen");
    for t in 0..threads {
        for i in 0..per_thread {
            let v = db.get(format!("t{t}-{i:05}").as_bytes()).expect("get");
            assert_eq!(v, Some(i.to_le_bytes().to_vec()), "t{t}-{i}");
        }
    }
}

/// A database in `dir` whose key `on disk` holds `value` in a table no
/// block of which is cached: written, flushed, closed, and opened again
/// (an open keeps a small log it replays in memory).
fn reopened_with_on_disk(dir: &std::path::Path, value: &[u8]) -> Db {
    let db = Db::open(dir.join("db"), Options::default()).expect("open");
    db.put(b"on disk", value).expect("put");
    db.flush().expect("flush");
    db.close().expect("close");
    Db::open(dir.join("db"), Options::default()).expect("reopen")
}

/// `try_get_with` and `try_contains_key` answer from memory or say that the
/// disk is needed; they never read it.
#[test]
fn lookups_that_may_not_wait_answer_from_memory_or_say_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = reopened_with_on_disk(dir.path(), b"1");
    db.put(b"in memory", b"2").expect("put");
    let copy = |v: &[u8]| v.to_vec();
    assert_eq!(
        db.try_get_with(b"in memory", copy).expect("try"),
        Cached::Answered(Some(b"2".to_vec()))
    );
    assert_eq!(
        db.try_get_with(b"on disk", copy).expect("try"),
        Cached::NeedsIo
    );
    assert_eq!(
        db.try_contains_key(b"on disk").expect("try"),
        Cached::NeedsIo
    );
    assert_eq!(db.get(b"on disk").expect("get"), Some(b"1".to_vec()));
    assert_eq!(
        db.try_get_with(b"on disk", copy).expect("try"),
        Cached::Answered(Some(b"1".to_vec()))
    );
    assert_eq!(
        db.try_contains_key(b"on disk").expect("try"),
        Cached::Answered(true)
    );
    // The filter answers for a missing key without reading a block.
    assert_eq!(
        db.try_contains_key(b"nowhere").expect("try"),
        Cached::Answered(false)
    );
}

/// A snapshot's lookups that may not wait answer as the snapshot sees the
/// data, from memory, or say that the disk is needed; they never read it,
/// and never answer from rows remembered for the newest data.
#[test]
fn a_snapshot_s_lookups_that_may_not_wait_see_the_past() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = reopened_with_on_disk(dir.path(), b"old");
    let ks = db.default_keyspace();
    db.put(b"k", b"1").expect("put");
    db.put(b"gone", b"x").expect("put");
    let snap = db.snapshot();
    db.put(b"k", b"2").expect("put");
    db.delete(b"gone").expect("delete");
    db.put(b"new", b"n").expect("put");
    let copy = |v: &[u8]| v.to_vec();
    let lazy = |v: lamina::LazyValue| v.into_vec().expect("blob");
    let try_get = |k: &[u8]| snap.try_get_with_lazy_in(&ks, k, copy, lazy).expect("try");
    let try_contains = |k: &[u8]| snap.try_contains_key_in(&ks, k).expect("try");
    assert_eq!(try_get(b"k"), Cached::Answered(Some(b"1".to_vec())));
    assert_eq!(try_get(b"gone"), Cached::Answered(Some(b"x".to_vec())));
    assert_eq!(try_get(b"new"), Cached::Answered(None));
    assert_eq!(try_contains(b"gone"), Cached::Answered(true));
    assert_eq!(try_contains(b"new"), Cached::Answered(false));
    assert_eq!(try_get(b"on disk"), Cached::NeedsIo);
    assert_eq!(try_contains(b"on disk"), Cached::NeedsIo);
    db.put(b"on disk", b"newer").expect("put");
    db.flush().expect("flush");
    // Read twice through the live database, so that its row is remembered.
    for _ in 0..2 {
        assert_eq!(db.get(b"on disk").expect("get"), Some(b"newer".to_vec()));
    }
    assert_eq!(
        snap.get_in(&ks, b"on disk").expect("get"),
        Some(b"old".to_vec())
    );
    assert_eq!(try_get(b"on disk"), Cached::Answered(Some(b"old".to_vec())));
    assert_eq!(try_get(b"k"), Cached::Answered(Some(b"1".to_vec())));
}

/// Values read from tables are remembered per version (the row cache); a
/// flush or compaction that changes the tables, a newer write in the
/// memtable, and a snapshot older than the tables must all see past them.
#[test]
fn remembered_rows_never_outlive_the_tables_they_were_read_from() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), Options::default()).expect("open");
    let get = |db: &Db, k: &[u8]| db.get(k).expect("get");
    db.put(b"k", b"1").expect("put");
    db.put(b"d", b"x").expect("put");
    db.flush().expect("flush");
    let old = db.snapshot();
    for _ in 0..2 {
        assert_eq!(get(&db, b"k"), Some(b"1".to_vec())); // read, then remembered
        assert_eq!(get(&db, b"d"), Some(b"x".to_vec()));
    }
    db.put(b"k", b"2").expect("put"); // newer, in the memtable
    assert_eq!(get(&db, b"k"), Some(b"2".to_vec()));
    db.flush().expect("flush"); // now in a newer table
    assert_eq!(get(&db, b"k"), Some(b"2".to_vec()));
    assert_eq!(old.get(b"k").expect("get"), Some(b"1".to_vec()));
    db.delete(b"d").expect("delete");
    db.flush().expect("flush");
    drop(old);
    db.compact().expect("compact"); // the tombstone and the value are gone
    assert_eq!(get(&db, b"d"), None);
    assert!(!db.contains_key(b"d").expect("contains"));
    assert_eq!(get(&db, b"k"), Some(b"2".to_vec()));
    db.merge(b"k", &one()).expect("merge"); // an operand over a remembered value
    assert!(matches!(db.get(b"k"), Err(Error::Merge(_))));
}

#[test]
fn delete_existing_deletes_what_exists_and_writes_nothing_for_the_rest() {
    for place in [Place::Memtable, Place::Level0, Place::Bottom] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = with_live_gone_and_counter(dir.path(), 1);
        let ks = db.keyspace("other").expect("keyspace");
        ks.put(b"live", b"elsewhere").expect("put");
        settle(&db, place);
        let before = db.stats().last_seqno;

        assert!(!db.delete_existing(b"gone").expect("delete"), "{place:?}");
        assert!(!db.delete_existing(b"never").expect("delete"), "{place:?}");
        assert_eq!(
            db.stats().last_seqno,
            before,
            "{place:?}: a missing key writes nothing"
        );

        assert!(db.delete_existing(b"live").expect("delete"), "{place:?}");
        assert!(db.delete_existing(b"counter").expect("delete"), "{place:?}");
        assert_eq!(db.get(b"live").expect("get"), None, "{place:?}");
        assert_eq!(db.get(b"counter").expect("get"), None, "{place:?}");
        assert!(
            !db.delete_existing(b"live").expect("delete"),
            "{place:?}: once"
        );
        assert_eq!(
            ks.get(b"live").expect("get").as_deref(),
            Some(&b"elsewhere"[..]),
            "{place:?}: another keyspace's key stays"
        );
        assert!(ks.delete_existing(b"live").expect("delete"), "{place:?}");
        assert!(!ks.contains_key(b"live").expect("contains"), "{place:?}");

        drop(ks);
        db.close().expect("close");
        let db = Db::open(dir.path().join("db"), Options::default()).expect("reopen");
        assert_eq!(db.get(b"live").expect("get"), None, "{place:?}: durable");
    }
}

/// `try_put` and `try_delete` commit when nothing has to wait and say so
/// otherwise, writing nothing; what they commit reads back and survives a
/// reopen.
#[test]
fn writes_that_may_not_wait_commit_or_say_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = Db::open(&path, Options::default()).expect("open");
    let key = |i: u32| format!("k{i:04}").into_bytes();
    let mut without_waiting = 0;
    for i in 0..1000 {
        if db.try_put(&key(i), b"v").expect("try_put") {
            without_waiting += 1;
        } else {
            db.put(&key(i), b"v").expect("put");
        }
    }
    // Only the first write maps the WAL's window; file systems without
    // mappings always use system calls.
    if cfg!(target_os = "linux") {
        assert!(
            without_waiting >= 990,
            "{without_waiting} of 1000 without waiting"
        );
    }
    assert!(db.try_delete(&key(0)).expect("try_delete") || cfg!(not(target_os = "linux")));
    if db.get(&key(0)).expect("get").is_some() {
        db.delete(&key(0)).expect("delete");
    }
    // A value for a blob file always waits, and is not written.
    let large = vec![7u8; 1 << 20];
    assert!(!db.try_put(b"large", &large).expect("try_put large"));
    assert_eq!(db.get(b"large").expect("get"), None);
    // Bad input keeps its error.
    let long = vec![b'k'; lamina::MAX_KEY_LEN + 1];
    assert!(matches!(
        db.try_put(&long, b"v"),
        Err(Error::InvalidArgument(_))
    ));
    db.close().expect("close");

    let db = Db::open(&path, Options::default()).expect("reopen");
    assert_eq!(db.get(&key(0)).expect("get"), None);
    for i in 1..1000 {
        assert_eq!(
            db.get(&key(i)).expect("get"),
            Some(b"v".to_vec()),
            "key {i}"
        );
    }
    db.close().expect("close");

    // A `Sync` commit always waits for its sync.
    let opts = Options {
        durability: Durability::Sync,
        ..Options::default()
    };
    let db = Db::open(&path, opts).expect("reopen for sync");
    assert!(!db.try_put(b"synced", b"v").expect("try_put"));
    assert_eq!(db.get(b"synced").expect("get"), None);
}

/// A point read borrows the tables it opened from the published view
/// (`db/table_handles.rs`): after a flush puts a newer table in front of
/// them and a compaction replaces them, reads go to the tables the new
/// version lists, not to those the last view kept at the same places; and
/// with fewer open tables allowed than the version lists, none are kept.
#[test]
fn reads_follow_the_tables_each_new_version_lists() {
    for max_open_tables in [1000, 1] {
        let dir = tempfile::tempdir().expect("tempdir");
        let opts = || Options {
            max_open_tables,
            ..Options::default()
        };
        // Two level-0 tables when the database opens, so that the first
        // view published holds both.
        let db = Db::open(dir.path().join("db"), opts()).expect("open");
        db.put(b"a", b"1").expect("put");
        db.flush().expect("flush");
        db.put(b"b", b"2").expect("put");
        db.flush().expect("flush");
        drop(db);
        let db = Db::open(dir.path().join("db"), opts()).expect("reopen");
        let get = |k: &[u8]| db.get(k).expect("get");
        assert_eq!(get(b"a").as_deref(), Some(&b"1"[..]));
        assert_eq!(get(b"b").as_deref(), Some(&b"2"[..]));
        // The newest table now comes first in level 0, where the table
        // holding `b` was when it was read, and `a`'s first table second.
        db.put(b"a", b"3").expect("put");
        db.flush().expect("flush");
        assert_eq!(
            get(b"a").as_deref(),
            Some(&b"3"[..]),
            "max_open_tables {max_open_tables}"
        );
        assert_eq!(get(b"b").as_deref(), Some(&b"2"[..]));
        db.delete(b"b").expect("delete");
        db.flush().expect("flush");
        db.compact().expect("compact");
        assert_eq!(get(b"a").as_deref(), Some(&b"3"[..]));
        assert_eq!(get(b"b"), None);
        assert!(db.contains_key(b"a").expect("contains"));
    }
}
