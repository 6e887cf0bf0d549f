//! Crash tests on the in-memory file system: after every operation of a
//! workload that flushes and compacts constantly, simulate a power loss
//! (dropping unsynced bytes, or keeping a random prefix of them), reopen, and
//! check that nothing acknowledged as durable is lost and nothing torn shows.

use lamina::fs::MemFs;
use lamina::{Batch, Db, Durability, Options};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn opts(fs: &MemFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        memtable_size: 2 << 10,
        block_size: 128,
        l0_compaction_trigger: 2,
        level_base_size: 8 << 10,
        level_multiplier: 3,
        target_table_size: 4 << 10,
        ..Options::default()
    }
}

fn contents(db: &Db) -> Model {
    db.iter()
        .collect::<Result<_, _>>()
        .expect("iterate after crash")
}

#[test]
fn crash_after_every_operation() {
    let fs = MemFs::new();
    let path = Path::new("/crash");
    let db = Db::open(path, opts(&fs)).expect("open");
    let mut model = Model::new();
    // States the database may legally be in after a crash: the one at the
    // last durable point and every later one.
    let mut allowed: Vec<Model> = vec![Model::new()];
    for i in 0u64..300 {
        let durability = match i % 5 {
            0 => Durability::Sync,
            1 | 2 => Durability::Os,
            _ => Durability::None,
        };
        let mut b = Batch::new();
        let k = format!("key{:03}", (i * 37) % 101).into_bytes();
        if i % 11 == 3 {
            b.delete(&k);
            model.remove(&k);
        } else {
            let v = format!("value {i} {}", "v".repeat((i % 40) as usize)).into_bytes();
            b.put(&k, &v);
            model.insert(k, v);
        }
        db.write_with(b, durability).expect("write");
        if i % 50 == 49 {
            db.sync().expect("sync");
            allowed.clear();
        } else if durability == Durability::Sync {
            allowed.clear();
        }
        allowed.push(model.clone());
        for (n, crashed) in [fs.crash_clone(), fs.crash_clone_with(i)]
            .into_iter()
            .enumerate()
        {
            let reopened = Db::open(path, opts(&crashed))
                .unwrap_or_else(|e| panic!("op {i} crash {n}: open failed: {e}"));
            let got = contents(&reopened);
            assert!(
                allowed.contains(&got),
                "op {i} crash {n}: state after crash is not one the writes allowed ({} keys)",
                got.len()
            );
            let report = reopened.check().expect("check");
            assert!(report.is_ok(), "op {i} crash {n}: {:?}", report.problems);
            reopened.close().expect("close");
        }
    }
    db.close().expect("close");
    let after_close = Db::open(path, opts(&fs.crash_clone())).expect("open after close and crash");
    assert!(
        contents(&after_close) == model,
        "close must make every write durable"
    );
}

#[test]
fn crash_during_background_work_keeps_synced_writes() {
    // Writes go on while flushes and compactions run in the background; crash
    // clones taken at arbitrary moments must all hold every synced write.
    let fs = MemFs::new();
    let path = Path::new("/bg");
    let db = Db::open(path, opts(&fs)).expect("open");
    let mut synced = 0u64;
    for i in 0u64..2000 {
        let d = if i % 10 == 9 {
            Durability::Sync
        } else {
            Durability::None
        };
        let mut b = Batch::new();
        b.put(format!("k{i:06}").as_bytes(), &i.to_le_bytes());
        db.write_with(b, d).expect("write");
        if d == Durability::Sync {
            synced = i + 1;
        }
        if i % 97 == 0 {
            let crashed = fs.crash_clone_with(i);
            let r = Db::open(path, opts(&crashed)).expect("open crash clone");
            for j in (0..synced).step_by(13).chain(synced.checked_sub(1)) {
                let got = r.get(format!("k{j:06}").as_bytes()).expect("get");
                assert_eq!(
                    got,
                    Some(j.to_le_bytes().to_vec()),
                    "op {i}: synced key {j} lost"
                );
            }
            r.close().expect("close");
        }
    }
    let stats = db.stats();
    assert!(
        stats.flushes > 5 && stats.compactions + stats.trivial_moves > 0,
        "{stats:?}"
    );
}

#[test]
fn synced_writes_after_recovering_from_a_crash_survive_the_next_crash() {
    for seed in 0..40u64 {
        let fs = MemFs::new();
        let path = Path::new("/twice");
        let db = Db::open(path, opts(&fs)).expect("open");
        for i in 0..200u64 {
            let d = if i % 3 == 0 {
                Durability::None
            } else {
                Durability::Os
            };
            let mut b = Batch::new();
            b.put(format!("a{i:04}").as_bytes(), &[i as u8; 30]);
            db.write_with(b, d).expect("write");
        }
        let first = fs.crash_clone_with(seed);
        let db2 = Db::open(path, opts(&first)).expect("open after first crash");
        let mut b = Batch::new();
        b.put(b"after", b"crash");
        db2.write_with(b, Durability::Sync).expect("sync write");
        let second = first.crash_clone_with(seed + 1000);
        let files = second.file_names(path);
        let db3 = Db::open(path, opts(&second)).expect("open after second crash");
        assert_eq!(
            db3.get(b"after").expect("get"),
            Some(b"crash".to_vec()),
            "seed {seed}: a synced write was lost; files after the second crash: {files:?}, before: {:?}",
            first.file_names(path)
        );
        drop(db);
    }
}

/// A power loss at every sync point of a workload whose tiny memtables start
/// a new WAL segment every few writes (each recorded in the manifest before
/// anything in it is acknowledged): every write acknowledged as durable is
/// there after the crash, and the database checks clean.
#[test]
fn a_crash_at_every_sync_point_keeps_acknowledged_writes() {
    use lamina::fs::{FaultFs, FaultKind, FileSystem};
    let path = Path::new("/crash");
    let mut k = 0u64;
    loop {
        let mem = MemFs::new();
        let faulty = FaultFs::new(Arc::new(mem.clone()));
        faulty.faults().fail_after(FaultKind::Sync, k);
        let fs: Arc<dyn FileSystem> = Arc::new(faulty);
        let o = Options {
            fs: Arc::clone(&fs),
            ..opts(&mem)
        };
        let mut acknowledged = Model::new();
        let mut failed = false;
        if let Ok(db) = Db::open(path, o) {
            for i in 0u64..120 {
                let key = format!("key{:03}", i % 40).into_bytes();
                let value = format!("value {i} {}", "x".repeat(30)).into_bytes();
                let mut b = Batch::new();
                b.put(&key, &value);
                if db.write_with(b, Durability::Sync).is_err() {
                    failed = true;
                    break;
                }
                acknowledged.insert(key, value);
            }
            drop(db);
        } else {
            failed = true;
        }
        let crashed = mem.crash_clone();
        let reopened = Db::open(path, opts(&crashed))
            .unwrap_or_else(|e| panic!("sync point {k}: open after the crash failed: {e}"));
        let got = contents(&reopened);
        for (key, value) in &acknowledged {
            assert_eq!(
                got.get(key),
                Some(value),
                "sync point {k}: an acknowledged write is lost"
            );
        }
        let report = reopened.check().expect("check");
        assert!(report.is_ok(), "sync point {k}: {:?}", report.problems);
        reopened.close().expect("close");
        if !failed {
            break;
        }
        k += 1;
    }
    assert!(k > 100, "the workload passed only {k} sync points");
}

/// A power loss at every sync point of a loop of opens that each write a
/// batch and close (the shelve-style use: each open keeps the small log it
/// replays in its memtable and goes on writing the segment the last close
/// left, so a round's only sync is its close's): the database is as it was after
/// some round at least as late as the last whose close returned, never a
/// mix of rounds, whether the unsynced bytes are all lost or a random part
/// of them was written back.
#[test]
fn a_crash_at_every_sync_point_of_an_open_write_close_loop_keeps_a_prefix() {
    use lamina::fs::{FaultFs, FaultKind, FileSystem};
    const ROUNDS: u64 = 14;
    /// What the database holds after `round` rounds.
    fn after(round: u64) -> Model {
        let mut m = Model::new();
        for r in 1..=round {
            m.insert(
                format!("k{}", r % 5).into_bytes(),
                r.to_string().into_bytes(),
            );
            m.insert(b"round".to_vec(), r.to_string().into_bytes());
        }
        m
    }
    let path = Path::new("/loop");
    let mut k = 0u64;
    loop {
        let mem = MemFs::new();
        let faulty = FaultFs::new(Arc::new(mem.clone()));
        faulty.faults().fail_after(FaultKind::Sync, k);
        let fs: Arc<dyn FileSystem> = Arc::new(faulty);
        let mut closed = 0u64;
        let mut failed = false;
        for round in 1..=ROUNDS {
            let o = Options {
                fs: Arc::clone(&fs),
                ..Options::default()
            };
            let Ok(db) = Db::open(path, o) else {
                failed = true;
                break;
            };
            let mut b = Batch::new();
            b.put(
                format!("k{}", round % 5).as_bytes(),
                round.to_string().as_bytes(),
            );
            b.put(b"round", round.to_string().as_bytes());
            let written = db.write_with(b, Durability::Os).is_ok();
            if !(written && db.close().is_ok()) {
                failed = true;
                break;
            }
            closed = round;
        }
        for seed in [None, Some(k), Some(k + 7000)] {
            let crashed = match seed {
                None => mem.crash_clone(),
                Some(s) => mem.crash_clone_with(s),
            };
            let o = Options {
                fs: Arc::new(crashed.clone()),
                ..Options::default()
            };
            let db = Db::open(path, o).unwrap_or_else(|e| {
                panic!("sync point {k}, seed {seed:?}: open after the crash failed: {e}")
            });
            let got = contents(&db);
            let round = got.get(b"round".as_slice()).map_or(0, |v| {
                String::from_utf8_lossy(v).parse::<u64>().expect("round")
            });
            assert!(
                round >= closed,
                "sync point {k}, seed {seed:?}: round {closed} was closed, the database holds round {round}"
            );
            assert_eq!(
                got,
                after(round),
                "sync point {k}, seed {seed:?}: not the state after round {round}"
            );
            let report = db.check().expect("check");
            assert!(report.is_ok(), "sync point {k}: {:?}", report.problems);
            db.close().expect("close");
        }
        if !failed {
            break;
        }
        k += 1;
    }
    // The creation's syncs, then one a round: its close's.
    assert!(k > ROUNDS, "the loop passed only {k} sync points");
}

/// With partial write-back (`crash_clone_with`, which applies each pending
/// directory operation independently), a workload whose 2 KiB memtables
/// rotate every few writes, reusing retired segments, comes back as a
/// prefix of its writes even when a crash undid a middle segment's
/// renaming and kept a later one's creation (the log ends at the missing
/// segment), and a `Sync` write after the reopen survives a second crash
/// with nothing the first crash lost replayed on top of it (a number a
/// retired file's header names is never handed out again).
#[test]
fn a_segment_whose_reuse_a_crash_undid_is_not_reused_again() {
    use lamina::fs::FileSystem;
    fn value(i: u64) -> Vec<u8> {
        format!("{i:030}").into_bytes()
    }
    let path = Path::new("/undone");
    let mut checked = 0;
    for seed in 0..200u64 {
        let fs = MemFs::new();
        let db = Db::open(path, opts(&fs)).expect("open");
        for i in 0..300u64 {
            db.put(format!("k{:02}", i % 40).as_bytes(), &value(i))
                .expect("put");
        }
        let first = fs.crash_clone_with(seed);
        drop(db);
        let undone = first.file_names(path).iter().any(|n| {
            let Some(num) = n.strip_suffix(".wal").and_then(|s| s.parse::<u64>().ok()) else {
                return false;
            };
            let bytes = first.read_all(&path.join(n)).unwrap_or_default();
            bytes
                .get(28..36)
                .is_some_and(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) != num)
        });
        if !undone {
            continue;
        }
        checked += 1;
        let db = Db::open(path, opts(&first)).expect("open after the crash");
        let mut want = contents(&db);
        let after = |n: u64| -> BTreeMap<Vec<u8>, Vec<u8>> {
            (0..n)
                .map(|i| (format!("k{:02}", i % 40).into_bytes(), value(i)))
                .collect()
        };
        assert!(
            (0..=300).any(|n| after(n) == want),
            "seed {seed}: after the crash, not the state after any prefix of the writes"
        );
        let mut b = Batch::new();
        b.put(b"k00", &value(1000));
        db.write_with(b, Durability::Sync).expect("sync write");
        want.insert(b"k00".to_vec(), value(1000));
        let second = first.crash_clone();
        drop(db);
        let db = Db::open(path, opts(&second)).expect("reopen");
        let got = contents(&db);
        let show = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .trim_start_matches('0')
                .to_string()
        };
        let differ: Vec<String> = want
            .iter()
            .filter(|(k, v)| got.get(*k) != Some(v))
            .map(|(k, v)| {
                format!(
                    "{}: {:?} not {}",
                    show(k),
                    got.get(k).map(|g| show(g)),
                    show(v)
                )
            })
            .collect();
        assert!(
            differ.is_empty() && got.len() == want.len(),
            "seed {seed}: writes lost by the crash came back after a later one: {differ:?}"
        );
    }
    assert!(checked > 0, "no crash undid a reuse");
}
