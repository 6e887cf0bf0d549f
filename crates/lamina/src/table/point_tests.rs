//! Point lookups through the blocked filter and data-block hash index,
//! against a sorted model; a damaged hash index or filter is corruption,
//! never a wrong answer.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use super::test_util::sample_entries;
use super::*;
use crate::cache::BlockCache;
use crate::coding::masked_crc2;
use crate::fs::{FileSystem, RealFs};
use crate::iter::InternalIterator;
use crate::key;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn options(block_size: usize, interval: usize) -> TableOptions {
    TableOptions {
        block_size,
        restart_interval: interval,
        ..TableOptions::default()
    }
}

fn build(path: &Path, model: &Entries, opts: TableOptions) -> Arc<Table> {
    let mut b = TableBuilder::new(RealFs.create(path).unwrap(), path.to_path_buf(), opts);
    for (k, v) in model {
        b.add(k, v).unwrap();
    }
    b.finish().unwrap();
    open(path).unwrap()
}

fn open(path: &Path) -> crate::Result<Arc<Table>> {
    let cache = Arc::new(BlockCache::new(1 << 20));
    Table::open(RealFs.open(path).unwrap(), path.to_path_buf(), 1, cache).map(Arc::new)
}

/// The newest entry of `tk` with a seqno at most `seqno`, by the model.
fn expected(model: &Entries, tk: &[u8], seqno: u64) -> Option<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .find(|(k, _)| {
            let p = key::parse(k).unwrap();
            p.tree_key == tk && p.seqno <= seqno
        })
        .cloned()
}

/// What a point lookup of `tk` at `seqno` finds in `t` (entries of other
/// keys count as nothing).
fn lookup(t: &Table, tk: &[u8], seqno: u64) -> Option<(Vec<u8>, Vec<u8>)> {
    let target = key::seek_key_at(tk, seqno);
    match t
        .get_point(tk, &target, false, |k, v| (k.to_vec(), v.to_vec()))
        .unwrap()
    {
        Probe::Found(kv) => Some(kv).filter(|(k, _)| key::tree_key_of(k) == tk),
        Probe::Absent => None,
        Probe::NeedsIo => panic!("a lookup allowed to read needs to read"),
    }
}

fn tree_keys(model: &Entries) -> BTreeSet<Vec<u8>> {
    model
        .iter()
        .map(|(k, _)| key::tree_key_of(k).to_vec())
        .collect()
}

/// Checks every key of `model` at each of its seqnos and at the newest, and
/// every key of `absent` (none of which is in the model).
fn check_lookups(t: &Table, model: &Entries, absent: &BTreeSet<Vec<u8>>) {
    for (k, _) in model {
        let p = key::parse(k).unwrap();
        for seqno in [p.seqno, key::MAX_SEQNO, p.seqno.saturating_sub(1)] {
            assert_eq!(
                lookup(t, p.tree_key, seqno),
                expected(model, p.tree_key, seqno),
                "key {:02x?} at {seqno}",
                p.tree_key
            );
        }
    }
    for tk in absent {
        assert_eq!(lookup(t, tk, key::MAX_SEQNO), None, "absent {tk:02x?}");
    }
    // Present and absent keys together in order, twice, as a reader going
    // through the keys does: each read may start where the last one ended
    // (`recent`'s place in the block), and must find what a fresh one does.
    let mut in_order: Vec<&Vec<u8>> = absent.iter().collect();
    let present = tree_keys(model);
    in_order.extend(present.iter());
    in_order.sort();
    for _ in 0..2 {
        for tk in &in_order {
            for seqno in [key::MAX_SEQNO, 1] {
                assert_eq!(
                    lookup(t, tk, seqno),
                    expected(model, tk, seqno),
                    "in order: {tk:02x?} at {seqno}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn point_lookups_match_the_model(
        n in 1usize..300,
        seed in any::<u64>(),
        block_size in prop_oneof![Just(64usize), Just(300), Just(4096)],
        interval in 1usize..20,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let model = sample_entries(n, seed);
        let present = tree_keys(&model);
        let absent: BTreeSet<Vec<u8>> = tree_keys(&sample_entries(200, seed ^ 0x5555))
            .difference(&present)
            .cloned()
            .collect();
        let t = build(&dir.path().join("t.sst"), &model, options(block_size, interval));
        check_lookups(&t, &model, &absent);
        prop_assert_eq!(t.verify().unwrap(), model.len() as u64);
    }
}

/// Table slots hold only blocks the cache holds: with a cache of a few
/// blocks, lookups all over the table leave every slotted block cached (an
/// evicted block left its slot), and answers stay right; with a cache that
/// holds the table, a second pass is served from the slots.
#[test]
fn slots_hold_only_cached_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let model = sample_entries(3000, 7);
    build(&path, &model, options(512, 4));
    let keys = tree_keys(&model);
    for (capacity, fits) in [(4 << 10, false), (16 << 20, true)] {
        let cache = Arc::new(BlockCache::new(capacity));
        let t = Table::open(
            RealFs.open(&path).unwrap(),
            path.clone(),
            1,
            Arc::clone(&cache),
        )
        .unwrap();
        for round in 0..2 {
            for (i, tk) in keys.iter().enumerate() {
                // Out of order, so that blocks are entered through the index.
                let tk = keys.iter().nth((i * 7919) % keys.len()).unwrap_or(tk);
                assert_eq!(
                    lookup(&t, tk, key::MAX_SEQNO),
                    expected(&model, tk, key::MAX_SEQNO),
                    "round {round}"
                );
                if i % 97 == 0 {
                    for b in t.slotted_blocks() {
                        assert!(
                            cache.holds(1, b.offset(), &b),
                            "block at {} slotted but not cached",
                            b.offset()
                        );
                    }
                }
            }
        }
        let slotted = t.slotted_blocks().len();
        if fits {
            assert!(cache.slots_serve());
            assert!(slotted > 10, "{slotted} blocks slotted");
        } else {
            assert!(
                slotted <= 8,
                "{slotted} blocks slotted in a cache of about 8"
            );
        }
    }
}

/// A 64 KiB block of small entries would pass the hash index's limit of
/// restart points (and lose its index): such blocks are cut at the limit.
#[test]
fn blocks_of_small_entries_are_cut_where_the_hash_index_ends() {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(6000, 7);
    let interval = 4;
    let t = build(
        &dir.path().join("t.sst"),
        &model,
        options(64 << 10, interval),
    );
    let p = t.properties();
    let per_block = (block_builder::MAX_HASHED_RESTARTS * interval) as u64;
    assert!(
        p.data_raw_bytes / p.data_blocks < 64 << 10,
        "the test needs blocks the entry limit cuts: {} bytes a block",
        p.data_raw_bytes / p.data_blocks
    );
    assert!(
        p.data_blocks >= p.entries.div_ceil(per_block),
        "{} entries in {} blocks: more than {per_block} a block",
        p.entries,
        p.data_blocks
    );
    check_lookups(&t, &model, &BTreeSet::new());
}

#[test]
fn a_lookup_that_may_not_read_says_so_until_the_block_is_cached() {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(2000, 21);
    // Blocks over several pages: read with a read call, then cached.
    let t = build(&dir.path().join("c.sst"), &model, options(16 << 10, 16));
    let tk = key::tree_key_of(&model[0].0).to_vec();
    let target = key::seek_key(&tk);
    let value = |t: &Table, cached_only| {
        t.get_point(&tk, &target, cached_only, |_, v| v.to_vec())
            .unwrap()
    };
    assert_eq!(value(&t, true), Probe::NeedsIo);
    assert_eq!(value(&t, false), Probe::Found(model[0].1.clone()));
    assert_eq!(value(&t, true), Probe::Found(model[0].1.clone()));
}

/// A finished data block over `model`, and where its buckets
/// are (start, count).
fn hashed_block(model: &Entries, interval: usize) -> (Vec<u8>, usize, usize) {
    let mut b = BlockBuilder::with_hash_index(interval);
    for (k, v) in model {
        b.add(k, v);
    }
    let data = b.finish().to_vec();
    let n = data.len();
    let count = u16::from_le_bytes([data[n - 6], data[n - 5]]) as usize;
    (data, n - 6 - count, count)
}

fn block(data: Vec<u8>) -> crate::Result<Arc<Block>> {
    Block::with_hash_index(data, Arc::from(Path::new("b.sst")), 40).map(Arc::new)
}

/// A block with a hash index is as long as the builder said it would be
/// just before `finish` (the table builder cuts blocks by that estimate),
/// whatever the number of keys modulo 3 (the buckets are `ceil(4/3 × keys)`).
#[test]
fn a_hashed_blocks_estimated_size_is_its_size() {
    for n in 1..=12 {
        let model = sample_entries(n, 21 + n as u64);
        let mut b = BlockBuilder::with_hash_index(4);
        for (k, v) in &model {
            b.add(k, v);
        }
        let estimate = b.estimated_size();
        assert_eq!(b.finish().len(), estimate, "{n} entries");
    }
}

/// Blocks written before writers cut them at the hash index's limit: more
/// than 254 restart points and so no buckets (docs/format.md
/// #data-block-hash-index). `TableBuilder` no longer writes one; the block
/// builder alone still does, and every key must still be found, by the
/// binary search.
#[test]
fn a_block_past_the_restart_limit_has_no_buckets_and_still_reads() {
    let model = sample_entries(400, 11);
    let (data, _, count) = hashed_block(&model, 1);
    let restarts = u32::from_le_bytes(data[data.len() - 4..].try_into().unwrap()) as usize;
    assert!(
        restarts > block_builder::MAX_HASHED_RESTARTS,
        "{restarts} restart points"
    );
    assert_eq!(count, 0, "no buckets");
    let b = block(data).unwrap();
    b.verify_hash_index().unwrap();
    let mut key = KeyBuf::new();
    for tk in tree_keys(&model) {
        let target = key::seek_key(&tk);
        let h = key_hash(&tk);
        assert_eq!(b.hash_seek(&tk, h, &target, &mut key).unwrap(), None);
        let want = expected(&model, &tk, key::MAX_SEQNO).map(|(_, v)| v);
        let found = b
            .seek_in_place(&target, &mut key)
            .unwrap()
            .map(|v| b.slice(v).to_vec());
        // The first entry at or after the seek key is the newest of `tk`
        // when it has one.
        if let Some(want) = want {
            assert_eq!(found, Some(want), "{tk:02x?}");
        }
    }
}

/// `seek_in_place` answers as a block iterator's seek does, for keys in
/// the block, between its keys and outside them, at several seqnos:
/// through the plain binary search of its first lookups and through the
/// restart keys' numbers it keeps after them (keys sharing long heads, so
/// many numbers tie and are compared in full).
#[test]
fn seeks_in_place_agree_with_the_iterator_before_and_after_the_restart_numbers() {
    for (seed, interval) in [(3u64, 1usize), (4, 3), (5, 16)] {
        let model: Entries = sample_entries(300, seed)
            .into_iter()
            .map(|(k, v)| {
                let p = key::parse(&k).unwrap();
                let mut user = b"a-long-shared-head-of-twenty-bytes/".to_vec();
                user.extend_from_slice(&p.tree_key[key::KEYSPACE_ID_LEN..]);
                let tk = key::tree_key(p.keyspace(), &user);
                (key::internal_key(&tk, p.seqno, p.kind as u8), v)
            })
            .collect();
        let b = block(hashed_block(&model, interval).0).unwrap();
        let mut targets: Vec<Vec<u8>> = Vec::new();
        for tk in tree_keys(&model)
            .iter()
            .chain(tree_keys(&sample_entries(100, seed + 9)).iter())
        {
            for seqno in [key::MAX_SEQNO, 500_000, 1] {
                targets.push(key::seek_key_at(tk, seqno));
            }
        }
        targets.push(Vec::new());
        targets.push(vec![0xff; 40]);
        for pass in 0..2 {
            for target in &targets {
                let mut it = b.iter();
                it.seek(target);
                let want = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
                let mut k = KeyBuf::new();
                let got = b
                    .seek_in_place(target, &mut k)
                    .unwrap()
                    .map(|v| (k.to_vec(), b.slice(v).to_vec()));
                assert_eq!(
                    got, want,
                    "pass {pass}, interval {interval}, target {target:02x?}"
                );
            }
        }
    }
}

/// Many restart keys whose numbers equal the target's (a run of keys sharing
/// a long prefix between two keys that share none), in a block whose every
/// entry is a restart point (as index blocks are): the entry found is the
/// first not before the target, also when it lies beyond the ties counted one
/// by one.
#[test]
fn restart_entries_are_found_among_many_numbers_that_tie() {
    let ks: key::KeyspaceId = 0;
    let mut users: Vec<Vec<u8>> = vec![b"a".to_vec(), b"c".to_vec()];
    users
        .extend((0..40).map(|i| format!("b-prefix-longer-than-sixteen-bytes/{i:03}").into_bytes()));
    users.sort();
    let keys: Vec<Vec<u8>> = users
        .iter()
        .map(|u| key::internal_key(&key::tree_key(ks, u), 7, key::Kind::Put as u8))
        .collect();
    let mut builder = BlockBuilder::new(1);
    for k in &keys {
        builder.add(k, b"v");
    }
    let data = builder.finish().to_vec();
    let b = Block::new(data, Arc::from(Path::new("b.sst")), 40)
        .and_then(Block::with_restart_prefixes)
        .unwrap();
    for (i, k) in keys.iter().enumerate() {
        let target = key::seek_key_at(key::tree_key_of(k), key::MAX_SEQNO);
        let (mut key, mut before) = (KeyBuf::new(), KeyBuf::new());
        match b.seek_index(&target, true, &mut key, &mut before).unwrap() {
            Some(e) => {
                assert_eq!((e.ordinal, e.key), (Some(i), k.as_slice()), "key {i}");
                let want = if i == 0 {
                    &[][..]
                } else {
                    keys[i - 1].as_slice()
                };
                assert_eq!(e.before, Some(want), "the key before key {i}");
            }
            None => panic!("key {i} not found"),
        }
    }
}

#[test]
fn a_bucket_naming_a_missing_restart_point_is_corruption() {
    let model = sample_entries(60, 5);
    let (mut data, start, count) = hashed_block(&model, 4);
    assert!(count >= 1);
    let bucket = (start..start + count).find(|&i| data[i] != 255).unwrap();
    data[bucket] = 200; // the block has 15 restart points
    let err = block(data).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(err.to_string().contains("hash bucket"), "{err}");
}

/// The checks of a block read from a file, at their edges: a bucket may
/// name the last restart point but not one past it, and restart points
/// must ascend strictly from 0 and stay before the restart array.
#[test]
fn buckets_and_restart_points_are_checked_at_their_edges() {
    let model = sample_entries(60, 5);
    let (data, start, count) = hashed_block(&model, 4);
    let restarts = 15usize; // 60 entries, a restart point every 4
    let bucket = (start..start + count).find(|&i| data[i] != 255).unwrap();
    for (value, ok) in [(14u8, true), (15, false), (253, false), (254, true)] {
        let mut d = data.clone();
        d[bucket] = value;
        assert_eq!(block(d).is_ok(), ok, "a bucket naming {value}");
    }
    // The restart array ends where the buckets start.
    let word = |i: usize| start - 4 * (restarts - i);
    let at = |d: &[u8], i: usize| u32::from_le_bytes(d[word(i)..word(i) + 4].try_into().unwrap());
    let restarts_offset = word(0) as u32;
    for (i, value, ok) in [
        (0, 1, false),
        (5, at(&data, 4), false),
        (5, at(&data, 4) + 1, true),
        (14, restarts_offset, false),
        (14, restarts_offset - 1, true),
    ] {
        let mut d = data.clone();
        d[word(i)..word(i) + 4].copy_from_slice(&value.to_le_bytes());
        assert_eq!(block(d).is_ok(), ok, "restart point {i} at {value}");
    }
}

#[test]
fn a_bucket_naming_a_later_restart_point_is_slower_never_wrong() {
    let model = sample_entries(60, 5);
    let (good, start, count) = hashed_block(&model, 4);
    let restarts = u32::from_le_bytes(good[good.len() - 4..].try_into().unwrap()) as u8;
    let bucket_of = |tk: &[u8]| {
        let h = xxhash_rust::xxh3::xxh3_64(tk);
        (h, start + super::block_builder::bucket_of(h, count))
    };
    // A key whose bucket is its own and names an early restart point.
    let (tk, h, bucket) = model
        .iter()
        .map(|(k, _)| key::tree_key_of(k).to_vec())
        .find_map(|tk| {
            let (h, b) = bucket_of(&tk);
            (good[b] < 250 && good[b] + 2 < restarts).then_some((tk, h, b))
        })
        .unwrap();
    let want = expected(&model, &tk, key::MAX_SEQNO).unwrap().1;
    let target = key::seek_key(&tk);
    let mut key = KeyBuf::new();
    let mut data = good.clone();
    data[bucket] = restarts - 1;
    let b = block(data).unwrap();
    assert_eq!(
        b.hash_seek(&tk, h, &target, &mut key).unwrap(),
        None,
        "binary search"
    );
    let found = b.seek_in_place(&target, &mut key).unwrap().unwrap();
    assert_eq!(b.slice(found), want.as_slice());
    assert!(b.verify_hash_index().unwrap_err().is_corruption());
    // The undamaged block finds it through the bucket, and verifies.
    let b = block(good).unwrap();
    let found = b.hash_seek(&tk, h, &target, &mut key).unwrap().flatten();
    assert_eq!(found.map(|v| b.slice(v).to_vec()), Some(want));
    b.verify_hash_index().unwrap();
}

/// A key whose first entry is a restart point, with older entries in the
/// next interval: its bucket names that restart point, and the lookup scans
/// from it (not from the interval before) and finds the entry for every
/// snapshot, through the bucket alone.
#[test]
fn a_key_starting_at_a_restart_point_is_found_from_it_at_every_seqno() {
    let (a, b, c) = (
        key::tree_key(0, b"a"),
        key::tree_key(0, b"b"),
        key::tree_key(0, b"c"),
    );
    // Restart interval 2: [a@5 a@3] [b@9 b@7] [b@3 c@1].
    let model: Entries = [(&a, 5), (&a, 3), (&b, 9), (&b, 7), (&b, 3), (&c, 1)]
        .iter()
        .map(|(tk, s)| {
            (
                key::internal_key(tk, *s, key::Kind::Put as u8),
                format!("{s}").into_bytes(),
            )
        })
        .collect();
    let (data, start, count) = hashed_block(&model, 2);
    let h = xxhash_rust::xxh3::xxh3_64(&b);
    let bucket = start + super::block_builder::bucket_of(h, count);
    assert_eq!(data[bucket], 1, "b's bucket names its own restart point");
    let blk = block(data).unwrap();
    let mut key = KeyBuf::new();
    for (seqno, want) in [
        (10, Some("9")),
        (9, Some("9")),
        (8, Some("7")),
        (4, Some("3")),
        (3, Some("3")),
        (2, None),
    ] {
        let target = key::seek_key_at(&b, seqno);
        let found = blk
            .hash_seek(&b, h, &target, &mut key)
            .unwrap()
            .expect("answered through the bucket")
            .filter(|_| key::tree_key_of(&key) == b.as_slice())
            .map(|v| String::from_utf8(blk.slice(v).to_vec()).unwrap());
        assert_eq!(found.as_deref(), want, "b at {seqno}");
        assert_eq!(
            found,
            expected(&model, &b, seqno).map(|(_, v)| String::from_utf8(v).unwrap())
        );
    }
}

#[test]
fn every_changed_bucket_fails_verification() {
    let model = sample_entries(80, 9);
    let (good, start, count) = hashed_block(&model, 4);
    for i in start..start + count {
        let mut data = good.clone();
        data[i] = if data[i] == 255 { 0 } else { 255 };
        let b = block(data).unwrap();
        assert!(
            b.verify_hash_index().unwrap_err().is_corruption(),
            "bucket {i}"
        );
    }
}

/// Rewrites the stored filter block of the table at `path` with `f` applied
/// to its bytes, with a valid checksum, so only the layout is wrong.
fn rewrite_filter(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..], path, 0).unwrap();
    let (off, size) = (footer.filter.offset as usize, footer.filter.size as usize);
    let mut filter = bytes[off..off + size].to_vec();
    f(&mut filter);
    assert_eq!(filter.len(), size, "the rewrite keeps the size");
    let crc = masked_crc2(&filter, &[0]);
    bytes[off..off + size].copy_from_slice(&filter);
    bytes[off + size + 1..off + size + 5].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_filter_is_corruption_not_a_wrong_answer() {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(500, 3);
    let path = dir.path().join("f.sst");
    build(&path, &model, options(4096, 16));
    // A flipped bit inside the lines: the block checksum catches it.
    let mut bytes = std::fs::read(&path).unwrap();
    let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..], &path, 0).unwrap();
    bytes[footer.filter.offset as usize + 3] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let err = open(&path).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("checksum"),
        "{err}"
    );
    // A filter declaring 0 probes, checksum valid: refused on open.
    build(&path, &model, options(4096, 16));
    rewrite_filter(&path, |f| {
        let n = f.len();
        f[n - 2] = 0;
    });
    let err = open(&path).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("probes"),
        "{err}"
    );
}

#[test]
fn a_damaged_hash_index_on_disk_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(300, 8);
    let path = dir.path().join("h.sst");
    let opts = TableOptions {
        compression: crate::Compression::None,
        ..options(1 << 20, 16)
    };
    let t = build(&path, &model, opts);
    assert_eq!(t.properties().data_blocks, 1);
    let footer = Footer::decode(
        &std::fs::read(&path).unwrap()
            [std::fs::metadata(&path).unwrap().len() as usize - FOOTER_LEN..],
        &path,
        0,
    )
    .unwrap();
    // The one data block ends at the filter; its bucket count sits 6 bytes
    // before its end. Flip a bucket byte.
    let mut bytes = std::fs::read(&path).unwrap();
    let end = footer.filter.offset as usize - 5;
    bytes[end - 7] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let t = open(&path).unwrap();
    let tk = key::tree_key_of(&model[0].0).to_vec();
    let err = t
        .get_point(&tk, &key::seek_key(&tk), false, |_, v| v.to_vec())
        .unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(t.verify().unwrap_err().is_corruption());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_hashed_blocks_never_panic(
        data in proptest::collection::vec(any::<u8>(), 0..200),
        tk in proptest::collection::vec(any::<u8>(), 0..12),
        h in any::<u64>(),
    ) {
        if let Ok(b) = block(data) {
            let mut key = KeyBuf::new();
            let target = key::seek_key(&tk);
            let _ = b.hash_seek(&tk, h, &target, &mut key);
            let _ = b.seek_in_place(&target, &mut key);
            let _ = b.verify_hash_index();
        }
    }
}

/// A table's large filter is skipped while nearly every key asked passes
/// it, and asked again once absent keys are asked; the answers never
/// change.
#[test]
fn a_large_filter_that_every_key_passes_is_skipped_until_absent_keys_are_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large_filter.sst");
    let ks: key::KeyspaceId = 0;
    let tk = |i: u64| key::tree_key(ks, format!("{i:016}").as_bytes());
    // Enough keys for a filter of more than 256 KiB at 10 bits a key.
    let n = 240_000u64;
    let model: Entries = (0..n)
        .map(|i| {
            (
                key::internal_key(&tk(i * 2), 7, key::Kind::Put as u8),
                b"v".to_vec(),
            )
        })
        .collect();
    let t = build(&path, &model, options(4096, 4));
    // A hash outside the sample, which asks only while every lookup does.
    let unsampled = (0..)
        .map(|i: u64| key_hash(&i.to_le_bytes()))
        .find(|&h| (h >> 56) & 0xf != 0)
        .unwrap();
    assert!(t.asks_filter_first(unsampled), "every lookup asks at first");
    // In an order that never finds the block read last, which would skip
    // the filter and the index alike.
    let scattered = |i: u64| (i * 7_919) % n;
    for i in 0..20_000u64 {
        let j = scattered(i);
        let found = lookup(&t, &tk(j * 2), 9).map(|(k, _)| k);
        assert_eq!(found.as_deref(), Some(model[j as usize].0.as_slice()));
    }
    assert!(
        !t.asks_filter_first(unsampled),
        "every sampled key passed: the filter is skipped"
    );
    for i in 0..20_000u64 {
        let j = scattered(i) * 2 + 1;
        assert_eq!(lookup(&t, &tk(j), 9), None, "absent key {j}");
    }
    assert!(
        t.asks_filter_first(unsampled),
        "absent keys: every lookup asks again"
    );
}
