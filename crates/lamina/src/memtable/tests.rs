//! Tests of the memtable: iteration in key order, lookups against a model,
//! and the newest-entry index built while writers insert.

use super::cursor::MemtableIter;
use super::*;

use crate::iter::{InternalIterator, MergingIter};

/// Every skip list of `m` merged, as reads merge them.
fn merged(m: &Arc<Memtable>) -> MergingIter<MemtableIter> {
    MergingIter::new(m.iters().collect())
}

/// Every entry of `it` from the first, as (tree key, seqno, kind, value).
fn entries(it: &mut impl InternalIterator) -> Vec<(Vec<u8>, SeqNo, Kind, Vec<u8>)> {
    let mut got = Vec::new();
    it.seek_to_first();
    while it.valid() {
        let p = key::parse(it.key()).unwrap();
        got.push((p.tree_key.to_vec(), p.seqno, p.kind, it.value().to_vec()));
        it.next();
    }
    got
}

/// The newest entry of `k` as a lookup as of now finds it.
fn lookup(m: &Memtable, k: &[u8]) -> Option<(Kind, Vec<u8>)> {
    let tk = key::tree_key(0, k);
    let target = InternalKey::from(key::seek_key(&tk));
    let mut found = None;
    m.visit_entries(&tk, &target, |kind, v| {
        found = Some((kind, v.to_vec()));
        true
    });
    found
}

fn uses_index(m: &Memtable, k: &[u8]) -> bool {
    m.newest.probe(&m.lists, &key::tree_key(0, k)).is_some()
}

#[test]
fn a_memtable_only_written_keeps_no_index_until_its_first_lookup() {
    // Small lists: the entries spread over several.
    let m = Memtable::with_list_bytes(1, 4 << 10, false);
    for i in 0..2_000u32 {
        let k = format!("k{:05}", i % 1_500);
        m.insert(
            &key::tree_key(0, k.as_bytes()),
            u64::from(i) + 1,
            Kind::Put,
            &i.to_le_bytes(),
        );
    }
    assert!(m.lists.all().count() > 1);
    let unindexed = m.approximate_size();
    assert!(!uses_index(&m, b"k00001"), "no index before a lookup");
    // The first lookup builds it; every key's newest entry is found.
    assert_eq!(
        lookup(&m, b"k00001"),
        Some((Kind::Put, 1501u32.to_le_bytes().to_vec()))
    );
    assert!(uses_index(&m, b"k00001"));
    assert!(
        m.approximate_size() > unindexed,
        "the index is counted once built"
    );
    for i in 0..1_500u32 {
        let newest = if i < 500 { i + 1_500 } else { i };
        let k = format!("k{i:05}");
        assert_eq!(
            lookup(&m, k.as_bytes()),
            Some((Kind::Put, newest.to_le_bytes().to_vec())),
            "{k}"
        );
    }
    assert_eq!(lookup(&m, b"absent"), None);
    // Writers record their entries from now on.
    m.insert(&key::tree_key(0, b"k00001"), 5_000, Kind::Delete, b"");
    assert_eq!(lookup(&m, b"k00001"), Some((Kind::Delete, Vec::new())));
}

#[test]
fn a_key_before_or_after_every_entry_is_answered_without_the_index() {
    let m = Memtable::with_list_bytes(1, 4 << 10, false);
    for i in 100..2_000u32 {
        let k = format!("k{i:05}");
        m.insert(
            &key::tree_key(0, k.as_bytes()),
            u64::from(i),
            Kind::Put,
            b"v",
        );
    }
    assert!(m.lists.all().count() > 1, "several lists");
    for outside in ["a", "k00099", "k02000", "z"] {
        assert_eq!(lookup(&m, outside.as_bytes()), None, "{outside}");
    }
    assert!(
        !uses_index(&m, b"k00500"),
        "no index built for keys outside"
    );
    // Between the first and the last key: the index answers, absent
    // keys included, and is built for it.
    assert_eq!(lookup(&m, b"k00500"), Some((Kind::Put, b"v".to_vec())));
    assert_eq!(lookup(&m, b"k00500x"), None);
    assert!(uses_index(&m, b"k00500"));
    // An ascending run goes on: its next key is after every entry.
    m.insert(&key::tree_key(0, b"k02000"), 9_000, Kind::Delete, b"");
    assert_eq!(lookup(&m, b"k02000"), Some((Kind::Delete, Vec::new())));
    assert_eq!(lookup(&m, b"k02001"), None);
}

#[test]
fn an_index_built_while_writers_insert_misses_no_entry() {
    for round in 0..20u64 {
        let m = Arc::new(Memtable::with_list_bytes(1, 16 << 10, false));
        // Keys around the writers', so that the lookup below is not
        // answered by the lists' first and last keys alone.
        m.insert(&key::tree_key(0, b"a"), 1, Kind::Put, b"a");
        m.insert(&key::tree_key(0, b"z"), 2, Kind::Put, b"z");
        let seqno = Arc::new(AtomicU64::new(2));
        let writers: Vec<_> = (0..4u64)
            .map(|t| {
                let (m, seqno) = (Arc::clone(&m), Arc::clone(&seqno));
                std::thread::spawn(move || {
                    for i in 0..3_000u64 {
                        let k = format!("w{t}-{:05}", (i * 7919 + round) % 3_000);
                        let s = seqno.fetch_add(1, Ordering::Relaxed) + 1;
                        m.insert(&key::tree_key(0, k.as_bytes()), s, Kind::Put, k.as_bytes());
                    }
                })
            })
            .collect();
        // A lookup while they write builds the index.
        while m.len() < 100 {
            std::thread::yield_now();
        }
        let _ = lookup(&m, b"w0-00000");
        for w in writers {
            w.join().unwrap();
        }
        for t in 0..4u64 {
            for i in 0..3_000u64 {
                let k = format!("w{t}-{i:05}");
                let got = m.newest.probe(&m.lists, &key::tree_key(0, k.as_bytes()));
                assert!(
                    matches!(got, Some(Probe::Newest(_))),
                    "round {round}: {k} missing from the index"
                );
            }
        }
    }
}

/// Writers appending ascending runs (each the next key after the last
/// entry, as a sorted load) while others write random keys of the same
/// range, over lists that roll meanwhile: every entry is there in internal
/// key order, seen in order by a reader while they write, and a lookup of
/// each key finds its newest version.
#[test]
fn ascending_and_random_writers_together_agree_with_a_model() {
    const KEYS: u64 = 4_000;
    let name = |k: u64| key::tree_key(0, format!("k{k:06}").as_bytes());
    let m = Arc::new(Memtable::with_list_bytes(1, 64 << 10, false));
    let seqno = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..4u64)
        .map(|t| {
            let (m, seqno) = (Arc::clone(&m), Arc::clone(&seqno));
            std::thread::spawn(move || {
                let mut wrote = Vec::new();
                let mut x = t + 1;
                for i in 0..KEYS / 2 {
                    // Writers 0 and 1 ascend through the keys, each taking
                    // every other one; 2 and 3 write anywhere among them.
                    let k = if t < 2 {
                        i * 2 + t
                    } else {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        (x >> 33) % KEYS
                    };
                    let s = seqno.fetch_add(1, Ordering::Relaxed) + 1;
                    m.insert(&name(k), s, Kind::Put, &s.to_le_bytes());
                    wrote.push((k, s));
                }
                wrote
            })
        })
        .collect();
    let reader = {
        let m = Arc::clone(&m);
        std::thread::spawn(move || {
            for _ in 0..20 {
                let mut it = merged(&m);
                it.seek_to_first();
                let mut last: Option<Vec<u8>> = None;
                while it.valid() {
                    if let Some(l) = &last {
                        assert_eq!(key::compare(l, it.key()), std::cmp::Ordering::Less);
                    }
                    last = Some(it.key().to_vec());
                    it.next();
                }
            }
        })
    };
    // (tree key, seqno) of every entry written.
    let mut model = std::collections::BTreeSet::new();
    for w in writers {
        for (k, s) in w.join().unwrap() {
            model.insert((name(k), s));
        }
    }
    reader.join().unwrap();
    assert!(m.lists.all().count() > 2, "the lists rolled");
    // Internal key order: tree key ascending, seqno descending.
    let mut want: Vec<_> = model.iter().cloned().collect();
    want.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let got: Vec<_> = entries(&mut merged(&m))
        .into_iter()
        .map(|(tk, s, kind, v)| {
            assert_eq!((kind, v), (Kind::Put, s.to_le_bytes().to_vec()));
            (tk, s)
        })
        .collect();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "entries differ from the model");
    for k in 0..KEYS {
        let newest = model.range((name(k), 0)..=(name(k), u64::MAX)).last();
        assert_eq!(
            lookup(&m, format!("k{k:06}").as_bytes()),
            newest.map(|(_, s)| (Kind::Put, s.to_le_bytes().to_vec())),
            "key {k}"
        );
    }
    assert_eq!(lookup(&m, b"k999999"), None, "after every key");
}

#[test]
fn iterates_in_internal_key_order_both_ways() {
    // One list, then a list per entry (the smallest size opens the next
    // list at once).
    for list_bytes in [1 << 20, 1] {
        iterates_both_ways(list_bytes);
    }
}

fn iterates_both_ways(list_bytes: u64) {
    let m = Arc::new(Memtable::with_list_bytes(1, list_bytes, true));
    m.insert(&key::tree_key(0, b"b"), 1, Kind::Put, b"b1");
    m.insert(&key::tree_key(0, b"a"), 2, Kind::Put, b"a2");
    m.insert(&key::tree_key(0, b"b"), 3, Kind::Delete, b"");
    let mut it = merged(&m);
    it.seek_to_first();
    let mut fwd = Vec::new();
    while it.valid() {
        let p = key::parse(it.key()).unwrap();
        fwd.push((p.user_key().to_vec(), p.seqno));
        it.next();
    }
    assert_eq!(
        fwd,
        vec![(b"a".to_vec(), 2), (b"b".to_vec(), 3), (b"b".to_vec(), 1)]
    );
    it.seek_to_last();
    let mut back = Vec::new();
    while it.valid() {
        back.push(key::parse(it.key()).unwrap().seqno);
        it.prev();
    }
    assert_eq!(back, vec![1, 3, 2]);
    it.seek(&key::seek_key_at(&key::tree_key(0, b"b"), 2));
    assert_eq!(key::parse(it.key()).unwrap().seqno, 1);
    it.seek_for_prev(&key::seek_key(&key::tree_key(0, b"b")));
    assert_eq!(key::parse(it.key()).unwrap().user_key(), b"a");
    assert!(m.approximate_size() > 0);
}

/// The entries `visit_entries` shows for `tk` as of `as_of`.
fn visited(m: &Memtable, tk: &[u8], as_of: SeqNo) -> Vec<(Kind, Vec<u8>)> {
    let target = InternalKey::from_slice(&key::seek_key_at(tk, as_of));
    let mut seen = Vec::new();
    m.visit_entries(tk, &target, |kind, value| {
        seen.push((kind, value.to_vec()));
        kind != Kind::Merge
    });
    seen
}

proptest::proptest! {
    /// Point lookups at every seqno (the hash index's now and the skip
    /// list's snapshots), and ordered iteration, agree with a model that
    /// keeps every entry.
    #[test]
    fn lookups_snapshots_and_iteration_agree_with_a_model(
        ops in proptest::collection::vec((0u8..6, 0u8..3, 0u8..255), 1..60),
        list_bytes in proptest::prop_oneof![proptest::strategy::Just(1u64 << 20), 1u64..1000],
        // Full lists indexed after this many inserts (every list, the
        // active one too, when a multiple of 3), and again at the end when
        // even (every list when a multiple of 4).
        freeze_after in 0usize..70,
    ) {
        let m = Arc::new(Memtable::with_list_bytes(1, list_bytes, true));
        // The same entries, no index kept: its skip lists answer alone.
        let lists_only = Memtable::with_list_bytes(1, list_bytes, false);
        // (tree key, seqno) → (kind, value), every entry ever inserted.
        let mut model = std::collections::BTreeMap::new();
        for (seqno, (k, kind, v)) in (1u64..).zip(&ops) {
            if seqno as usize == freeze_after + 1 {
                if freeze_after % 3 == 0 {
                    m.freeze_all();
                } else {
                    m.freeze();
                }
            }
            let tk = key::tree_key(0, &[b'k', *k]);
            let kind = match kind { 0 => Kind::Delete, 1 => Kind::Put, _ => Kind::Merge };
            let value = if kind == Kind::Delete { Vec::new() } else { vec![*v; 3] };
            m.insert(&tk, seqno, kind, &value);
            lists_only.insert(&tk, seqno, kind, &value);
            model.insert((tk, seqno), (kind, value));
        }
        let full = m.lists.all().count() - 1;
        if freeze_after % 4 == 0 {
            m.freeze_all();
            proptest::prop_assert_eq!(m.iters().count(), 1, "one index, or one list");
        } else if freeze_after % 2 == 0 {
            // Inserts came since the index was last asked for: the active
            // list is not indexed.
            m.freeze();
            if full >= 2 {
                proptest::prop_assert_eq!(m.iters().count(), 2, "the index and the active list");
            }
        }
        let last = ops.len() as u64;
        for k in 0u8..7 {
            let tk = key::tree_key(0, &[b'k', k]);
            // A transaction's validation: the newest entry's seqno, from
            // the index and from the lists alike.
            let newest = model.range((tk.clone(), 0)..=(tk.clone(), u64::MAX)).next_back().map(|((_, s), _)| *s);
            proptest::prop_assert!(uses_index(&m, &[b'k', k]));
            proptest::prop_assert_eq!(m.newest_seqno(&tk), newest, "key {} (index)", k);
            proptest::prop_assert!(!uses_index(&lists_only, &[b'k', k]));
            proptest::prop_assert_eq!(lists_only.newest_seqno(&tk), newest, "key {} (lists)", k);
            for as_of in 0..=last + 1 {
                let mut want = Vec::new();
                for ((_, _), (kind, value)) in model
                    .range((tk.clone(), 0)..=(tk.clone(), as_of))
                    .rev()
                {
                    want.push((*kind, value.clone()));
                    if *kind != Kind::Merge {
                        break;
                    }
                }
                proptest::prop_assert_eq!(visited(&m, &tk, as_of), want, "key {} as of {}", k, as_of);
            }
        }
        let got = entries(&mut merged(&m));
        proptest::prop_assert_eq!(&entries(&mut m.scan()), &got);
        for (k, _, _, _) in &got {
            let mut out = Vec::new();
            m.collect_entries(k, &key::seek_key(k), &mut out);
            let mut want = Vec::new();
            for ((_, _), (kind, value)) in model.range((k.clone(), 0)..=(k.clone(), u64::MAX)).rev() {
                want.push((*kind, value.clone()));
                if *kind != Kind::Merge {
                    break;
                }
            }
            proptest::prop_assert_eq!(out, want);
        }
        // Internal key order: tree key ascending, seqno descending.
        let mut want: Vec<_> = model
            .iter()
            .map(|((tk, s), (kind, v))| (tk.clone(), *s, *kind, v.clone()))
            .collect();
        want.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        proptest::prop_assert_eq!(&got, &want);
        let mut it = merged(&m);
        it.seek_to_last();
        let mut back = Vec::new();
        while it.valid() {
            back.push(key::parse(it.key()).unwrap().seqno);
            it.prev();
        }
        back.reverse();
        proptest::prop_assert_eq!(back, want.iter().map(|w| w.1).collect::<Vec<_>>());
        // Seeks both ways from every key at every seqno.
        let ikeys: Vec<Vec<u8>> = want
            .iter()
            .map(|(tk, s, kind, _)| key::internal_key(tk, *s, *kind as u8))
            .collect();
        for k in 0u8..7 {
            let tk = key::tree_key(0, &[b'k', k]);
            for as_of in 0..=last + 1 {
                let target = key::seek_key_at(&tk, as_of);
                let at = ikeys.partition_point(|ik| key::compare(ik, &target).is_lt());
                it.seek(&target);
                proptest::prop_assert_eq!(it.valid().then(|| it.key().to_vec()), ikeys.get(at).cloned());
                let before = ikeys.partition_point(|ik| key::compare(ik, &target).is_le());
                it.seek_for_prev(&target);
                let want_prev = before.checked_sub(1).and_then(|i| ikeys.get(i)).cloned();
                proptest::prop_assert_eq!(it.valid().then(|| it.key().to_vec()), want_prev);
            }
        }
    }
}

/// Tree key `i` of the tests below.
fn tk(i: u32) -> Vec<u8> {
    key::tree_key(0, format!("k{i:05}").as_bytes())
}

/// A memtable of `n` entries (the even keys from 0, in order), inserts
/// moved on to a new list after each 100.
fn lists_of_100(n: u32) -> Arc<Memtable> {
    let m = Arc::new(Memtable::with_list_bytes(1, 1 << 20, false));
    for i in 0..n {
        m.insert(&tk(i * 2), u64::from(i) + 1, Kind::Put, &[7; 40]);
        if i % 100 == 99 {
            m.lists.move_on();
        }
    }
    m
}

/// A writer that took a list before inserts moved on may insert into it
/// after the list was indexed: the index is then no longer used (cursors
/// made after read the lists, and a cursor over the index says it is
/// behind) until it is built again.
#[test]
fn an_insert_into_an_indexed_list_is_read_through_the_lists_until_indexed_again() {
    let m = lists_of_100(400);
    let lists = m.lists.all().count();
    assert_eq!(
        lists, 5,
        "four lists inserts moved on from, and the active one"
    );
    assert!(!m.wants_freeze(), "only written: nothing to index for");
    assert_eq!(m.iters().count(), lists, "an ordered read, of every list");
    assert!(m.wants_freeze(), "read in order: its full lists to index");
    m.freeze();
    assert!(!m.wants_freeze());
    assert_eq!(m.iters().count(), 2, "the index and the active list");
    let before = MergingIter::new(m.iters().collect());
    // The late insert, into the first list.
    let first = m.lists.get(0).unwrap();
    let late = key::internal_key(&tk(1), 1_000, Kind::Put as u8);
    first
        .try_insert(&[&late], b"late", Inserters::Many)
        .unwrap();
    assert!(!before.children().iter().all(MemtableIter::is_current));
    assert!(m.wants_freeze());
    assert_eq!(m.iters().count(), lists, "every list, the index unused");
    let find = |m: &Arc<Memtable>| {
        let mut it = merged(m);
        it.seek(&key::seek_key(&tk(1)));
        it.valid() && it.value() == b"late"
    };
    assert!(find(&m), "read through the lists");
    m.freeze();
    assert_eq!(m.iters().count(), 2, "indexed again");
    assert!(find(&m), "read through the index");
    assert_eq!(entries(&mut merged(&m)).len(), 401);
}

/// Once inserts pause, the active list is indexed with the full ones: an
/// ordered read then reads one index. An insert after that is read through
/// the index of the full lists and the active list, until inserts pause
/// again.
#[test]
fn the_active_list_is_indexed_with_the_others_once_inserts_pause() {
    let m = lists_of_100(350);
    assert_eq!(m.iters().count(), 4, "three full lists and the active one");
    m.freeze();
    assert_eq!(m.iters().count(), 2, "the index and the active list");
    // No insert since the last look: the active list is indexed too.
    assert!(m.wants_freeze(), "inserts paused");
    m.freeze();
    assert!(!m.wants_freeze());
    assert_eq!(m.iters().count(), 1, "one index of every list");
    assert_eq!(entries(&mut merged(&m)).len(), 350);
    let find = |m: &Arc<Memtable>, i: u32, value: &[u8]| {
        let mut it = merged(m);
        it.seek(&key::seek_key(&tk(i)));
        it.valid() && it.key().starts_with(&tk(i)) && it.value() == value
    };
    assert!(find(&m, 698, &[7; 40]), "the active list's last entry");
    // An insert into the active list leaves the whole index behind.
    m.insert(&tk(1), 1_000, Kind::Put, b"late");
    assert_eq!(
        m.iters().count(),
        2,
        "the full lists' index and the active list"
    );
    assert!(find(&m, 1, b"late"), "read through the active list");
    assert_eq!(entries(&mut merged(&m)).len(), 351, "each entry once");
    let mut it = merged(&m);
    it.seek_to_last();
    let mut back = 0;
    while it.valid() {
        back += 1;
        it.prev();
    }
    assert_eq!(back, 351, "each entry once, backward");
    assert!(!m.wants_freeze(), "an insert since the last look");
    assert!(m.wants_freeze(), "none since");
    m.freeze();
    assert_eq!(m.iters().count(), 1, "indexed again");
    assert!(find(&m, 1, b"late"), "read through the index");
    assert_eq!(entries(&mut merged(&m)).len(), 351);
    // Inserts move on: the whole index is the full lists' index now.
    m.lists.move_on();
    m.insert(&tk(3), 1_001, Kind::Put, b"next");
    assert_eq!(m.iters().count(), 2, "the index and the new active list");
    assert!(find(&m, 3, b"next"));
    m.freeze_all();
    assert_eq!(m.iters().count(), 1);
    assert!(find(&m, 3, b"next") && find(&m, 1, b"late"));
    assert_eq!(entries(&mut merged(&m)).len(), 352);
}

/// Memtables too small for huge chunks register nothing with the pool of
/// spare chunks.
#[test]
fn memtables_too_small_for_huge_chunks_register_no_spare_chunks() {
    assert!(register_spare_chunks(1 << 20).is_none());
}
