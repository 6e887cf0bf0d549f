//! Transactions: serializable commits by validation, read-your-own-writes,
//! and `transact`'s retries under contention.

use lamina::{Db, Error, Options};
use std::time::{Duration, Instant};

fn open(dir: &tempfile::TempDir) -> Db {
    Db::open(dir.path().join("db"), Options::default()).expect("open")
}

fn counter(v: u64) -> [u8; 8] {
    v.to_le_bytes()
}

fn as_u64(v: Option<Vec<u8>>) -> u64 {
    let bytes = v.expect("value");
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

fn is_conflict(r: lamina::Result<()>) -> bool {
    matches!(r, Err(Error::Conflict(_)))
}

#[test]
fn transfers_between_accounts_keep_the_total_and_every_transfer() {
    const ACCOUNTS: u64 = 16;
    const START: u64 = 1_000;
    let dir = tempfile::tempdir().expect("tempdir");
    // A small memtable: flushes happen during the run, and the transfers
    // they make unverifiable are retried too.
    let opts = Options {
        memtable_size: 256 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path().join("db"), opts).expect("open");
    for a in 0..ACCOUNTS {
        db.put(format!("acct/{a:02}").as_bytes(), &counter(START))
            .expect("put");
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    let committed: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8u64)
            .map(|t| {
                let db = db.clone();
                s.spawn(move || transfer_until(&db, t, deadline))
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).sum()
    });
    assert!(committed > 0, "no transfer committed");
    // Every balance is what the logged transfers make of the start (in
    // any order: signed, since the log's order is not the commits').
    let mut want = vec![START as i64; ACCOUNTS as usize];
    let mut logged = 0u64;
    for item in db.prefix(b"log/") {
        let (_, v) = item.expect("log");
        let text = String::from_utf8(v).expect("utf-8");
        let parts: Vec<i64> = text
            .split(' ')
            .map(|p| p.parse().expect("number"))
            .collect();
        let (from, to, amount) = (parts[0] as usize, parts[1] as usize, parts[2]);
        want[from] -= amount;
        want[to] += amount;
        logged += 1;
    }
    assert_eq!(
        logged, committed,
        "a committed transfer is missing from the log"
    );
    let mut total = 0;
    for (a, want) in want.iter().enumerate() {
        let got = as_u64(db.get(format!("acct/{a:02}").as_bytes()).expect("get"));
        assert_eq!(got as i64, *want, "account {a}");
        total += got;
    }
    assert_eq!(total, ACCOUNTS * START);
    let stats = db.stats();
    assert_eq!(stats.txn_commits, committed);
}

/// Transfers between random accounts until `deadline`; returns how many
/// committed.
fn transfer_until(db: &Db, t: u64, deadline: Instant) -> u64 {
    let mut seed = t.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut n = 0;
    while Instant::now() < deadline {
        let (from, to, amount) = (next() % 16, next() % 16, next() % 50 + 1);
        if from == to {
            continue;
        }
        let log = format!("log/{t}/{n:06}");
        let moved = db
            .transact(|tx| {
                let a = format!("acct/{from:02}");
                let b = format!("acct/{to:02}");
                let have = as_u64(tx.get(a.as_bytes())?);
                if have < amount {
                    return Ok(false);
                }
                let other = as_u64(tx.get(b.as_bytes())?);
                tx.put(a.as_bytes(), &counter(have - amount))?;
                tx.put(b.as_bytes(), &counter(other + amount))?;
                tx.put(log.as_bytes(), format!("{from} {to} {amount}").as_bytes())?;
                Ok(true)
            })
            .expect("transfer");
        n += u64::from(moved);
    }
    n
}

#[test]
fn write_skew_is_refused_one_of_two_conflicts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    db.put(b"x", b"1").expect("put");
    db.put(b"y", b"1").expect("put");
    // Each keeps "at least one is 1" by reading both and clearing one.
    let mut t1 = db.transaction();
    let mut t2 = db.transaction();
    for tx in [&t1, &t2] {
        assert_eq!(tx.get(b"x").expect("get"), Some(b"1".to_vec()));
        assert_eq!(tx.get(b"y").expect("get"), Some(b"1".to_vec()));
    }
    t1.put(b"x", b"0").expect("put");
    t2.put(b"y", b"0").expect("put");
    t1.commit().expect("the first commits");
    let second = t2.commit();
    match &second {
        Err(Error::Conflict(why)) => assert!(why.contains("\"x\""), "{why}"),
        other => panic!("the second must conflict, got {other:?}"),
    }
    assert_eq!(db.get(b"y").expect("get"), Some(b"1".to_vec()));
    let stats = db.stats();
    assert_eq!((stats.txn_commits, stats.txn_conflicts), (1, 1));
}

#[test]
fn a_scan_conflicts_with_an_insert_into_its_range() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    db.put(b"p/1", b"a").expect("put");
    db.put(b"p/2", b"b").expect("put");
    let mut tx = db.transaction();
    let seen = tx.prefix(b"p/").count();
    assert_eq!(seen, 2);
    tx.put(b"count", seen.to_string().as_bytes()).expect("put");
    // A key outside the prefix does not matter; one inside is a phantom.
    db.put(b"q/1", b"c").expect("put");
    db.put(b"p/15", b"d").expect("put");
    assert!(
        is_conflict(tx.commit()),
        "an insert into the scanned prefix"
    );
    assert_eq!(db.get(b"count").expect("get"), None, "nothing written");

    let mut tx = db.transaction();
    assert_eq!(tx.range(&b"p/"[..]..&b"p/2"[..]).count(), 2);
    tx.put(b"count", b"2").expect("put");
    db.put(b"p/3", b"outside the range").expect("put");
    db.put(b"o", b"before it").expect("put");
    tx.commit()
        .expect("writes outside the range do not conflict");
}

#[test]
fn reads_see_own_puts_deletes_and_merges_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    for k in ["a", "b", "c", "d"] {
        db.put(k.as_bytes(), k.as_bytes()).expect("put");
    }
    db.put(b"n", &counter(10)).expect("put");
    let mut tx = db.transaction();
    tx.put(b"b", b"B").expect("put");
    tx.delete(b"c").expect("delete");
    tx.put(b"e", b"E").expect("put");
    tx.merge(b"n", &counter(5)).expect("merge");
    tx.merge(b"m", &counter(2)).expect("merge");
    tx.merge(b"m", &counter(3)).expect("merge");
    assert_eq!(tx.get(b"b").expect("get"), Some(b"B".to_vec()));
    assert_eq!(tx.get(b"c").expect("get"), None);
    assert!(!tx.contains_key(b"c").expect("contains"));
    assert!(tx.contains_key(b"m").expect("contains"));
    assert_eq!(as_u64(tx.get(b"n").expect("get")), 15);
    assert_eq!(as_u64(tx.get(b"m").expect("get")), 5);
    // Not visible outside before the commit.
    assert_eq!(db.get(b"b").expect("get"), Some(b"b".to_vec()));
    let items: Vec<(Vec<u8>, Vec<u8>)> = tx.iter().collect::<lamina::Result<_>>().expect("iter");
    let keys: Vec<&[u8]> = items.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(keys, [&b"a"[..], b"b", b"d", b"e", b"m", b"n"]);
    assert_eq!(items[1].1, b"B");
    assert_eq!(items[5].1, counter(15));
    assert_eq!(
        tx.range(&b"z"[..]..&b"a"[..]).count(),
        0,
        "bounds the wrong way round"
    );
    let back: Vec<Vec<u8>> = tx.iter().rev().map(|e| e.expect("entry").0).collect();
    assert_eq!(back, [&b"n"[..], b"m", b"e", b"d", b"b", b"a"]);
    // A put after merges replaces them; a delete after a put hides it.
    tx.put(b"m", &counter(100)).expect("put");
    tx.merge(b"m", &counter(1)).expect("merge");
    tx.delete(b"e").expect("delete");
    assert_eq!(as_u64(tx.get(b"m").expect("get")), 101);
    assert_eq!(tx.get(b"e").expect("get"), None);
    tx.commit().expect("commit");
    assert_eq!(db.get(b"b").expect("get"), Some(b"B".to_vec()));
    assert_eq!(db.get(b"c").expect("get"), None);
    assert_eq!(db.get(b"e").expect("get"), None);
    assert_eq!(as_u64(db.get(b"m").expect("get")), 101);
    assert_eq!(as_u64(db.get(b"n").expect("get")), 15);
}

#[test]
fn a_flush_of_newer_writes_makes_the_commit_unverifiable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    db.put(b"k", b"1").expect("put");
    // A flush of writes older than the snapshot is fine.
    let mut tx = db.transaction();
    tx.get(b"k").expect("get");
    db.flush().expect("flush");
    tx.put(b"k", b"2").expect("put");
    tx.commit()
        .expect("nothing newer than the snapshot reached a table");
    // A flush of a write after it, even to another key, is not.
    let mut tx = db.transaction();
    tx.get(b"k").expect("get");
    db.put(b"other", b"x").expect("put");
    db.flush().expect("flush");
    tx.put(b"k", b"3").expect("put");
    match tx.commit() {
        Err(Error::Conflict(why)) => assert!(why.contains("flush"), "{why}"),
        other => panic!("expected an unverifiable conflict, got {other:?}"),
    }
    let stats = db.stats();
    assert_eq!(stats.txn_conflicts_unverifiable, 1);
    assert_eq!(stats.txn_conflicts, 1);
    assert_eq!(db.get(b"k").expect("get"), Some(b"2".to_vec()));
}

#[test]
fn a_plain_write_after_the_snapshot_to_a_read_key_conflicts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    db.put(b"k", b"1").expect("put");
    let mut tx = db.transaction();
    assert_eq!(tx.get(b"k").expect("get"), Some(b"1".to_vec()));
    assert_eq!(tx.get(b"missing").expect("get"), None);
    tx.put(b"out", b"x").expect("put");
    db.put(b"unread", b"2").expect("put");
    let mut again = db.transaction();
    again.get(b"missing").expect("get");
    again.put(b"out", b"y").expect("put");
    db.put(b"k", b"2").expect("put");
    match tx.commit() {
        Err(Error::Conflict(why)) => {
            assert!(why.contains("key \"k\" in the default keyspace"), "{why}")
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    // A key found missing counts as read too.
    db.put(b"missing", b"now here").expect("put");
    assert!(is_conflict(again.commit()));
    assert_eq!(db.get(b"out").expect("get"), None);
}

#[test]
fn dropped_transactions_write_nothing_and_read_only_ones_commit_for_free() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    db.put(b"k", b"1").expect("put");
    {
        let mut tx = db.transaction();
        tx.put(b"k", b"2").expect("put");
        tx.put(b"new", b"x").expect("put");
    }
    let mut tx = db.transaction();
    tx.put(b"new", b"y").expect("put");
    tx.rollback();
    assert_eq!(db.get(b"k").expect("get"), Some(b"1".to_vec()));
    assert_eq!(db.get(b"new").expect("get"), None);
    let commits = db.stats().commits;
    let tx = db.transaction();
    assert_eq!(tx.get(b"k").expect("get"), Some(b"1".to_vec()));
    db.put(b"k", b"changed").expect("put");
    assert!(tx.is_read_only());
    tx.commit()
        .expect("a read-only transaction commits, whatever changed");
    let stats = db.stats();
    assert_eq!(stats.commits, commits + 1, "only the put committed");
    assert_eq!((stats.txn_commits, stats.txn_conflicts), (0, 0));
}

#[test]
fn transactions_span_keyspaces_atomically() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    let users = db.keyspace("users").expect("keyspace");
    let index = db.keyspace("index").expect("keyspace");
    let mut tx = db.transaction();
    tx.put_in(&users, b"1", b"ada").expect("put");
    tx.put_in(&index, b"ada", b"1").expect("put");
    assert_eq!(tx.get_in(&users, b"1").expect("get"), Some(b"ada".to_vec()));
    assert_eq!(
        tx.get(b"1").expect("get"),
        None,
        "the default keyspace is apart"
    );
    assert_eq!(tx.iter_in(&index).count(), 1);
    tx.commit().expect("commit");
    assert_eq!(index.get(b"ada").expect("get"), Some(b"1".to_vec()));
    // A write in one keyspace does not conflict with a read of the same
    // key in another.
    let mut tx = db.transaction();
    tx.get_in(&users, b"1").expect("get");
    tx.put_in(&users, b"1", b"ada lovelace").expect("put");
    index.put(b"1", b"other keyspace").expect("put");
    tx.commit().expect("commit");
    let mut tx = db.transaction();
    assert!(tx.contains_key_in(&users, b"1").expect("contains"));
    tx.delete_in(&users, b"1").expect("delete");
    users.put(b"1", b"changed").expect("put");
    assert!(is_conflict(tx.commit()));
}

#[test]
fn transact_returns_the_closure_value_and_makes_progress_under_contention() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    db.put(b"n", &counter(0)).expect("put");
    let threads = 8u64;
    let each = 100u64;
    std::thread::scope(|s| {
        for _ in 0..threads {
            let db = db.clone();
            s.spawn(move || {
                for _ in 0..each {
                    let seen = db
                        .transact(|tx| {
                            let n = as_u64(tx.get(b"n")?);
                            tx.put(b"n", &counter(n + 1))?;
                            Ok(n)
                        })
                        .expect("increment");
                    assert!(seen < threads * each);
                }
            });
        }
    });
    assert_eq!(as_u64(db.get(b"n").expect("get")), threads * each);
    let stats = db.stats();
    assert_eq!(stats.txn_commits, threads * each);
    // An error of the closure is returned, not retried, and writes nothing.
    let out: lamina::Result<()> = db.transact(|tx| {
        tx.put(b"n", &counter(0))?;
        Err(Error::InvalidArgument("changed my mind".into()))
    });
    assert!(matches!(out, Err(Error::InvalidArgument(_))));
    assert_eq!(as_u64(db.get(b"n").expect("get")), threads * each);
    // Retries spent: the last conflict comes back.
    let mut runs = 0;
    let out = db.transact_with(2, |tx| {
        runs += 1;
        tx.get(b"n")?;
        db.put(b"n", &counter(runs))?;
        tx.put(b"seen", b"")
    });
    assert!(is_conflict(out));
    assert_eq!(runs, 3);
}

#[test]
fn bad_input_is_refused_when_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(&dir);
    let mut tx = db.transaction();
    let long = vec![0u8; lamina::MAX_KEY_LEN + 1];
    assert!(matches!(
        tx.put(&long, b"v"),
        Err(Error::InvalidArgument(_))
    ));
    // The default merge operator adds 8-byte counters.
    assert!(matches!(
        tx.merge(b"n", b"not 8 bytes"),
        Err(Error::Merge(_))
    ));
    tx.commit().expect("nothing to write");
}

/// A database on a memory file system whose syncs a test can hold, with
/// `Durability::Sync` as the default.
fn open_held() -> (Db, std::sync::Arc<lamina::fs::Faults>) {
    use lamina::fs::{FaultFs, MemFs};
    let faulty = FaultFs::new(std::sync::Arc::new(MemFs::new()));
    let faults = faulty.faults();
    let opts = Options {
        fs: std::sync::Arc::new(faulty),
        durability: lamina::Durability::Sync,
        ..Options::default()
    };
    let db = Db::open(std::path::Path::new("/db"), opts).expect("open");
    (db, faults)
}

/// Releases held syncs when dropped: a failed assertion inside a thread
/// scope must not leave the scope waiting for a writer whose sync is held.
struct ReleaseOnDrop<'a>(&'a lamina::fs::Faults);

impl Drop for ReleaseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.release_syncs();
    }
}

/// Waits until `n` syncs are held.
fn until_held(faults: &lamina::fs::Faults, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while faults.syncs_waiting() < n {
        assert!(Instant::now() < deadline, "no sync reached the file system");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What became of a `Sync` put of `a` (2 over 1) whose sync was held, and
/// of two transactions begun while it waited, each reading `a` (asserted:
/// 2, where a plain read still sees 1) and committing on a thread of its
/// own: one writing `b` = `a` + 1, one writing nothing.
struct BehindAHeldSync {
    /// Whether the put, the commit and the read-only commit returned within
    /// 50 ms while the sync was held.
    returned_while_held: [bool; 3],
    put: lamina::Result<()>,
    commit: lamina::Result<()>,
    read_only: lamina::Result<()>,
}

/// Runs the case of [`BehindAHeldSync`] on a fresh database; `fail`: the
/// held sync fails when let go.
fn behind_a_held_sync(fail: bool) -> (Db, BehindAHeldSync) {
    let (db, faults) = open_held();
    db.put(b"a", &counter(1)).expect("put");
    faults.hold_syncs();
    let seen = std::thread::scope(|s| {
        let _release = ReleaseOnDrop(&faults);
        let first = s.spawn(|| db.put(b"a", &counter(2)));
        until_held(&faults, 1);
        assert_eq!(as_u64(db.get(b"a").expect("get")), 1, "not durable yet");
        let mut tx = db.transaction();
        let a = as_u64(tx.get(b"a").expect("get"));
        assert_eq!(a, 2, "a transaction reads the write waiting for its sync");
        tx.put(b"b", &counter(a + 1)).expect("put");
        let read_only = db.transaction();
        assert_eq!(as_u64(read_only.get(b"a").expect("get")), 2);
        let commit = s.spawn(move || tx.commit());
        let commit_ro = s.spawn(move || read_only.commit());
        std::thread::sleep(Duration::from_millis(50));
        let returned_while_held = [
            first.is_finished(),
            commit.is_finished(),
            commit_ro.is_finished(),
        ];
        if fail {
            faults.fail_after(lamina::fs::FaultKind::Sync, 0);
        }
        faults.release_syncs();
        BehindAHeldSync {
            returned_while_held,
            put: first.join().expect("put thread"),
            commit: commit.join().expect("commit thread"),
            read_only: commit_ro.join().expect("commit thread"),
        }
    });
    (db, seen)
}

#[test]
fn a_transaction_reads_a_write_waiting_for_its_sync_and_commits_after_it() {
    let (db, seen) = behind_a_held_sync(false);
    let [put, commit, read_only] = seen.returned_while_held;
    assert!(!put, "the held sync let the put go");
    assert!(!commit, "a commit returned before what it read was durable");
    assert!(
        !read_only,
        "a read-only commit returned before what it read was durable"
    );
    seen.put.expect("put");
    seen.commit.expect("commit");
    seen.read_only.expect("read-only commit");
    assert_eq!(as_u64(db.get(b"b").expect("get")), 3);
    let stats = db.stats();
    assert_eq!((stats.txn_commits, stats.txn_conflicts), (1, 0));
}

#[test]
fn a_transaction_that_read_a_write_whose_sync_failed_does_not_commit() {
    let (_db, seen) = behind_a_held_sync(true);
    assert!(seen.put.is_err(), "the sync failed");
    let (commit, read_only) = (seen.commit, seen.read_only);
    assert!(
        commit.is_err(),
        "committed after a write it read was lost: {commit:?}"
    );
    assert!(
        read_only.is_err(),
        "a read-only commit said a lost write was read: {read_only:?}"
    );
}
