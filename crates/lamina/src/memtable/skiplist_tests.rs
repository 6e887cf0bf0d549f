//! Tests of the skip list: entries in order under every kind of load,
//! concurrent inserts, and seeks against a sorted model.

use super::*;
use crate::key::{internal_key, tree_key};
use std::sync::Arc;

fn ikey(k: u32, seqno: u64) -> Vec<u8> {
    internal_key(&tree_key(0, &k.to_be_bytes()), seqno, 1)
}

fn keys_in_order(list: &SkipList) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut e = list.front();
    while let Some(entry) = e {
        out.push(entry.key().to_vec());
        e = entry.next();
    }
    out
}

fn sorted(mut keys: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    keys.sort_by(|a, b| key::compare(a, b));
    keys
}

#[test]
fn ascending_descending_and_interleaved_loads_come_out_sorted() {
    for order in 0..3 {
        let list = SkipList::new();
        let mut inserted = Vec::new();
        for i in 0u32..3_000 {
            let k = match order {
                0 => ikey(i, 1),
                1 => ikey(3_000 - i, 1),
                // Runs of ascending keys that restart below the last.
                _ => ikey((i % 100) * 1_000 + i / 100, 1),
            };
            let e = list.insert(&[&k[..5], &k[5..]], &k[..4]);
            assert_eq!(e.key(), &k[..]);
            assert_eq!(e.value(), &k[..4]);
            inserted.push(k);
        }
        assert_eq!(list.len(), 3_000);
        assert_eq!(keys_in_order(&list), sorted(inserted), "order {order}");
    }
}

/// A writer reads the list's height, then takes the hint, which another
/// writer left taller and bracketing a larger key: the search for a
/// small key must start from the head, not from that bracket.
#[test]
fn a_search_from_a_splice_taller_than_the_height_read_starts_at_the_head() {
    let list = SkipList::new();
    for i in 0..200u32 {
        list.insert(&[&ikey(i * 2, 1)], b"v");
    }
    let height = list.height.load(Ordering::Relaxed);
    assert!(height >= 2, "200 entries reach level 1");
    let mut splice = Splice::new();
    list.place(&mut splice, &ikey(399, 1), height);
    let key = ikey(1, 1);
    list.place(&mut splice, &key, 1);
    let (p, n) = (splice.prev[0], splice.next[0]);
    // SAFETY: a splice of this list brackets entries of it.
    unsafe {
        assert_eq!(key_of(p), ikey(0, 1).as_slice(), "the entry before");
        assert_eq!(key_of(n), ikey(2, 1).as_slice(), "the entry after");
    }
}

#[test]
fn newer_entries_of_a_key_go_before_older_ones_on_an_ascending_load() {
    let list = SkipList::new();
    for seqno in 1..=50 {
        list.insert(&[&ikey(7, seqno)], b"v");
    }
    let seqnos: Vec<u64> = keys_in_order(&list)
        .iter()
        .map(|k| key::parse(k).unwrap().seqno)
        .collect();
    assert_eq!(seqnos, (1..=50).rev().collect::<Vec<_>>());
}

#[test]
fn a_position_is_followed_only_by_its_own_list() {
    let a = SkipList::new();
    let b = SkipList::new();
    let at = a.insert(&[&ikey(1, 1)], b"one").position();
    assert_eq!(a.entry(at).unwrap().value(), b"one");
    assert!(b.entry(at).is_none());
}

#[test]
fn concurrent_writers_lose_nothing_and_readers_always_see_order() {
    let list = Arc::new(SkipList::new());
    let writers: Vec<_> = (0u32..4)
        .map(|t| {
            let list = Arc::clone(&list);
            std::thread::spawn(move || {
                // Interleaved ascending runs: every writer's keys fall
                // between the others', and one writer at a time holds
                // the hint.
                for i in 0u32..5_000 {
                    list.insert(&[&ikey(i * 4 + t, 1)], &i.to_le_bytes());
                }
            })
        })
        .collect();
    let reader = {
        let list = Arc::clone(&list);
        std::thread::spawn(move || {
            for _ in 0..50 {
                let keys = keys_in_order(&list);
                assert!(keys
                    .windows(2)
                    .all(|w| key::compare(&w[0], &w[1]) == Order::Less));
                if let (Some(f), Some(l)) = (list.front(), list.back()) {
                    assert!(key::compare(f.key(), l.key()) != Order::Greater);
                }
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    reader.join().unwrap();
    let want: Vec<Vec<u8>> = (0u32..20_000).map(|k| ikey(k, 1)).collect();
    assert_eq!(keys_in_order(&list), want);
    assert_eq!(list.len(), 20_000);
    for k in (0u32..20_000).step_by(997) {
        let e = list.lower_bound(&ikey(k, 1)).unwrap();
        assert_eq!(e.key(), &ikey(k, 1)[..]);
        assert_eq!(e.value(), &(k / 4).to_le_bytes());
    }
}

/// The only inserter links with plain stores (`Inserters::One`): a
/// writer in an order that makes it go everywhere in the list (a
/// shuffled one, with ascending runs), and readers meanwhile always see
/// the entries in order and never fewer than before.
#[test]
fn the_only_inserter_loses_nothing_and_readers_always_see_order() {
    let list = Arc::new(SkipList::new());
    let n = 20_000u32;
    let writer = {
        let list = Arc::clone(&list);
        std::thread::spawn(move || {
            let has = |k: u32| {
                list.lower_bound(&ikey(k, 1))
                    .is_some_and(|e| e.key() == &ikey(k, 1)[..])
            };
            for i in 0..n {
                let k = if i % 3 == 0 { i } else { (i * 7919) % n };
                if !has(k) {
                    let e = list.try_insert(&[&ikey(k, 1)], &k.to_le_bytes(), Inserters::One);
                    assert!(e.is_some(), "a list without a limit is never full");
                }
            }
            for k in 0..n {
                if !has(k) {
                    list.try_insert(&[&ikey(k, 1)], &k.to_le_bytes(), Inserters::One);
                }
            }
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let list = Arc::clone(&list);
            std::thread::spawn(move || {
                let mut seen = 0;
                for _ in 0..40 {
                    let keys = keys_in_order(&list);
                    assert!(keys
                        .windows(2)
                        .all(|w| key::compare(&w[0], &w[1]) == Order::Less));
                    assert!(keys.len() >= seen, "{} entries after {seen}", keys.len());
                    seen = keys.len();
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    let want: Vec<Vec<u8>> = (0..n).map(|k| ikey(k, 1)).collect();
    assert_eq!(keys_in_order(&list), want);
    assert_eq!(list.len(), n as usize);
    for k in (0..n).step_by(997) {
        assert_eq!(
            list.lower_bound(&ikey(k, 1)).unwrap().value(),
            &k.to_le_bytes()
        );
    }
}

proptest::proptest! {
    /// Seeks in every direction agree with a sorted model, whatever the
    /// order of inserts.
    #[test]
    fn seeks_agree_with_a_sorted_model(
        keys in proptest::collection::hash_set(0u32..500, 0..200),
        probes in proptest::collection::vec(0u32..510, 1..40),
    ) {
        let list = SkipList::new();
        let keys: Vec<u32> = keys.into_iter().collect();
        for k in &keys {
            list.insert(&[&ikey(*k, 5)], &k.to_le_bytes());
        }
        let model = sorted(keys.iter().map(|k| ikey(*k, 5)).collect());
        proptest::prop_assert_eq!(keys_in_order(&list), model.clone());
        proptest::prop_assert_eq!(list.front().map(|e| e.key().to_vec()), model.first().cloned());
        proptest::prop_assert_eq!(list.back().map(|e| e.key().to_vec()), model.last().cloned());
        for p in probes {
            for seqno in [4, 5, 6] {
                let t = ikey(p, seqno);
                let ge = model.iter().find(|k| key::compare(k, &t) != Order::Less).cloned();
                let le = model.iter().rev().find(|k| key::compare(k, &t) != Order::Greater).cloned();
                let lt = model.iter().rev().find(|k| key::compare(k, &t) == Order::Less).cloned();
                proptest::prop_assert_eq!(list.lower_bound(&t).map(|e| e.key().to_vec()), ge);
                proptest::prop_assert_eq!(list.upper_bound(&t, true).map(|e| e.key().to_vec()), le);
                proptest::prop_assert_eq!(list.upper_bound(&t, false).map(|e| e.key().to_vec()), lt);
            }
        }
    }
}
