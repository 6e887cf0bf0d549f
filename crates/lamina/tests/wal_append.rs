//! An open after a clean close goes on writing the last WAL segment after
//! its records, over its END (docs/format.md#appending-to-a-closed-segment).
//! A crash at any write of such a session, and a power loss in the middle
//! of any session (with a random part of the unsynced bytes written back),
//! leave the database as it was after a prefix of the writes, holding every
//! write acknowledged durable; and no write a power loss took away ever
//! comes back in a later session, which is what records of an earlier
//! session lying after the point where appending starts would do.

use lamina::fs::{FaultFs, FaultKind, FileSystem, MemFs};
use lamina::{Batch, Db, Durability, Options};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
/// Writes in the order they were made: key, value.
type History = Vec<(Vec<u8>, Vec<u8>)>;

const DB: &str = "/append";

fn opts(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        fs,
        ..Options::default()
    }
}

fn contents(db: &Db) -> Model {
    db.iter().collect::<Result<_, _>>().expect("iterate")
}

/// The state after the first `n` writes of `history`.
fn state(history: &[(Vec<u8>, Vec<u8>)], n: usize) -> Model {
    history.iter().take(n).cloned().collect()
}

fn write(db: &Db, key: &[u8], value: &[u8], durability: Durability) -> lamina::Result<()> {
    let mut b = Batch::new();
    b.put(key, value);
    db.write_with(b, durability)
}

/// How many of `history`'s writes `got` is the state after: at least
/// `durable` of them. Panics, naming `what`, if it is after none.
fn prefix_of(got: &Model, history: &[(Vec<u8>, Vec<u8>)], durable: usize, what: &str) -> usize {
    (durable..=history.len())
        .rev()
        .find(|&n| state(history, n) == *got)
        .unwrap_or_else(|| {
            panic!(
                "{what}: the database ({} keys) is not the state after {durable} to {} writes",
                got.len(),
                history.len()
            )
        })
}

fn wal_names(fs: &MemFs) -> Vec<String> {
    fs.file_names(Path::new(DB))
        .into_iter()
        .filter(|n| n.ends_with(".wal"))
        .collect()
}

/// The value of write `i` of a session: long enough that a session's
/// records pass the zeros the segment was left with.
fn value(session: u64, i: u64) -> Vec<u8> {
    format!("{session}-{i}-{}", "v".repeat((i * 53 % 400) as usize)).into_bytes()
}

/// A failure at every write of a session that appends to the segment the
/// previous close left (each `Sync` one in its turn, and the close's END),
/// then a power loss: the database is as after a prefix of the writes, at
/// least up to the last acknowledged `Sync` one; a durable write after
/// reopening survives a second power loss, with nothing of the lost tail
/// on top of it.
#[test]
fn a_failed_write_while_appending_then_a_power_loss_keeps_a_prefix() {
    let path = Path::new(DB);
    let mut k = 0u64;
    loop {
        let mem = MemFs::new();
        let mut history = History::new();
        for session in 0..3u64 {
            let db = Db::open(path, opts(Arc::new(mem.clone()))).expect("open");
            for i in 0..4 {
                let (key, v) = (format!("k{}", i % 3).into_bytes(), value(session, i));
                write(&db, &key, &v, Durability::Os).expect("write");
                history.push((key, v));
            }
            db.close().expect("close");
        }
        let wals = wal_names(&mem);
        let faulty = FaultFs::new(Arc::new(mem.clone()));
        faulty.faults().fail_after(FaultKind::Write, k);
        let db = Db::open(path, opts(Arc::new(faulty))).expect("open to append");
        assert_eq!(wal_names(&mem), wals, "the open appends: no new segment");
        let mut durable = history.len();
        let mut failed = false;
        for i in 0..12u64 {
            let (key, v) = (format!("k{}", i % 5).into_bytes(), value(9, i));
            let d = if i % 4 == 3 {
                Durability::Sync
            } else {
                Durability::Os
            };
            if write(&db, &key, &v, d).is_err() {
                failed = true;
                break;
            }
            history.push((key, v));
            if d == Durability::Sync {
                durable = history.len();
            }
        }
        match db.close() {
            Ok(()) if !failed => durable = history.len(),
            _ => failed = true,
        }
        for seed in [None, Some(k), Some(k + 5000)] {
            let crashed = match seed {
                None => mem.crash_clone(),
                Some(s) => mem.crash_clone_with(s),
            };
            let what = format!("write {k}, seed {seed:?}");
            let db = Db::open(path, opts(Arc::new(crashed.clone())))
                .unwrap_or_else(|e| panic!("{what}: open after the crash failed: {e}"));
            let n = prefix_of(&contents(&db), &history, durable, &what);
            let report = db.check().expect("check");
            assert!(report.is_ok(), "{what}: {:?}", report.problems);
            write(&db, b"after", b"the crash", Durability::Sync).expect("durable write");
            let second = crashed.crash_clone_with(k + 17);
            drop(db);
            let db = Db::open(path, opts(Arc::new(second)))
                .unwrap_or_else(|e| panic!("{what}: open after a second crash failed: {e}"));
            let mut want = state(&history, n);
            want.insert(b"after".to_vec(), b"the crash".to_vec());
            assert_eq!(
                contents(&db),
                want,
                "{what}: not the state after {n} writes and the durable one"
            );
        }
        if !failed {
            break;
        }
        k += 1;
    }
    assert!(k >= 12, "the session passed only {k} writes");
}

/// A power loss in the middle of a session that wrote past the zeros its
/// segment was left with, where the disk kept a later page of the session
/// but not the earlier ones (pages are written back in any order): END is
/// still there, and records of the lost session lie after it. The next
/// session must not append there: had it done so, its own records (of the
/// same lengths) would end exactly where a lost one begins, and after a
/// second power loss the lost writes would be read as its own.
#[test]
fn records_a_power_loss_left_after_end_are_never_read_as_a_later_sessions() {
    let path = Path::new(DB);
    let fs = MemFs::new();
    let db = Db::open(path, opts(Arc::new(fs.clone()))).expect("create");
    write(&db, b"k0", b"first", Durability::Os).expect("write");
    db.close().expect("close");
    let [segment] = wal_names(&fs).try_into().expect("one segment");
    let segment = path.join(segment);
    let zeros_end = fs.file_size(&segment).expect("size");
    let record = |tag: &str, i: u64| -> (Vec<u8>, Vec<u8>) {
        let key = format!("k{}", i % 3).into_bytes();
        (key, format!("{tag}{i:03}{}", "x".repeat(200)).into_bytes())
    };
    let db = Db::open(path, opts(Arc::new(fs.clone()))).expect("open");
    for i in 0..40 {
        let (key, v) = record("lost", i);
        write(&db, &key, &v, Durability::Os).expect("write");
    }
    let page_cache = fs.read_all(&segment).expect("read");
    assert!(
        page_cache.len() as u64 > zeros_end + 2000,
        "the session wrote past the zeros"
    );
    let crashed = fs.crash_clone();
    drop(db);
    {
        let mut f = crashed.reopen(&segment).expect("reopen");
        let kept = page_cache
            .get(zeros_end as usize..)
            .expect("past the zeros");
        f.write_at(zeros_end, kept)
            .expect("write the page the disk kept");
        f.sync_data().expect("sync");
    }
    let db = Db::open(path, opts(Arc::new(crashed.clone()))).expect("open after the power loss");
    let mut want = Model::from([(b"k0".to_vec(), b"first".to_vec())]);
    assert_eq!(contents(&db), want, "no lost write is there");
    for i in 0..30 {
        let (key, v) = record("kept", i);
        write(&db, &key, &v, Durability::Sync).expect("durable write");
        want.insert(key, v);
    }
    let second = crashed.crash_clone();
    drop(db);
    let db = Db::open(path, opts(Arc::new(second))).expect("open after a second power loss");
    // Each value named by its first 7 bytes: "kept029", never "lost039".
    let named = |m: &Model| -> Vec<String> {
        m.iter()
            .map(|(k, v)| {
                let tag = v.get(..7).unwrap_or(v);
                format!(
                    "{}={}",
                    String::from_utf8_lossy(k),
                    String::from_utf8_lossy(tag)
                )
            })
            .collect()
    };
    assert_eq!(
        named(&contents(&db)),
        named(&want),
        "the durable writes, and none of the lost session's"
    );
    assert!(db.check().expect("check").is_ok());
}

/// Sessions that append, each of a random number of writes (some
/// durable), ended by a clean close or by a power loss in their middle
/// that writes back a random part of what was not synced, over many seeds:
/// after each power loss the database is as after a prefix of the writes,
/// holding every write acknowledged durable, and the writes it lost stay
/// lost in every later session (a lost write that came back would show as
/// a state after no prefix).
#[test]
fn writes_a_power_loss_took_never_come_back_in_a_later_session() {
    let path = Path::new(DB);
    let mut appended = 0;
    let mut crashes = 0;
    for seed in 0..120u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut fs = MemFs::new();
        let mut history = History::new();
        let mut durable = 0;
        for session in 0..8u64 {
            let wals = wal_names(&fs);
            let db = Db::open(path, opts(Arc::new(fs.clone())))
                .unwrap_or_else(|e| panic!("seed {seed} session {session}: open failed: {e}"));
            if !wals.is_empty() && wal_names(&fs) == wals {
                appended += 1;
            }
            let what = format!("seed {seed} session {session}");
            assert_eq!(
                contents(&db),
                state(&history, history.len()),
                "{what}: at open"
            );
            let writes = rng.gen_range(1..30u64);
            let power_loss = rng.gen_bool(0.5).then(|| rng.gen_range(0..=writes));
            for i in 0..writes {
                if power_loss == Some(i) {
                    break;
                }
                let key = format!("k{}", rng.gen_range(0..5)).into_bytes();
                let v = value(session, i);
                let d = if rng.gen_ratio(1, 6) {
                    Durability::Sync
                } else {
                    Durability::Os
                };
                write(&db, &key, &v, d).expect("write");
                history.push((key, v));
                if d == Durability::Sync {
                    durable = history.len();
                }
            }
            if power_loss.is_none() {
                db.close().expect("close");
                durable = history.len();
                continue;
            }
            crashes += 1;
            let crashed = fs.crash_clone_with(rng.gen());
            drop(db);
            fs = crashed;
            let db = Db::open(path, opts(Arc::new(fs.clone())))
                .unwrap_or_else(|e| panic!("{what}: open after the power loss failed: {e}"));
            let n = prefix_of(&contents(&db), &history, durable, &what);
            history.truncate(n);
            durable = n;
            let report = db.check().expect("check");
            assert!(report.is_ok(), "{what}: {:?}", report.problems);
            db.close().expect("close");
        }
    }
    assert!(
        appended > 200 && crashes > 200,
        "{appended} opens appended, {crashes} power losses"
    );
}
