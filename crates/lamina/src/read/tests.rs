//! Tests of the read subsystem's iterators beside one another: an iterator
//! that takes the cursor an earlier one left (`spare`) reads what a fresh
//! one would, and a view published anew lets go of the cursor kept over
//! the one before.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]
use crate::fs::MemFs;
use crate::{Batch, Db, Durability, Iter, Options, Snapshot};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Small memtables, blocks and levels: a few hundred writes make level-0
/// tables and deeper levels, compacted in the background as reads go on.
fn small(fs: &MemFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        memtable_size: 8 << 10,
        block_size: 256,
        l0_compaction_trigger: 3,
        l0_slowdown_trigger: 8,
        l0_stop_trigger: 12,
        level_base_size: 16 << 10,
        level_multiplier: 4,
        target_table_size: 8 << 10,
        ..Options::default()
    }
}

fn key(rng: &mut StdRng) -> Vec<u8> {
    if rng.gen_bool(0.1) {
        format!("c{:02}", rng.gen_range(0..10)).into_bytes()
    } else {
        format!("k{:03}", rng.gen_range(0..400)).into_bytes()
    }
}

/// Random writes to `db` and `model`: puts, deletes, and counter merges
/// (the default operator adds u64s).
fn write(db: &Db, model: &mut Model, rng: &mut StdRng, n: usize) {
    let mut batch = Batch::new();
    for _ in 0..n {
        let k = key(rng);
        if k[0] == b'c' {
            let add = rng.gen_range(1..100u64);
            batch.merge(&k, &add.to_le_bytes());
            let old = model
                .get(&k)
                .map_or(0, |v| u64::from_le_bytes(v[..].try_into().unwrap()));
            model.insert(k, (old + add).to_le_bytes().to_vec());
        } else if rng.gen_bool(0.25) {
            batch.delete(&k);
            model.remove(&k);
        } else {
            let v: Vec<u8> = (0..rng.gen_range(0..30)).map(|_| rng.gen()).collect();
            batch.put(&k, &v);
            model.insert(k, v);
        }
    }
    db.write_with(batch, Durability::None).unwrap();
}

fn bound(rng: &mut StdRng) -> Bound<Vec<u8>> {
    match rng.gen_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(key(rng)),
        _ => Bound::Excluded(key(rng)),
    }
}

fn within(k: &[u8], lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> bool {
    let above = match lo {
        Bound::Included(l) => k >= l.as_slice(),
        Bound::Excluded(l) => k > l.as_slice(),
        Bound::Unbounded => true,
    };
    let below = match hi {
        Bound::Included(h) => k <= h.as_slice(),
        Bound::Excluded(h) => k < h.as_slice(),
        Bound::Unbounded => true,
    };
    above && below
}

/// Where one read is made: the database now, or a snapshot taken earlier.
enum Reader<'a> {
    Db(&'a Db),
    Snap(&'a Snapshot),
}

/// One random read of `reader`, checked against `model`: a range or a
/// prefix, keys only or not, walked forward, backward, from both ends at
/// random, or left after a few entries.
fn read(reader: Reader<'_>, model: &Model, rng: &mut StdRng, what: &str) {
    let prefixed = rng.gen_bool(0.2);
    let (lo, hi) = (bound(rng), bound(rng));
    let prefix = format!("k{}", rng.gen_range(0..4)).into_bytes();
    let iter = match (&reader, prefixed) {
        (Reader::Db(db), false) => db.range::<Vec<u8>, _>((lo.clone(), hi.clone())),
        (Reader::Snap(s), false) => s.range::<Vec<u8>, _>((lo.clone(), hi.clone())),
        (Reader::Db(db), true) => db.prefix(&prefix),
        (Reader::Snap(s), true) => s.prefix(&prefix),
    };
    let keys_only = rng.gen_bool(0.2);
    let iter = if keys_only { iter.keys_only() } else { iter };
    let want: Vec<(Vec<u8>, Vec<u8>)> = model
        .iter()
        .filter(|(k, _)| {
            if prefixed {
                k.starts_with(&prefix)
            } else {
                within(k, &lo, &hi)
            }
        })
        .map(|(k, v)| (k.clone(), if keys_only { Vec::new() } else { v.clone() }))
        .collect();
    walk(iter, &want, rng, what);
}

/// Walks `iter` one of four ways and checks each entry against `want`.
fn walk(mut iter: Iter, want: &[(Vec<u8>, Vec<u8>)], rng: &mut StdRng, what: &str) {
    let way = rng.gen_range(0..4);
    let (mut front, mut back) = (0, want.len());
    let stop = if way == 3 {
        rng.gen_range(0..4)
    } else {
        usize::MAX
    };
    for step in 0.. {
        let forward = match way {
            0 | 3 => true,
            1 => false,
            _ => rng.gen_bool(0.5),
        };
        if step == stop {
            return;
        }
        let got = if forward {
            iter.next()
        } else {
            iter.next_back()
        };
        let expected = (front < back).then(|| {
            if forward {
                front += 1;
                &want[front - 1]
            } else {
                back -= 1;
                &want[back]
            }
        });
        let got = got.map(|r| r.unwrap());
        assert_eq!(got.as_ref(), expected, "{what}: way {way}, step {step}");
        if got.is_none() {
            return;
        }
    }
}

/// Iterators made one after another, each taking the cursor the one before
/// left (of the database now, or of snapshots of other seqnos, keys only
/// or not, bounded or not, left early or walked both ways), while writes,
/// flushes and compactions publish new views, read what the model holds.
#[test]
fn iterators_taking_a_cursor_left_by_another_read_the_model() {
    for seed in 0..4u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let fs = MemFs::new();
        let db = Db::open("db", small(&fs)).unwrap();
        let mut model = Model::new();
        let mut snaps: Vec<(Snapshot, Model)> = Vec::new();
        for round in 0..60 {
            let n = rng.gen_range(1..40);
            write(&db, &mut model, &mut rng, n);
            if rng.gen_bool(0.1) {
                db.flush().unwrap();
            }
            if rng.gen_bool(0.15) {
                snaps.push((db.snapshot(), model.clone()));
                if snaps.len() > 3 {
                    snaps.remove(0);
                }
            }
            for q in 0..8 {
                let what = format!("seed {seed}, round {round}, read {q}");
                match rng.gen_range(0..=snaps.len()) {
                    0 => read(Reader::Db(&db), &model, &mut rng, &what),
                    i => {
                        let (snap, m) = &snaps[i - 1];
                        read(Reader::Snap(snap), m, &mut rng, &what);
                    }
                }
            }
            if let Some((snap, m)) = snaps.last() {
                // A seeking cursor starts a walk at each seek.
                let mut c = snap.cursor_in(&db.default_keyspace());
                let at = key(&mut rng);
                c.seek(&at).unwrap();
                let next = m.range(at..).next().map(|(k, _)| k.as_slice());
                assert_eq!(c.key(), next, "seed {seed}, round {round}: seek");
                c.move_prev().unwrap();
                // With no entry, the cursor stays on none.
                let before = next.and_then(|n| m.range(..n.to_vec()).next_back().map(|(k, _)| k));
                assert_eq!(c.key(), before.map(|k| k.as_slice()), "seed {seed}: prev");
            }
        }
        drop(snaps);
        db.close().unwrap();
    }
}

/// A view published anew (here by a flush) lets go of the cursor the last
/// iterator left over the view before.
#[test]
fn a_view_published_anew_lets_go_of_the_kept_cursor() {
    let fs = MemFs::new();
    let db = Db::open("db", small(&fs)).unwrap();
    db.put(b"a", b"1").unwrap();
    let inner = db.inner();
    let before = inner.pinned().unwrap();
    assert_eq!(db.iter().count(), 1);
    assert!(
        inner.reads().spare_cursor(&before).is_some(),
        "a cursor is kept"
    );
    assert_eq!(db.iter().count(), 1);
    db.flush().unwrap();
    assert!(
        inner.reads().spare_cursor(&before).is_none(),
        "the cursor over the view before the flush is let go"
    );
    assert_eq!(db.iter().count(), 1);
    assert!(inner
        .reads()
        .spare_cursor(&inner.pinned().unwrap())
        .is_some());
}

/// A cursor taken from the spare slot counts the entries its new walk steps
/// over from nothing (the live floor reads that count), as a new cursor
/// does.
#[test]
fn a_cursor_taken_counts_its_steps_afresh() {
    let fs = MemFs::new();
    let db = Db::open("db", small(&fs)).unwrap();
    for k in [b"a", b"b", b"c", b"d"] {
        db.put(k, b"v").unwrap();
    }
    let mut first = db.iter();
    assert_eq!(first.by_ref().take(3).count(), 3);
    assert_eq!(first.entries_stepped(), 3);
    drop(first);
    let view = db.inner().pinned().unwrap();
    let mut second = db.iter();
    assert!(second.next().is_some());
    assert_eq!(second.entries_stepped(), 1);
    drop(second);
    assert!(
        db.inner().reads().spare_cursor(&view).is_some(),
        "the cursor went back"
    );
}

/// The active memtable's full skip lists, once an ordered read has read
/// them, are indexed by the flush thread as writes go on, and the active
/// list with them once writes pause; reads through the index see every
/// write.
#[test]
fn a_memtable_read_in_order_has_its_lists_indexed() {
    let fs = MemFs::new();
    let opts = Options {
        fs: Arc::new(fs.clone()),
        memtable_size: 4 << 20,
        ..Options::default()
    };
    let db = Db::open("db", opts).unwrap();
    let mut model = Model::new();
    let mut rng = StdRng::seed_from_u64(7);
    let mut write = |n: usize, model: &mut Model| {
        for _ in 0..n {
            let k = format!("k{:07}", rng.gen_range(0..1_000_000)).into_bytes();
            db.put(&k, &[9; 100]).unwrap();
            model.insert(k, vec![9; 100]);
        }
    };
    write(20_000, &mut model);
    let sources = || {
        let view = db.inner().pinned().unwrap();
        assert_eq!(view.mems.len(), 1, "one memtable");
        view.mems[0].iters().count()
    };
    let lists = sources();
    assert!(lists > 3, "the memtable's lists: {lists}");
    // Its first ordered read reads every list.
    assert_eq!(db.iter().count(), model.len());
    // Indexed when a list fills (or by the flush thread's next round).
    let mut more = 0;
    while sources() != 2 {
        assert!(more < 6_000, "never indexed");
        write(100, &mut model);
        more += 100;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let got: Vec<_> = db.iter().map(|r| r.unwrap()).collect();
    let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert!(
        got == want,
        "an ordered read through the index reads the model"
    );
    // Writes paused: the flush thread's next rounds index the active list
    // too.
    let mut waited = 0;
    while sources() != 1 {
        assert!(waited < 100, "the active list never indexed");
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    let got: Vec<_> = db.iter().map(|r| r.unwrap()).collect();
    assert!(
        got == want,
        "an ordered read through one index reads the model"
    );
    write(1, &mut model);
    assert_eq!(sources(), 2, "a write: the active list read again");
    for p in ["k000", "k05", "k9999"] {
        let got: Vec<_> = db.prefix(p.as_bytes()).map(|r| r.unwrap().0).collect();
        let want: Vec<_> = model
            .keys()
            .filter(|k| k.starts_with(p.as_bytes()))
            .cloned()
            .collect();
        assert_eq!(got, want, "prefix {p}");
    }
    db.close().unwrap();
}

/// `Iter::count_keys` counts what a keys-only walk of the same iterator
/// yields: over ranges and prefixes, of the database and of snapshots,
/// fresh or after a few steps from either end, with tombstones, merge
/// operands and several versions of a key in memtables and tables.
#[test]
fn count_keys_counts_what_a_keys_only_walk_yields() {
    let fs = MemFs::new();
    let opts = Options {
        merge_operator: Arc::new(crate::merge::Append),
        ..small(&fs)
    };
    let db = Db::open("db", opts).unwrap();
    let mut rng = StdRng::seed_from_u64(11);
    let mut snaps = Vec::new();
    for round in 0..40 {
        for _ in 0..60 {
            let k = key(&mut rng);
            match rng.gen_range(0..10) {
                0..=2 => db.delete(&k).unwrap(),
                3 => db.merge(&k, b"+").unwrap(),
                _ => db.put(&k, &[b'v'; 20]).unwrap(),
            }
        }
        if round % 10 == 9 {
            snaps.push(db.snapshot());
        }
        let (lo, hi) = (bound(&mut rng), bound(&mut rng));
        let prefix = format!("k{}", rng.gen_range(0..4)).into_bytes();
        let make = |which: usize| -> Iter {
            let snap = snaps.last();
            match (which, snap) {
                (0, _) => db.range::<Vec<u8>, _>((lo.clone(), hi.clone())),
                (1, _) => db.prefix(&prefix),
                (2, Some(s)) => s.range::<Vec<u8>, _>((lo.clone(), hi.clone())),
                _ => db.iter(),
            }
        };
        for which in 0..4 {
            let want = make(which).keys_only().count() as u64;
            assert_eq!(
                make(which).count_keys().unwrap(),
                want,
                "round {round}, reader {which}"
            );
            // After steps from the front, then from both ends.
            let mut it = make(which);
            let front = it.by_ref().take(2).count() as u64;
            assert_eq!(
                it.count_keys().unwrap(),
                want.saturating_sub(front),
                "round {round}, reader {which}, after the front"
            );
            let mut it = make(which);
            let front = it.by_ref().take(1).count() as u64;
            let back = it.by_ref().rev().take(1).count() as u64;
            assert_eq!(
                it.count_keys().unwrap(),
                want.saturating_sub(front + back),
                "round {round}, reader {which}, both ends"
            );
        }
        if round % 7 == 6 {
            db.flush().unwrap();
        }
    }
    drop(snaps);
    db.close().unwrap();
}
