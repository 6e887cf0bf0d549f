//! A hash index beside the memtable's skip list: each tree key maps to its
//! newest entry, so a lookup as of now costs a hash probe instead of a
//! descent through the skip list.
//!
//! The skip list stays the record of every entry and the only ordered view;
//! this index answers one question, "what is the newest entry of this key?",
//! and the memtable falls back to the skip list whenever that is not the
//! question (a snapshot older than the newest entry, a Merge operand).
//!
//! A key is hashed once: the hash picks the shard (its top 4 bits, which
//! the shard's own table uses for a bucket only past 2^50 of them) and then
//! the slot within it ([`HashSlots`]: one cache line a lookup).
//!
//! An index is kept from the memtable's first point lookup on that the skip
//! lists' first and last entries do not answer (`Lists::outside`), or from
//! the start, for a memtable rebuilt from the WAL, which is read next: until
//! then writers do not record their entries, and a memtable that is only
//! written (a load) costs no index at all (recording was up to a fifth of a
//! put from Python: `bench/point_loops.py fill`). The first lookup builds
//! the index from the skip lists
//! while writers go on (see [`NewestIndex::build`]); lookups meanwhile
//! search the skip lists.
//!
//! Each shard also keeps the range of the keys it holds, as numbers
//! ([`range_key`]), so that a key outside it is answered
//! without touching the table: when the memtable's keys and the tables'
//! keys are apart (keys written in ascending order, the older ones already
//! flushed), a read of an older key costs a comparison here instead of a
//! cache miss in the table.

use super::hash_slots::{self, HashSlots};
use super::lists::Lists;
use super::skiplist::{Entry, NodeAddr, Position};
use crate::key::{self, Kind, SeqNo};
use ahash::RandomState;
use parking_lot::RwLock;
use std::sync::atomic::{fence, AtomicU8, Ordering};

/// Shards of the index, each behind its own lock, so that concurrent
/// readers and writers of different keys rarely meet.
const SHARDS: usize = 16;

/// Where in a key's hash the shard number is taken from: its top bits.
const SHARD_SHIFT: u32 = 60;

/// Bytes an index entry takes, counted in the memtable's approximate size:
/// its slot at the table's highest load.
pub(super) const INDEX_OVERHEAD: usize = hash_slots::bytes_per_entry::<NodeAddr>();

/// The newest entry of one tree key.
#[derive(Clone, Copy)]
pub(super) struct Newest<'a> {
    pub seqno: SeqNo,
    pub kind: Kind,
    /// The entry in the memtable's skip list (its value is not copied).
    pub entry: Entry<'a>,
}

/// What the index knows about a tree key.
pub(super) enum Probe<'a> {
    /// The memtable holds no entry of the key.
    Absent,
    /// The key's newest entry.
    Newest(Newest<'a>),
}

/// Where a tree key sorts, as numbers: its keyspace id, then the first 16
/// bytes of its user key (zero-padded, big-endian). A smaller pair is a
/// smaller key; equal pairs say nothing.
type RangeKey = (u32, u128);

fn range_key(tree_key: &[u8]) -> RangeKey {
    let user = tree_key.get(key::KEYSPACE_ID_LEN..).unwrap_or(&[]);
    (key::keyspace_of(tree_key), key::tree_prefix(user))
}

/// One shard's slots, and the range of their keys' prefixes. A slot holds
/// the key's hash (kept so that growing the table does not read every
/// entry again) and where its newest entry is: the entry's address, and in
/// the hash's low byte the number of the skip list that holds it. The key,
/// its seqno and its kind are read from the entry itself, so a slot is
/// small and the table stays in the CPU's caches longer.
struct ShardTable {
    slots: HashSlots<NodeAddr>,
    /// The smallest and largest [`range_key`] of a key recorded (`low >
    /// high` while empty). A key whose range key is outside them has no
    /// slot: range keys order keys as the keys themselves are ordered.
    low: RangeKey,
    high: RangeKey,
}

impl ShardTable {
    fn new() -> ShardTable {
        ShardTable {
            slots: HashSlots::new(),
            low: (u32::MAX, u128::MAX),
            high: (0, 0),
        }
    }

    /// Whether a key of prefix `p` may have a slot.
    fn may_hold(&self, p: RangeKey) -> bool {
        self.low <= p && p <= self.high
    }
}

type Shard = RwLock<ShardTable>;

/// Whether an index is kept: not yet (writers do not record).
const OFF: u8 = 0;
/// A lookup is building it: writers record, lookups do not use it yet.
const BUILDING: u8 = 1;
/// It holds every entry: writers record, lookups use it.
const ON: u8 = 2;

/// Tree key → newest entry, safe for concurrent readers and writers, for
/// the entries of one memtable's skip lists (which every call names).
pub(super) struct NewestIndex {
    /// The identity of the lists.
    list: u64,
    /// [`OFF`], [`BUILDING`] or [`ON`].
    state: AtomicU8,
    /// The seed of its keys' hash (xxh3), drawn at random for each index so
    /// that no fixed set of keys shares one bucket in every memtable.
    seed: u64,
    shards: Vec<Shard>,
}

/// The tree key, seqno and kind of a well-formed entry.
fn parts<'a>(e: &Entry<'a>) -> Option<(&'a [u8], SeqNo, Kind)> {
    key::parse(e.key()).map(|p| (p.tree_key, p.seqno, p.kind))
}

/// The slot's byte for an entry at `pos` of `list`: which of the lists.
fn list_number(list: &Lists, pos: Position) -> u8 {
    pos.list_id().wrapping_sub(list.id()) as u8
}

/// The entry a slot of the index of `list` names.
fn slot_entry(list: &Lists, number: u8, addr: NodeAddr) -> Option<Entry<'_>> {
    // SAFETY: the index keeps only positions `list` accepts as its own
    // (`record` checks each with `Lists::entry`, and every call names the
    // index's own lists), each as its address and its list's number among
    // them (`list_number`).
    #[allow(unsafe_code)]
    let pos = unsafe { Position::from_addr(addr, list.id() + u64::from(number)) };
    list.entry(pos)
}

/// Whether the slot (`number`, `addr`), whose hash matched, is that of
/// `tree_key`.
fn holds(list: &Lists, number: u8, addr: NodeAddr, tree_key: &[u8]) -> bool {
    slot_entry(list, number, addr)
        .as_ref()
        .and_then(parts)
        .is_some_and(|(tk, _, _)| tk == tree_key)
}

impl NewestIndex {
    /// An empty index of the entries of `lists`, kept from the start if
    /// `kept`, else from the first lookup on.
    pub(super) fn new(lists: &Lists, kept: bool) -> NewestIndex {
        NewestIndex {
            list: lists.id(),
            state: AtomicU8::new(if kept { ON } else { OFF }),
            seed: RandomState::new().hash_one(lists.id()),
            shards: (0..SHARDS)
                .map(|_| RwLock::new(ShardTable::new()))
                .collect(),
        }
    }

    /// The key's hash and its shard.
    fn locate(&self, tree_key: &[u8]) -> Option<(u64, &Shard)> {
        let h = xxhash_rust::xxh3::xxh3_64_with_seed(tree_key, self.seed);
        let shard = self.shards.get((h >> SHARD_SHIFT) as usize % SHARDS)?;
        Some((h, shard))
    }

    /// Whether writers record their entries. A writer asks after linking
    /// its entry into the skip list (`SeqCst` there and here: see
    /// [`NewestIndex::build`]).
    pub(super) fn is_kept(&self) -> bool {
        self.state.load(Ordering::SeqCst) != OFF
    }

    /// Builds the index if no one has started to, from the entries of
    /// `lists`; returns the bytes it added (0 if it built nothing). Writers
    /// inserting meanwhile record their own entries.
    ///
    /// Why no entry is missed: a writer links its entry at level 0 with a
    /// `SeqCst` compare-and-swap, then reads the state (`SeqCst`). If it
    /// read [`OFF`], its read comes before this builder's `SeqCst` store of
    /// [`BUILDING`] in the single order of `SeqCst` operations, and so does
    /// its link; the walk below, after a `SeqCst` fence, then sees the link
    /// (and the list it is in: `Lists::all`). A writer that read anything
    /// else records its entry itself; recording one twice changes nothing.
    pub(super) fn build(&self, lists: &Lists) -> usize {
        // A plain load first: once built, a lookup costs no locked instruction.
        if self.state.load(Ordering::Acquire) != OFF {
            return 0;
        }
        let started =
            self.state
                .compare_exchange(OFF, BUILDING, Ordering::SeqCst, Ordering::Relaxed);
        if started.is_err() {
            return 0;
        }
        fence(Ordering::SeqCst);
        let mut added = 0;
        for list in lists.all() {
            let mut at = list.front();
            while let Some(e) = at {
                if let Some((tk, seqno, _)) = parts(&e) {
                    added += self.record(lists, e, tk, seqno);
                }
                at = e.next();
            }
        }
        self.state.store(ON, Ordering::Release);
        added
    }

    /// Records `entry` of `list`, whose tree key and seqno the caller has
    /// parsed; it becomes its key's newest unless a newer one is already
    /// recorded. Returns the bytes a new key added.
    pub(super) fn record(
        &self,
        list: &Lists,
        entry: Entry<'_>,
        tree_key: &[u8],
        seqno: SeqNo,
    ) -> usize {
        if list.id() != self.list {
            return 0;
        }
        let Some((h, shard)) = self.locate(tree_key) else {
            return 0;
        };
        let p = range_key(tree_key);
        let mut shard = shard.write();
        shard.low = shard.low.min(p);
        shard.high = shard.high.max(p);
        let pos = entry.position();
        if list.entry(pos).is_none() {
            // Not an entry of these lists: never kept (see `slot_entry`).
            return 0;
        }
        let added = shard.slots.upsert(
            h,
            list_number(list, pos),
            pos.addr(),
            |n, a| holds(list, n, a, tree_key),
            |n, a| {
                let cur = slot_entry(list, n, a);
                cur.as_ref().and_then(parts).is_none_or(|p| p.1 < seqno)
            },
        );
        if added {
            INDEX_OVERHEAD
        } else {
            0
        }
    }

    /// The newest entry of `tree_key` in `list`, or `None` if the index
    /// cannot say.
    pub(super) fn probe<'a>(&self, list: &'a Lists, tree_key: &[u8]) -> Option<Probe<'a>> {
        if list.id() != self.list || self.state.load(Ordering::Acquire) != ON {
            return None;
        }
        let (h, shard) = self.locate(tree_key)?;
        let shard = shard.read();
        if !shard.may_hold(range_key(tree_key)) {
            // An absent key is often written next (a delete after its
            // existence check, an insert after a miss): its slot's line is
            // on its way by then.
            shard.slots.prefetch(h);
            return Some(Probe::Absent);
        }
        let found = shard.slots.find(h, |n, a| {
            a.prefetch_body();
            holds(list, n, a, tree_key)
        });
        Some(match found {
            Some((n, a)) => {
                let entry = slot_entry(list, n, a)?;
                let (_, seqno, kind) = parts(&entry)?;
                Probe::Newest(Newest { seqno, kind, entry })
            }
            None => Probe::Absent,
        })
    }
}
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Inserts a Put of `tree_key` at `seqno` with `value` into `list`.
    fn insert<'a>(list: &'a Lists, tree_key: &[u8], seqno: SeqNo, value: &[u8]) -> Entry<'a> {
        let trailer = ((seqno << 8) | Kind::Put as u64).to_le_bytes();
        list.insert(
            &[tree_key, &trailer],
            value,
            super::super::arena::Inserters::Many,
        )
        .0
    }

    /// Inserts `tree_key` at `seqno` with `value` into `list` and records
    /// it; returns what recording added.
    fn put(list: &Lists, ix: &NewestIndex, tree_key: &[u8], seqno: SeqNo, value: &[u8]) -> usize {
        ix.record(list, insert(list, tree_key, seqno, value), tree_key, seqno)
    }

    fn newest(list: &Lists, ix: &NewestIndex, k: &[u8]) -> Option<(SeqNo, Vec<u8>)> {
        match ix.probe(list, k).unwrap() {
            Probe::Absent => None,
            Probe::Newest(n) => Some((n.seqno, n.entry.value().to_vec())),
        }
    }

    #[test]
    fn keeps_the_newest_entry_whatever_the_order_of_records() {
        let list = Lists::new(1 << 20);
        let ix = NewestIndex::new(&list, true);
        let k = key::tree_key(0, b"k");
        assert!(put(&list, &ix, &k, 5, b"five") > 0);
        assert_eq!(put(&list, &ix, &k, 3, b"three"), 0);
        assert_eq!(newest(&list, &ix, &k), Some((5, b"five".to_vec())));
        put(&list, &ix, &k, 9, b"nine");
        assert_eq!(newest(&list, &ix, &k), Some((9, b"nine".to_vec())));
        assert_eq!(newest(&list, &ix, &key::tree_key(0, b"other")), None);
    }

    #[test]
    fn every_key_of_many_finds_its_own_entry_in_whatever_shard() {
        let list = Lists::new(1 << 20);
        let ix = NewestIndex::new(&list, true);
        let keys: Vec<Vec<u8>> = (0u32..5_000)
            .map(|i| key::tree_key(0, &i.to_be_bytes()))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(put(&list, &ix, k, i as u64 + 1, k), INDEX_OVERHEAD);
        }
        let used = ix
            .shards
            .iter()
            .filter(|s| s.read().slots.len() > 0)
            .count();
        assert_eq!(used, SHARDS, "keys spread over every shard");
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(newest(&list, &ix, k), Some((i as u64 + 1, k.clone())));
        }
        assert_eq!(newest(&list, &ix, &key::tree_key(0, b"absent")), None);
    }

    #[test]
    fn long_keys_and_their_prefixes_are_told_apart() {
        let list = Lists::new(1 << 20);
        let ix = NewestIndex::new(&list, true);
        let long = key::tree_key(0, &[7u8; 60]);
        let prefix = long.get(..long.len() - 1).unwrap().to_vec();
        assert_eq!(put(&list, &ix, &long, 1, b"long"), INDEX_OVERHEAD);
        assert_eq!(put(&list, &ix, &prefix, 2, b"short"), INDEX_OVERHEAD);
        assert_eq!(newest(&list, &ix, &long), Some((1, b"long".to_vec())));
        assert_eq!(newest(&list, &ix, &prefix), Some((2, b"short".to_vec())));
    }

    #[test]
    fn a_shard_keeps_the_range_of_its_keys_and_answers_outside_it_without_a_probe() {
        let list = Lists::new(1 << 20);
        let ix = NewestIndex::new(&list, true);
        let keys: Vec<Vec<u8>> = (100u32..200)
            .map(|i| key::tree_key(0, format!("k{i}").as_bytes()))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            put(&list, &ix, k, i as u64 + 1, b"v");
        }
        let (first, last) = (keys.first().unwrap(), keys.last().unwrap());
        for shard in &ix.shards {
            let s = shard.read();
            assert!(s.low >= range_key(first) && s.high <= range_key(last));
            assert!(!s.may_hold(range_key(&key::tree_key(0, b"k0"))));
            assert!(!s.may_hold(range_key(&key::tree_key(0, b"k3"))));
            assert!(
                !s.may_hold(range_key(&key::tree_key(1, b"k150"))),
                "another keyspace"
            );
        }
        // The keys at the edges of every shard's range are found.
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(newest(&list, &ix, k), Some((i as u64 + 1, b"v".to_vec())));
        }
        assert_eq!(newest(&list, &ix, &key::tree_key(0, b"k0")), None);
        assert_eq!(newest(&list, &ix, &key::tree_key(0, b"k2")), None);
    }

    #[test]
    fn keys_that_share_the_range_prefix_are_told_apart_by_the_table() {
        let list = Lists::new(1 << 20);
        let ix = NewestIndex::new(&list, true);
        // The keyspace id and sixteen bytes of user key alike.
        let long = key::tree_key(0, b"0123456789abcdefXYZ");
        let short = key::tree_key(0, b"0123456789abcdef");
        assert_eq!(range_key(&long), range_key(&short));
        put(&list, &ix, &long, 1, b"long");
        assert_eq!(newest(&list, &ix, &short), None);
        put(&list, &ix, &short, 2, b"short");
        assert_eq!(newest(&list, &ix, &short), Some((2, b"short".to_vec())));
        assert_eq!(newest(&list, &ix, &long), Some((1, b"long".to_vec())));
    }

    #[test]
    fn an_entry_of_other_lists_is_never_recorded() {
        let list = Lists::new(1 << 20);
        let other = Lists::new(1 << 20);
        let ix = NewestIndex::new(&list, true);
        let k = key::tree_key(0, b"k");
        let e = insert(&other, &k, 1, b"v");
        assert_eq!(ix.record(&list, e, &k, 1), 0);
        assert!(matches!(ix.probe(&list, &k), Some(Probe::Absent)));
    }

    #[test]
    fn an_index_asked_about_another_list_cannot_answer() {
        let list = Lists::new(1 << 20);
        let other = Lists::new(1 << 20);
        let ix = NewestIndex::new(&list, true);
        let k = key::tree_key(0, b"k");
        put(&list, &ix, &k, 1, b"v");
        assert!(ix.probe(&other, &k).is_none());
    }
}
