//! Test helpers: sample entries and checks of an iterator against a sorted
//! `Vec` model.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::iter::InternalIterator;
use crate::key::{self, InternalKey};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// `n` distinct internal keys in ascending order with values, deterministic
/// in `seed`: two keyspaces, keys sharing prefixes, one to three versions of
/// each tree key, every kind, values from empty to a few hundred bytes.
pub fn sample_entries(n: usize, seed: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut map = BTreeMap::new();
    while map.len() < n {
        let ks = rng.gen_range(0..2u32);
        let len = rng.gen_range(1..12);
        let user: Vec<u8> = (0..len).map(|_| b"abcd"[rng.gen_range(0..4)]).collect();
        let tk = key::tree_key(ks, &user);
        for _ in 0..rng.gen_range(1..4) {
            let seqno = rng.gen_range(1..1_000_000u64);
            let kind = rng.gen_range(0..3u8);
            let vlen = if rng.gen_ratio(1, 20) {
                rng.gen_range(100..400)
            } else {
                rng.gen_range(0..24)
            };
            let value: Vec<u8> = (0..vlen).map(|_| rng.gen_range(b'a'..=b'z')).collect();
            map.insert(
                InternalKey::from(key::internal_key(&tk, seqno, kind)),
                value,
            );
            if map.len() == n {
                break;
            }
        }
    }
    map.into_iter().map(|(k, v)| (k.0.to_vec(), v)).collect()
}

/// One step applied to both an iterator and the model.
#[derive(Debug, Clone)]
pub enum Op {
    SeekToFirst,
    SeekToLast,
    Seek(u16, u8),
    SeekForPrev(u16, u8),
    Next,
    Prev,
}

impl Arbitrary for Op {
    type Parameters = ();
    type Strategy = BoxedStrategy<Op>;

    fn arbitrary_with(_: ()) -> Self::Strategy {
        prop_oneof![
            Just(Op::SeekToFirst),
            Just(Op::SeekToLast),
            (any::<u16>(), any::<u8>()).prop_map(|(i, v)| Op::Seek(i, v)),
            (any::<u16>(), any::<u8>()).prop_map(|(i, v)| Op::SeekForPrev(i, v)),
            Just(Op::Next),
            Just(Op::Next),
            Just(Op::Prev),
            Just(Op::Prev),
        ]
        .boxed()
    }
}

/// A seek target derived from model entry `i`: the key itself, or a key
/// just before or after it, or between its tree key's versions.
pub fn target(model: &[(Vec<u8>, Vec<u8>)], i: usize, variant: u8) -> Vec<u8> {
    let k = &model[i % model.len()].0;
    let p = key::parse(k).unwrap();
    match variant % 6 {
        0 => k.clone(),
        1 => key::seek_key(p.tree_key),
        2 => key::internal_key(p.tree_key, p.seqno.saturating_sub(1), 2),
        3 => key::internal_key(p.tree_key, p.seqno + 1, 0),
        4 => {
            let mut tk = p.tree_key.to_vec();
            tk.push(0);
            key::seek_key(&tk)
        }
        _ => key::seek_key(&p.tree_key[..p.tree_key.len() - 1]),
    }
}

/// Index of the first model entry `>= t`.
pub fn lower_bound(model: &[(Vec<u8>, Vec<u8>)], t: &[u8]) -> usize {
    model.partition_point(|(k, _)| key::compare(k, t) == Ordering::Less)
}

/// Index of the last model entry `<= t`.
pub fn floor(model: &[(Vec<u8>, Vec<u8>)], t: &[u8]) -> Option<usize> {
    model
        .partition_point(|(k, _)| key::compare(k, t) != Ordering::Greater)
        .checked_sub(1)
}

/// Asserts `it` is where the model says (`None`: not valid) and healthy.
pub fn assert_at(
    it: &dyn InternalIterator,
    model: &[(Vec<u8>, Vec<u8>)],
    pos: Option<usize>,
    what: &str,
) {
    it.status().unwrap();
    match pos {
        Some(i) if i < model.len() => {
            assert!(
                it.valid(),
                "{what}: expected entry {i}, iterator is not valid"
            );
            assert_eq!(it.key(), &model[i].0[..], "{what}: key of entry {i}");
            assert_eq!(it.value(), &model[i].1[..], "{what}: value of entry {i}");
        }
        _ => assert!(!it.valid(), "{what}: expected not valid, at {:?}", it.key()),
    }
}

/// Applies `ops` to `it` and to a cursor over `model`, checking after each.
pub fn check_ops(it: &mut dyn InternalIterator, model: &[(Vec<u8>, Vec<u8>)], ops: &[Op]) {
    let mut pos: Option<usize> = None;
    for (n, op) in ops.iter().enumerate() {
        match *op {
            Op::SeekToFirst => {
                it.seek_to_first();
                pos = Some(0);
            }
            Op::SeekToLast => {
                it.seek_to_last();
                pos = model.len().checked_sub(1);
            }
            Op::Seek(i, v) => {
                let t = target(model, i.into(), v);
                it.seek(&t);
                pos = Some(lower_bound(model, &t));
            }
            Op::SeekForPrev(i, v) => {
                let t = target(model, i.into(), v);
                it.seek_for_prev(&t);
                pos = floor(model, &t);
            }
            Op::Next | Op::Prev if !it.valid() => continue,
            Op::Next => {
                it.next();
                pos = pos.map(|p| p + 1);
            }
            Op::Prev => {
                it.prev();
                pos = pos.and_then(|p| p.checked_sub(1));
            }
        }
        assert_at(it, model, pos, &format!("op {n} {op:?}"));
    }
}

/// Visits every position in both directions, switching direction at each,
/// and seeks to every key and to targets between keys.
pub fn exhaustive_walk(it: &mut dyn InternalIterator, model: &[(Vec<u8>, Vec<u8>)]) {
    it.seek_to_first();
    for i in 0..model.len() {
        assert_at(it, model, Some(i), "forward scan");
        it.next();
    }
    assert_at(it, model, None, "end of forward scan");
    it.seek_to_last();
    for i in (0..model.len()).rev() {
        assert_at(it, model, Some(i), "backward scan");
        it.prev();
    }
    assert_at(it, model, None, "end of backward scan");
    for i in 0..model.len() {
        it.seek(&model[i].0);
        assert_at(it, model, Some(i), "seek");
        it.prev();
        assert_at(it, model, i.checked_sub(1), "prev after seek");
        if i > 0 {
            it.next();
            assert_at(it, model, Some(i), "next after prev");
        }
        it.seek_for_prev(&model[i].0);
        assert_at(it, model, Some(i), "seek_for_prev");
        it.next();
        assert_at(it, model, Some(i + 1), "next after seek_for_prev");
        if i + 1 < model.len() {
            it.prev();
            assert_at(it, model, Some(i), "prev after next");
        }
        for v in 1..6 {
            let t = target(model, i, v);
            it.seek(&t);
            assert_at(it, model, Some(lower_bound(model, &t)), "seek between keys");
            it.seek_for_prev(&t);
            assert_at(it, model, floor(model, &t), "seek_for_prev between keys");
        }
    }
}
