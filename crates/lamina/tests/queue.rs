//! A keyspace used as a work queue: pushed at the back, popped from the
//! front (the first key, then a delete), or the mirror of it, popped from
//! the back (the last key), or popped at both ends. Pops must equal a
//! model's through flushes, compactions and a reopen, never skip a key
//! written ahead of the end popped by another thread, leave snapshots and
//! transactions exact, and cost a bounded number of entries each however
//! many pops came before (the keyspace's live floor and ceiling:
//! docs/design.md#the-live-floor-and-ceiling).

use lamina::fs::{FileSystem, MemFs};
use lamina::{Db, IngestOptions, Options, TableWriter, TableWriterOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Entry = (Vec<u8>, Vec<u8>);

fn key(i: u64) -> Vec<u8> {
    i.to_be_bytes().to_vec()
}

fn num(k: &[u8]) -> u64 {
    u64::from_be_bytes(k.try_into().expect("an 8-byte key"))
}

/// Small memtables and tables: flushes and compactions happen every few
/// hundred writes.
fn opts(fs: &MemFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        memtable_size: 16 << 10,
        block_size: 256,
        l0_compaction_trigger: 2,
        level_base_size: 64 << 10,
        target_table_size: 16 << 10,
        ..Options::default()
    }
}

fn open(fs: &MemFs) -> Db {
    Db::open("/queue", opts(fs)).expect("open")
}

/// A new database whose keys are `keys`, each pushed with the value "item".
fn queue_of(fs: &MemFs, keys: std::ops::Range<u64>) -> Db {
    let db = open(fs);
    for i in keys {
        db.put(&key(i), b"item").expect("push");
    }
    db
}

/// The end of the queue pops take from. Tests that run from either end
/// number its keys from that end: the back's key `i` is the mirror of the
/// front's, so that key 0 is the last key, key 1 the one before it, ...
#[derive(Clone, Copy, Debug)]
enum End {
    Front,
    Back,
}

impl End {
    /// The key numbered `i` from this end.
    fn key(self, i: u64) -> Vec<u8> {
        match self {
            End::Front => key(i),
            End::Back => key(!i),
        }
    }

    /// The number from this end of the key `k`.
    fn num(self, k: &[u8]) -> u64 {
        match self {
            End::Front => num(k),
            End::Back => !num(k),
        }
    }

    /// The first item of `it` from this end.
    fn first<I: DoubleEndedIterator>(self, it: &mut I) -> Option<I::Item> {
        match self {
            End::Front => it.next(),
            End::Back => it.next_back(),
        }
    }
}

/// Pops the first key: its entry, and the entries of the tree the
/// iterator stepped over to find it.
fn pop(db: &Db) -> (Option<Entry>, u64) {
    pop_at(db, End::Front)
}

/// Pops the key at `end`, as [`pop`] does the first.
fn pop_at(db: &Db, end: End) -> (Option<Entry>, u64) {
    let mut it = db.iter();
    let first = end.first(&mut it).transpose().expect("first key");
    let stepped = it.entries_stepped();
    if let Some((k, _)) = &first {
        db.delete(k).expect("delete");
    }
    (first, stepped)
}

fn contents(db: &Db) -> Model {
    db.iter().collect::<Result<_, _>>().expect("scan")
}

#[test]
fn a_queue_popped_from_the_front_equals_its_model_through_flushes_and_a_reopen() {
    let fs = MemFs::new();
    let mut db = open(&fs);
    let mut rng = StdRng::seed_from_u64(0x9e3779b97f4a7c15);
    let mut model = Model::new();
    // Pushed keys rise from 2^32; keys put below the front fall from it.
    let (mut back, mut below) = (1u64 << 32, (1u64 << 32) - 1);
    let (mut pops, mut empty_pops) = (0, 0);
    for op in 0..100_000u32 {
        if op == 50_000 {
            db.close().expect("close");
            db = open(&fs);
            assert_eq!(contents(&db), model, "after the reopen");
        }
        let value = format!("v{op}").into_bytes();
        // The queue grows for 4,000 operations, then drains for as many.
        let pushes = if (op / 4000) % 2 == 0 { 55 } else { 25 };
        match rng.gen_range(0..100) {
            r if r < pushes => {
                back += rng.gen_range(1..4);
                db.put(&key(back), &value).expect("push");
                model.insert(key(back), value);
            }
            r if r < 92 => {
                let (got, _) = pop(&db);
                let want = model.pop_first();
                assert_eq!(got, want, "pop at op {op}");
                pops += 1;
                empty_pops += usize::from(want.is_none());
            }
            r if r < 96 => {
                // Ahead of the queue: below the front.
                db.put(&key(below), &value).expect("put below");
                model.insert(key(below), value);
                below -= 1;
            }
            r if r < 98 => {
                // A cancelled item, anywhere in the queue.
                let i = rng.gen_range(below..=back);
                db.delete(&key(i)).expect("cancel");
                model.remove(&key(i));
            }
            _ => {
                // An item near the front updated in place.
                if let Some(k) = model.keys().nth(rng.gen_range(0..4)).cloned() {
                    db.put(&k, &value).expect("update");
                    model.insert(k, value);
                }
            }
        }
    }
    assert_eq!(contents(&db), model);
    assert!(
        pops > 40_000 && empty_pops > 100,
        "{pops} pops, {empty_pops} empty"
    );
    let stats = db.stats();
    assert!(stats.flushes > 50 && stats.compactions > 5, "{stats:?}");
}

#[test]
fn a_queue_popped_at_both_ends_equals_its_model_through_flushes_and_a_reopen() {
    let fs = MemFs::new();
    let mut db = open(&fs);
    let mut rng = StdRng::seed_from_u64(0x2545f4914f6cdd1d);
    let mut model = Model::new();
    // Keys pushed at the back rise from 2^32, at the front fall from it.
    let (mut back, mut front) = (1u64 << 32, (1u64 << 32) - 1);
    let (mut pops, mut empty_pops, mut stepped) = ([0u64; 2], 0, 0);
    for op in 0..100_000u32 {
        if op == 50_000 {
            db.close().expect("close");
            db = open(&fs);
            assert_eq!(contents(&db), model, "after the reopen");
        }
        let value = format!("v{op}").into_bytes();
        // The queue grows for 4,000 operations, then drains for as many.
        let pushes = if (op / 4000) % 2 == 0 { 55 } else { 25 };
        match rng.gen_range(0..100) {
            r if r < pushes => {
                let k = if r % 4 == 0 {
                    front -= 1;
                    front + 1
                } else {
                    back += rng.gen_range(1..4);
                    back
                };
                db.put(&key(k), &value).expect("push");
                model.insert(key(k), value);
            }
            r if r < 92 => {
                // Mostly from the back: a stack, with a queue's front.
                let end = if r % 3 == 0 { End::Front } else { End::Back };
                let (got, steps) = pop_at(&db, end);
                let want = match end {
                    End::Front => model.pop_first(),
                    End::Back => model.pop_last(),
                };
                assert_eq!(got, want, "pop from the {end:?} at op {op}");
                pops[end as usize] += 1;
                empty_pops += usize::from(want.is_none());
                stepped += steps;
            }
            r if r < 96 => {
                // A cancelled item, anywhere in the queue.
                let i = rng.gen_range(front..=back);
                db.delete(&key(i)).expect("cancel");
                model.remove(&key(i));
            }
            _ => {
                // An item near either end updated in place.
                let near = rng.gen_range(0..4);
                let k = if rng.gen_bool(0.5) {
                    model.keys().nth(near)
                } else {
                    model.keys().nth_back(near)
                };
                if let Some(k) = k.cloned() {
                    db.put(&k, &value).expect("update");
                    model.insert(k, value);
                }
            }
        }
    }
    assert_eq!(contents(&db), model);
    assert!(
        pops[0] > 10_000 && pops[1] > 20_000 && empty_pops > 100,
        "{pops:?} pops, {empty_pops} empty"
    );
    let all = pops[0] + pops[1];
    assert!(
        stepped <= 64 * all,
        "{all} pops stepped over {stepped} entries"
    );
    let stats = db.stats();
    assert!(stats.flushes > 50 && stats.compactions > 5, "{stats:?}");
}

/// 10^5 keys popped from `end`: each pop steps over at most 64 entries.
fn pops_step_over_a_bounded_number_of_entries(end: End) {
    let fs = MemFs::new();
    let db = open(&fs);
    const N: u64 = 100_000;
    for chunk in (0..N).collect::<Vec<_>>().chunks(1000) {
        let mut b = lamina::Batch::new();
        for &i in chunk {
            b.put(&end.key(i), b"item");
        }
        db.write(b).expect("push");
    }
    db.flush().expect("flush");
    // A popped key leaves a tombstone over its value: two entries. The
    // limit moves at least every 32 entries stepped over.
    let mut total = 0;
    for i in 0..N {
        let (got, stepped) = pop_at(&db, end);
        assert_eq!(got.map(|(k, _)| end.num(&k)), Some(i));
        assert!(stepped <= 64, "pop {i} stepped over {stepped} entries");
        total += stepped;
    }
    assert_eq!(pop_at(&db, end).0, None);
    assert!(total <= 40 * N, "pops stepped over {total} entries");
    // The same with keys only (Python's `firstkey`).
    for i in 0..1000 {
        db.put(&end.key(N + i), b"item").expect("push");
    }
    for i in 0..1000 {
        let mut it = db.iter().keys_only();
        let k = end.first(&mut it).transpose().expect("first");
        assert_eq!(k.map(|(k, _)| end.num(&k)), Some(N + i));
        assert!(it.entries_stepped() <= 64, "{}", it.entries_stepped());
        db.delete(&end.key(N + i)).expect("delete");
    }
}

#[test]
fn each_pop_steps_over_a_bounded_number_of_entries_however_many_came_before() {
    pops_step_over_a_bounded_number_of_entries(End::Front);
}

#[test]
fn each_pop_from_the_back_steps_over_a_bounded_number_of_entries() {
    pops_step_over_a_bounded_number_of_entries(End::Back);
}

/// Pops from `end` while other threads put keys ahead of it (between it
/// and the keys popped), push at the other end and take snapshots: no pop
/// skips a live key ahead, and every snapshot keeps what it saw.
fn pops_never_skip_a_key_put_ahead_by_another_thread(end: End) {
    let fs = MemFs::new();
    let db = open(&fs);
    const FRONT: u64 = 1 << 40;
    for i in 0..3000 {
        db.put(&end.key(FRONT + i), b"first").expect("push");
    }
    let stop = Arc::new(AtomicBool::new(false));
    // The key the thread putting below the front put last (they fall);
    // u64::MAX before its first.
    let lowest = Arc::new(AtomicU64::new(u64::MAX));
    // Keys the popper is deleting or deleted, recorded before the delete.
    let popping: Arc<Mutex<HashSet<u64>>> = Arc::default();
    let below = {
        let (db, stop, lowest) = (db.clone(), Arc::clone(&stop), Arc::clone(&lowest));
        std::thread::spawn(move || {
            let mut k = FRONT - 1;
            let mut put = Vec::new();
            while !stop.load(Ordering::Relaxed) && put.len() < 4000 {
                db.put(&end.key(k), b"below").expect("put below");
                lowest.store(k, Ordering::SeqCst);
                put.push(k);
                k -= 1;
                std::thread::yield_now();
            }
            put
        })
    };
    let back = {
        let (db, stop) = (db.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut pushed = Vec::new();
            let mut k = FRONT + 1_000_000;
            while !stop.load(Ordering::Relaxed) && pushed.len() < 20_000 {
                db.put(&end.key(k), b"back").expect("push");
                pushed.push(k);
                k += 1;
            }
            pushed
        })
    };
    let snapshots = {
        let (db, stop) = (db.clone(), Arc::clone(&stop));
        let (lowest, popping) = (Arc::clone(&lowest), Arc::clone(&popping));
        std::thread::spawn(move || {
            let mut kept: Vec<(lamina::Snapshot, Option<Vec<u8>>)> = Vec::new();
            let mut rounds = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let m = lowest.load(Ordering::SeqCst);
                let snap = db.snapshot();
                let first = end
                    .first(&mut snap.iter())
                    .transpose()
                    .expect("first")
                    .map(|(k, _)| k);
                // A key put below the front before the snapshot, whose delete
                // had not begun after it, is live there: the front is at most it.
                let deleting = popping.lock().expect("lock").contains(&m);
                if m != u64::MAX && !deleting {
                    let f = first.as_deref().map(|k| end.num(k));
                    assert!(
                        f.is_some_and(|f| f <= m),
                        "snapshot front {f:?} above live {m}"
                    );
                }
                if let Some(f) = &first {
                    assert!(snap.get(f).expect("get").is_some());
                    if rounds.is_multiple_of(64) {
                        // Nothing live ahead, walking toward it from the
                        // other end (no limit).
                        let ahead = match end {
                            End::Front => snap.range(..f.clone()).next_back(),
                            End::Back => snap
                                .range((Bound::Excluded(f.clone()), Bound::Unbounded))
                                .next(),
                        };
                        assert!(ahead.is_none(), "{ahead:?} ahead of {f:?}");
                    }
                }
                // Every snapshot kept still sees the front it saw.
                for (s, f) in &kept {
                    let again = end.first(&mut s.iter()).transpose().expect("again");
                    let again = again.map(|(k, _)| k);
                    assert_eq!(&again, f);
                }
                if rounds.is_multiple_of(16) && kept.len() < 8 {
                    kept.push((snap, first));
                }
                rounds += 1;
            }
            rounds
        })
    };
    let mut popped: Vec<u64> = Vec::new();
    let mut seen = HashSet::new();
    while popped.len() < 15_000 {
        let m = lowest.load(Ordering::SeqCst);
        let mut it = db.iter();
        let Some((k, _)) = end.first(&mut it).transpose().expect("front") else {
            continue;
        };
        let k = end.num(&k);
        // `m` was put before the iterator was made and not popped: live.
        if m != u64::MAX && !seen.contains(&m) {
            assert!(
                k <= m,
                "popped {k} while {m}, put below the front, was live"
            );
        }
        assert!(seen.insert(k), "{k} popped twice");
        popping.lock().expect("lock").insert(k);
        db.delete(&end.key(k)).expect("pop");
        popped.push(k);
    }
    stop.store(true, Ordering::Relaxed);
    let below = below.join().expect("below");
    let pushed = back.join().expect("back");
    let rounds = snapshots.join().expect("snapshots");
    assert!(
        rounds > 10 && below.len() > 100,
        "{rounds} rounds, {} below",
        below.len()
    );
    // Every key is popped once or still there.
    while let (Some((k, _)), _) = pop_at(&db, end) {
        let k = end.num(&k);
        assert!(seen.insert(k), "{k} popped twice");
    }
    let all: HashSet<u64> = (0..3000)
        .map(|i| FRONT + i)
        .chain(below)
        .chain(pushed)
        .collect();
    assert_eq!(seen, all);
}

#[test]
fn a_pop_never_skips_a_key_put_below_the_front_by_another_thread() {
    pops_never_skip_a_key_put_ahead_by_another_thread(End::Front);
}

#[test]
fn a_pop_from_the_back_never_skips_a_key_put_above_it_by_another_thread() {
    pops_never_skip_a_key_put_ahead_by_another_thread(End::Back);
}

#[test]
fn scans_after_deleting_most_keys_equal_the_model_both_ways() {
    let fs = MemFs::new();
    let db = open(&fs);
    let mut rng = StdRng::seed_from_u64(7);
    let mut model = Model::new();
    const N: u64 = 10_000;
    for i in 0..N {
        let v = format!("{i}").into_bytes();
        db.put(&key(i * 2), &v).expect("put");
        model.insert(key(i * 2), v);
    }
    // 90% deleted: runs from the front and here and there, and at random.
    let mut doomed: Vec<u64> = (0..N / 4).collect();
    for run in 0..40 {
        let start = rng.gen_range(N / 4..N - 200);
        doomed.extend(start..start + 100 + run);
    }
    while doomed.len() < (N as usize) * 9 / 10 {
        doomed.push(rng.gen_range(0..N));
    }
    for i in doomed {
        db.delete(&key(i * 2)).expect("delete");
        model.remove(&key(i * 2));
    }
    let check = |db: &Db, model: &Model, round: u64| {
        assert_eq!(&contents(db), model, "round {round}");
        let rev: Vec<_> = db.iter().rev().collect::<Result<_, _>>().expect("rev");
        assert!(rev
            .into_iter()
            .eq(model.iter().rev().map(|(k, v)| (k.clone(), v.clone()))));
        for draw in 0..8 {
            let (a, b) = (rng_key(round, draw), rng_key(round, draw + 100));
            let (lo, hi) = (a.min(b), a.max(b) + 1);
            let bounds = [
                (Bound::Included(key(lo)), Bound::Excluded(key(hi))),
                (Bound::Excluded(key(lo)), Bound::Included(key(hi))),
                (Bound::Unbounded, Bound::Included(key(hi))),
                (Bound::Included(key(lo)), Bound::Unbounded),
            ];
            for r in bounds {
                let got: Vec<_> = db
                    .range(r.clone())
                    .collect::<Result<_, _>>()
                    .expect("range");
                let want: Vec<_> = model
                    .range(r.clone())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(got, want, "{r:?}");
                let back: Vec<_> = db
                    .range(r.clone())
                    .rev()
                    .collect::<Result<_, _>>()
                    .expect("rev");
                assert!(back.iter().eq(want.iter().rev()), "{r:?} reversed");
                let first = db
                    .range(r.clone())
                    .keys_only()
                    .next()
                    .transpose()
                    .expect("first");
                assert_eq!(first.map(|(k, _)| k), want.first().map(|(k, _)| k.clone()));
            }
        }
    };
    fn rng_key(round: u64, draw: u64) -> u64 {
        StdRng::seed_from_u64(round * 1000 + draw).gen_range(0..2 * N + 2)
    }
    for round in 0..6 {
        check(&db, &model, round);
        // Keys back in below whatever floor the scans left, and more deleted.
        let k = rng.gen_range(0..N / 2) * 2 + 1;
        db.put(&key(k), b"back").expect("put");
        model.insert(key(k), b"back".to_vec());
        db.merge(&key(k + 2), &1u64.to_le_bytes()).expect("merge");
        model.insert(key(k + 2), 1u64.to_le_bytes().to_vec());
        for _ in 0..500 {
            let k = rng.gen_range(0..N) * 2;
            db.delete(&key(k)).expect("delete");
            model.remove(&key(k));
        }
        if round == 3 {
            db.compact().expect("compact");
        }
    }
}

#[test]
fn a_transaction_pops_the_front_and_a_put_below_between_pops_comes_first() {
    let fs = MemFs::new();
    let db = queue_of(&fs, 100..400);
    let mut want = 100;
    for round in 0..250u64 {
        if round % 50 == 25 {
            // A plain put below the floor the pops before left.
            db.put(&key(round), b"urgent").expect("put below");
            let (got, _) = pop(&db);
            assert_eq!(
                got.map(|(k, v)| (num(&k), v)),
                Some((round, b"urgent".to_vec()))
            );
        }
        let popped = db
            .transact(|tx| {
                let first = tx.iter().next().transpose()?;
                if let Some((k, _)) = &first {
                    tx.delete(k)?;
                }
                Ok(first.map(|(k, _)| num(&k)))
            })
            .expect("transaction");
        assert_eq!(popped, Some(want));
        want += 1;
    }
    // A transaction whose snapshot predates pops still reads its own front,
    // and the pops since make its delete conflict.
    let mut tx = db.transaction();
    let (first, _) = tx.iter().next().expect("front").expect("read");
    for _ in 0..40 {
        pop(&db);
    }
    assert_eq!(num(&first), want);
    assert_eq!(tx.iter().next().expect("again").expect("read").0, first);
    tx.delete(&first).expect("delete");
    assert!(matches!(tx.commit(), Err(lamina::Error::Conflict(_))));
    assert_eq!(pop(&db).0.map(|(k, _)| num(&k)), Some(want + 40));
}

#[test]
fn ingests_drops_and_snapshots_stay_exact_beside_the_floor() {
    let fs = MemFs::new();
    let db = open(&fs);
    let jobs = db.keyspace("jobs").expect("keyspace");
    for i in 1000..1300 {
        jobs.put(&key(i), b"job").expect("push");
    }
    let snap = db.snapshot();
    let pop_jobs = || {
        let first = jobs.iter().next().transpose().expect("front");
        if let Some((k, _)) = &first {
            jobs.delete(k).expect("delete");
        }
        first.map(|(k, _)| num(&k))
    };
    for i in 1000..1100 {
        assert_eq!(pop_jobs(), Some(i));
    }
    // The snapshot from before the pops still sees the old front.
    let front = snap.iter_in(&jobs).next().transpose().expect("old front");
    assert_eq!(front.map(|(k, _)| num(&k)), Some(1000));
    drop(snap);
    // A table ingested below the front: its keys come first.
    fs.create_dir_all(Path::new("/src")).expect("mkdir");
    let wopts = TableWriterOptions {
        fs: Arc::new(fs.clone()),
        keyspace: Some("jobs".to_string()),
        ..TableWriterOptions::default()
    };
    let mut w = TableWriter::create("/src/a.sst", wopts).expect("writer");
    for i in 10..20 {
        w.put(&key(i), b"ingested").expect("put");
    }
    w.finish().expect("finish");
    db.ingest(&["/src/a.sst"], IngestOptions::default())
        .expect("ingest");
    for i in (10..20).chain(1100..1300) {
        assert_eq!(pop_jobs(), Some(i));
    }
    assert_eq!(pop_jobs(), None);
    // A keyspace dropped with a floor, and made again, starts empty.
    for i in 0..100 {
        jobs.put(&key(i), b"job").expect("push");
    }
    for i in 0..60 {
        assert_eq!(pop_jobs(), Some(i));
    }
    db.drop_keyspace("jobs").expect("drop");
    let jobs = db.keyspace("jobs").expect("again");
    assert_eq!(jobs.iter().next().transpose().expect("empty"), None);
    jobs.put(&key(5), b"new").expect("put");
    assert_eq!(
        jobs.iter()
            .next()
            .transpose()
            .expect("front")
            .map(|(k, _)| num(&k)),
        Some(5)
    );
    // The default keyspace, a neighbour in id, was never touched.
    assert_eq!(db.iter().next().transpose().expect("default"), None);
}

#[test]
fn a_table_linked_in_below_the_floor_comes_first() {
    let fs = MemFs::new();
    let db = open(&fs);
    for i in 1000..1300 {
        db.put(&key(i), b"job").expect("push");
    }
    for i in 1000..1100 {
        assert_eq!(pop(&db).0.map(|(k, _)| num(&k)), Some(i));
    }
    // Keys below everything in the tree, moved in: linked unchanged, their
    // entries at seqno 0, visible at every seqno.
    fs.create_dir_all(Path::new("/src")).expect("mkdir");
    let wopts = TableWriterOptions {
        fs: Arc::new(fs.clone()),
        ..TableWriterOptions::default()
    };
    let mut w = TableWriter::create("/src/a.sst", wopts).expect("writer");
    for i in 10..20 {
        w.put(&key(i), b"linked").expect("put");
    }
    w.finish().expect("finish");
    let done = db
        .ingest(&["/src/a.sst"], IngestOptions { move_files: true })
        .expect("ingest");
    assert!(done.iter().all(|t| t.linked), "{done:?}");
    for i in (10..20).chain(1100..1300) {
        assert_eq!(pop(&db).0.map(|(k, _)| num(&k)), Some(i));
    }
    assert_eq!(pop(&db).0, None);
}

/// Pops at both ends of one transaction, mixed with its own puts, deletes
/// and reads, equal a model of the transaction's view; the
/// commit leaves the database equal to it, and a dropped one leaves
/// nothing.
#[test]
fn a_transaction_pops_at_both_ends_as_its_model_says() {
    let fs = MemFs::new();
    let db = open(&fs);
    let jobs = db.keyspace("jobs").expect("keyspace");
    let mut rng = StdRng::seed_from_u64(7);
    let mut model = Model::new();
    for i in 0..3000u64 {
        let k = key(rng.gen_range(0..10_000));
        let v = i.to_le_bytes().to_vec();
        db.put(&k, &v).expect("put");
        model.insert(k, v);
        if i % 7 == 0 {
            jobs.put(&key(i), b"other keyspace").expect("put");
        }
    }
    let before = model.clone();
    // Dropped, then committed.
    for commit in [false, true] {
        let mut model = before.clone();
        let mut tx = db.transaction();
        let mut recent: Vec<Vec<u8>> = Vec::new();
        for step in 0..2500u64 {
            match rng.gen_range(0..10) {
                0 => {
                    let k = key(rng.gen_range(0..10_000));
                    tx.put(&k, b"own").expect("put");
                    model.insert(k, b"own".to_vec());
                    recent.clear();
                }
                1 => {
                    let k = key(rng.gen_range(0..10_000));
                    tx.delete(&k).expect("delete");
                    model.remove(&k);
                }
                2 => {
                    // Reads between pops leave the cursor open; half of
                    // them read a key popped since the last other write.
                    let k = match recent.len() {
                        0 => key(rng.gen_range(0..10_000)),
                        n if rng.gen_bool(0.5) => recent[rng.gen_range(0..n)].clone(),
                        _ => key(rng.gen_range(0..10_000)),
                    };
                    assert_eq!(tx.get(&k).expect("get"), model.get(&k).cloned());
                    let has = tx.contains_key(&k).expect("contains");
                    assert_eq!(has, model.contains_key(&k));
                }
                3 => {
                    let a = rng.gen_range(0..10_000);
                    let (lo, hi) = (key(a), key(a + rng.gen_range(0..3000)));
                    let got: Vec<Entry> = tx
                        .range(lo.clone()..hi.clone())
                        .collect::<Result<_, _>>()
                        .expect("range");
                    let want: Vec<Entry> = model
                        .range(lo.clone()..hi.clone())
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    assert_eq!(got, want, "step {step}");
                    let last = tx
                        .range(lo.clone()..hi.clone())
                        .next_back()
                        .transpose()
                        .expect("back");
                    assert_eq!(last.as_ref(), want.last());
                }
                r => {
                    let (got, want) = if r % 2 == 0 {
                        (tx.pop_first().expect("pop"), model.pop_first())
                    } else {
                        (tx.pop_last().expect("pop"), model.pop_last())
                    };
                    assert_eq!(got, want, "step {step}");
                    if let Some((k, _)) = got {
                        recent.push(k);
                    }
                }
            }
        }
        let first = tx.iter().next().transpose().expect("front");
        assert_eq!(
            first,
            model.first_key_value().map(|(k, v)| (k.clone(), v.clone()))
        );
        if commit {
            tx.commit().expect("commit");
            assert_eq!(contents(&db), model);
        } else {
            drop(tx);
            assert_eq!(contents(&db), before);
        }
    }
    assert_eq!(
        jobs.iter().count(),
        3000usize.div_ceil(7),
        "other keyspace untouched"
    );
}

/// A queue drained by one transaction while another writer puts: a key put
/// below the front popped, or above the back, is a conflict; one put
/// between the two ends the pops never reached is not.
#[test]
fn a_transaction_s_pops_conflict_with_a_put_in_what_they_read_only() {
    let fs = MemFs::new();
    let db = queue_of(&fs, 100..200);
    let drain = |db: &Db, between: u64| {
        let mut tx = db.transaction();
        for i in 0..10 {
            let (k, _) = tx.pop_first().expect("pop").expect("an item");
            assert_eq!(num(&k), 100 + i);
            let (k, _) = tx.pop_last().expect("pop").expect("an item");
            assert_eq!(num(&k), 199 - i);
        }
        db.put(&key(between), b"other writer").expect("put");
        tx.commit()
    };
    for outside in [50, 105, 190, 250] {
        let r = drain(&db, outside);
        assert!(
            matches!(r, Err(lamina::Error::Conflict(_))),
            "{outside}: {r:?}"
        );
        if (100..200).contains(&outside) {
            db.put(&key(outside), b"item").expect("undo");
        } else {
            db.delete(&key(outside)).expect("undo");
        }
    }
    drain(&db, 150).expect("a put the pops did not read");
    let left: Vec<u64> = contents(&db).keys().map(|k| num(k)).collect();
    let want: Vec<u64> = (110..190).collect();
    assert_eq!(left, want);
    // A transaction that found the queue empty read all of it.
    let mut tx = db.transaction();
    while tx.pop_first().expect("pop").is_some() {}
    db.put(&key(150), b"late").expect("put");
    assert!(matches!(tx.commit(), Err(lamina::Error::Conflict(_))));
}
