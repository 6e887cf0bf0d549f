//! Tests of the block: decoding, the restart search and the iterator.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]
use super::scan::Against;
use super::*;
use crate::iter::InternalIterator;
use crate::key;
use crate::key::Kind;
use crate::table::block_builder::common_prefix;
use crate::table::test_util::{check_ops, exhaustive_walk, sample_entries, Op};
use crate::table::BlockBuilder;
use proptest::prelude::*;
use std::cmp::Ordering;

fn build(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Arc<Block> {
    let mut b = BlockBuilder::new(interval);
    for (k, v) in entries {
        b.add(k, v);
    }
    let data = b.finish().to_vec();
    Arc::new(Block::new(data, Arc::from(Path::new("test.sst")), 0).unwrap())
}

#[test]
fn round_trip_many_keys_every_position() {
    for interval in [1, 2, 16, 1000] {
        let model = sample_entries(500, 7);
        let block = build(&model, interval);
        exhaustive_walk(&mut block.iter(), &model);
    }
}

#[test]
fn single_entry_block() {
    let model = sample_entries(1, 1);
    let block = build(&model, 16);
    exhaustive_walk(&mut block.iter(), &model);
}

#[test]
fn malformed_restart_arrays_are_refused() {
    let file: Arc<Path> = Arc::from(Path::new("x.sst"));
    for data in [
        vec![],
        vec![1, 0, 0],
        vec![0, 0, 0, 0],
        vec![1, 0, 0, 0],
        vec![0, 0, 0, 0, 1, 0, 0, 0],
        vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0],
        vec![0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff],
    ] {
        let err = Block::new(data.clone(), file.clone(), 9).unwrap_err();
        assert!(err.is_corruption(), "{data:?}: {err}");
    }
}

#[test]
fn damaged_entry_is_reported_not_panicked() {
    let model = sample_entries(40, 3);
    let block = build(&model, 4);
    let mut data = block.data().to_vec();
    data[1] = 0xff; // the first entry's unshared length becomes huge
    let block = Arc::new(Block::new(data, Arc::from(Path::new("x.sst")), 77).unwrap());
    let mut it = block.iter();
    it.seek_to_first();
    assert!(!it.valid());
    let err = it.status().unwrap_err();
    assert!(err.to_string().contains("offset 77"), "{err}");
    it.seek_to_last(); // sticky: stays invalid
    assert!(!it.valid());
}

/// Point and index seeks (with restart prefixes or without, the index
/// seek with the key before) land on the first entry `>= target`, for
/// keys sharing a long head and targets inside, between, before and after
/// them.
#[test]
fn point_seeks_find_the_first_entry_not_before_the_target() {
    let ks = [0u8, 0, 0, 7];
    let tk = |s: &[u8]| [&ks[..], s].concat();
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..300u32)
        .map(|i| {
            let k = tk(format!("0000000000{:06}", i * 3).as_bytes());
            (
                key::internal_key(&k, u64::from(i % 5) + 1, 1),
                i.to_be_bytes().to_vec(),
            )
        })
        .collect();
    let mut targets: Vec<Vec<u8>> = (0..905u32)
        .flat_map(|i| {
            let k = tk(format!("0000000000{i:06}").as_bytes());
            [key::internal_key(&k, 9, 1), key::internal_key(&k, 1, 1)]
        })
        .collect();
    for other in [
        &b""[..],
        b"\0\0\0\x07",
        b"\0\0\0\x07000",
        b"\0\0\0\x071",
        b"\0\0\0\x08",
    ] {
        targets.push(key::internal_key(other, 1, 1));
    }
    for interval in [1, 3] {
        let plain = build(&entries, interval);
        let prefixed = Block::new(plain.data().to_vec(), Arc::from(Path::new("i.sst")), 0)
            .unwrap()
            .with_restart_prefixes()
            .unwrap();
        for t in &targets {
            let at = entries.partition_point(|(k, _)| key::compare(k, t) == Ordering::Less);
            let want = entries.get(at).map(|(k, v)| (k.as_slice(), v.as_slice()));
            for block in [&*plain, &prefixed] {
                let mut k = KeyBuf::new();
                let got = block.seek_in_place(t, &mut k).unwrap();
                assert_eq!(got.map(|v| (&*k, block.slice(v))), want, "{t:?}");
                let mut before = KeyBuf::new();
                let got = block.seek_index(t, true, &mut k, &mut before).unwrap();
                let found = got.as_ref().map(|h| (h.key, block.slice(h.value)));
                assert_eq!(found, want);
                if let Some(hit) = got {
                    let prev = at.checked_sub(1).map(|p| entries[p].0.as_slice());
                    assert_eq!(hit.before, Some(prev.unwrap_or(&[])), "{t:?}");
                }
            }
        }
    }
}

/// Values whose lengths take one, two or three bytes decode alike, and a
/// length written in more bytes than it needs is refused.
#[test]
fn value_lengths_of_every_width_decode() {
    let lens = [
        0usize, 1, 127, 128, 129, 255, 256, 1000, 16_383, 16_384, 20_000,
    ];
    let model: Vec<(Vec<u8>, Vec<u8>)> = lens
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let tk = key::tree_key(0, format!("k{i:02}").as_bytes());
            (key::internal_key(&tk, 1, 1), vec![b'v' ^ (i as u8); n])
        })
        .collect();
    for interval in [1, 4] {
        exhaustive_walk(&mut build(&model, interval).iter(), &model);
    }
    // shared 0, key of 1 byte, value of 5 bytes written as 0x85 0x00.
    let mut data = vec![0, 1, 0x85, 0x00, b'k', 1, 2, 3, 4, 5];
    data.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
    let block = Block::new(data, Arc::from(Path::new("v.sst")), 0).unwrap();
    assert!(block.entry(0).is_none(), "a two-byte length ending in 0");
}

/// The iterator's seeks through a block's restart prefixes: built with the
/// block (every entry a restart point, as in an index block, which the seek
/// lands on directly, or not) or by the block's own searches once it has
/// been searched a few times.
#[test]
fn iterator_seeks_through_restart_prefixes() {
    let model = sample_entries(300, 11);
    for interval in [1, 3, 16] {
        let plain = build(&model, interval);
        let prefixed = Block::new(plain.data().to_vec(), Arc::from(Path::new("i.sst")), 0)
            .unwrap()
            .with_restart_prefixes()
            .unwrap();
        assert_eq!(prefixed.entries_if_all_restarts().is_some(), interval == 1);
        exhaustive_walk(&mut Arc::new(prefixed).iter(), &model);
        exhaustive_walk(&mut plain.iter(), &model);
        assert!(plain.prefixes.get().is_some(), "interval {interval}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ops_match_a_sorted_vec(
        n in 1usize..200,
        seed in any::<u64>(),
        interval in 1usize..20,
        ops in proptest::collection::vec(any::<Op>(), 1..60),
    ) {
        let model = sample_entries(n, seed);
        let block = build(&model, interval);
        check_ops(&mut block.iter(), &model, &ops);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200),
                                   target in proptest::collection::vec(any::<u8>(), 0..20)) {
        if let Ok(block) = Block::new(data, Arc::from(Path::new("f.sst")), 0) {
            let block = Arc::new(block);
            let mut it = block.iter();
            it.seek_to_first();
            while it.valid() { it.next(); }
            it.seek_to_last();
            while it.valid() { it.prev(); }
            it.seek(&target);
            it.seek_for_prev(&target);
            let _ = it.status();
        }
    }
}

// The scan's order of keys against a target.

/// Keys encoded as a block encodes them: (shared, suffix) against the
/// key before.
fn encode(keys: &[Vec<u8>]) -> Vec<(usize, Vec<u8>)> {
    let mut prev: &[u8] = &[];
    keys.iter()
        .map(|k| {
            let shared = common_prefix(prev, k);
            prev = k;
            (shared, k[shared..].to_vec())
        })
        .collect()
}

fn ikey(tree: &[u8], seqno: u64) -> Vec<u8> {
    key::internal_key(tree, seqno, Kind::Put as u8)
}

/// Every key's order against every target, and every key found
/// rebuilt, as the full comparison of rebuilt keys says.
#[test]
fn tells_the_order_of_every_key_as_the_full_comparison_does() {
    let mut keys = Vec::new();
    for tree in [
        &b"a"[..],
        b"ab",
        b"abc",
        b"abd",
        b"b",
        b"ba",
        b"bab",
        b"c\xff",
        b"c\xff\x00",
    ] {
        for seqno in [900, 300, 299, 5, 1] {
            keys.push(ikey(tree, seqno));
        }
    }
    keys.sort_by(|a, b| key::compare(a, b));
    let entries = encode(&keys);
    let mut targets: Vec<Vec<u8>> = keys.clone();
    for tree in [
        &b""[..],
        b"a\x00",
        b"aa",
        b"abb",
        b"abcd",
        b"bb",
        b"c",
        b"c\xff\x00\x00",
        b"d",
    ] {
        for seqno in [1000, 300, 0] {
            targets.push(ikey(tree, seqno));
        }
    }
    let mut told = 0;
    for target in &targets {
        let mut a = Against::new(target).unwrap();
        for (i, (shared, suffix)) in entries.iter().enumerate() {
            // Untold: a scan starts over the full way.
            let Some(ord) = a.next(*shared, suffix) else {
                break;
            };
            told += 1;
            assert_eq!(
                ord,
                key::compare(&keys[i], target),
                "key {i} against {target:?}"
            );
            let mut k = KeyBuf::new();
            if a.rebuild(*shared, suffix, &mut k) {
                assert_eq!(&k[..], &keys[i][..]);
            }
            if ord != Ordering::Less {
                break;
            }
        }
    }
    assert!(told > targets.len() * 3, "most keys are told: {told}");
}

#[test]
fn an_entry_sharing_more_than_the_last_key_has_is_not_told() {
    let target = ikey(b"abc", 7);
    let mut a = Against::new(&target).unwrap();
    assert_eq!(a.next(0, &ikey(b"ab", 7)), Some(Ordering::Less));
    assert_eq!(a.next(11, b"x"), None);
    assert!(Against::new(b"short").is_none());
}

// Keys rebuilt in a `KeyBuf`.

#[test]
fn short_and_long_keys_splice_like_a_vec() {
    let mut k = KeyBuf::new();
    let mut model: Vec<u8> = Vec::new();
    for (shared, suffix) in [(0, &b"abc"[..]), (2, &[7u8; 70][..]), (5, b"z"), (1, b"q")] {
        k.splice(shared, suffix);
        model.truncate(shared);
        model.extend_from_slice(suffix);
        assert_eq!(&*k, model.as_slice());
    }
    k.clear();
    k.splice(0, b"x");
    assert_eq!(&*k, b"x");
}

#[test]
fn assigned_keys_are_their_two_parts_whatever_their_length() {
    let mut k = KeyBuf::new();
    for (head, tail) in [
        (&b"ab"[..], &b"cd"[..]),
        (&[1u8; 40][..], &[2u8; 40][..]),
        (b"", b"z"),
        (b"hea", b""),
    ] {
        k.assign(head, tail);
        assert_eq!(&*k, [head, tail].concat().as_slice());
    }
}
