//! A hash index beside the memtable's skip list: each tree key maps to its
//! newest entry, so a lookup as of now costs a hash probe instead of a
//! descent through the skip list.
//!
//! The skip list stays the record of every entry and the only ordered view;
//! this index answers one question, "what is the newest entry of this key?",
//! and the memtable falls back to the skip list whenever that is not the
//! question (a snapshot older than the newest entry, a Merge operand).
//!
//! A key is hashed once: the hash picks the shard (bits 32..36, which the
//! shard's own table does not use for a bucket or a tag until it holds 2^32
//! slots) and then the slot within it.

use super::skiplist::Position;
use crate::key::{Kind, SeqNo};
use ahash::RandomState;
use hashbrown::HashTable;
use parking_lot::RwLock;
use smallvec::SmallVec;

/// Shards of the index, each behind its own lock, so that concurrent
/// readers and writers of different keys rarely meet.
const SHARDS: usize = 16;

/// Where in a key's hash the shard number is taken from.
const SHARD_SHIFT: u32 = 32;

/// Bytes an index entry takes, counted in the memtable's approximate size:
/// its slot at the table's highest load (7/8), plus a key too long for the
/// slot.
pub(super) const INDEX_OVERHEAD: usize = std::mem::size_of::<Slot>() * 8 / 7;

/// What recording a new key of `len` bytes adds to the memtable's size.
pub(super) fn index_charge(len: usize) -> usize {
    INDEX_OVERHEAD + if len > INLINE_KEY { len } else { 0 }
}

/// The newest entry of one tree key.
#[derive(Clone, Copy)]
pub(super) struct Newest {
    pub seqno: SeqNo,
    pub kind: Kind,
    /// The entry in the memtable's skip list (its value is not copied).
    pub at: Position,
}

/// What the index knows about a tree key.
pub(super) enum Probe {
    /// The memtable holds no entry of the key.
    Absent,
    /// The key's newest entry.
    Newest(Newest),
}

/// One slot: a tree key, its hash (kept so that growing the table does not
/// hash the key again) and its newest entry. A tree key of up to
/// `INLINE_KEY` bytes is kept in the slot itself: recording it allocates
/// nothing, and a probe compares it without following a pointer.
struct Slot {
    hash: u64,
    tree_key: SmallVec<[u8; INLINE_KEY]>,
    newest: Newest,
}

/// Longest tree key held in its slot (a keyspace id and a 20-byte key).
const INLINE_KEY: usize = 24;

type Shard = RwLock<HashTable<Slot>>;

/// Tree key → newest entry, safe for concurrent readers and writers.
pub(super) struct NewestIndex {
    hasher: RandomState,
    shards: Vec<Shard>,
}

impl NewestIndex {
    pub(super) fn new() -> NewestIndex {
        NewestIndex {
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| RwLock::new(HashTable::new())).collect(),
        }
    }

    /// The key's hash and its shard.
    fn locate(&self, tree_key: &[u8]) -> Option<(u64, &Shard)> {
        let h = self.hasher.hash_one(tree_key);
        let shard = self.shards.get((h >> SHARD_SHIFT) as usize % SHARDS)?;
        Some((h, shard))
    }

    /// Records an entry of `tree_key`; it becomes the key's newest unless a
    /// newer one is already recorded. Returns the bytes a new key added.
    pub(super) fn record(&self, tree_key: &[u8], entry: Newest) -> usize {
        let Some((h, shard)) = self.locate(tree_key) else {
            return 0;
        };
        let mut table = shard.write();
        if let Some(cur) = table.find_mut(h, |s| *s.tree_key == *tree_key) {
            if cur.newest.seqno < entry.seqno {
                cur.newest = entry;
            }
            return 0;
        }
        let slot = Slot {
            hash: h,
            tree_key: SmallVec::from_slice(tree_key),
            newest: entry,
        };
        table.insert_unique(h, slot, |s| s.hash);
        index_charge(tree_key.len())
    }

    /// The newest entry of `tree_key`, or `None` if the index cannot say.
    pub(super) fn probe(&self, tree_key: &[u8]) -> Option<Probe> {
        let (h, shard) = self.locate(tree_key)?;
        let table = shard.read();
        Some(match table.find(h, |s| *s.tree_key == *tree_key) {
            Some(s) => Probe::Newest(s.newest),
            None => Probe::Absent,
        })
    }
}
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::skiplist::SkipList;
    use super::*;

    /// An entry of `list` holding `value` under a key made from `seqno`.
    fn entry(list: &SkipList, seqno: SeqNo, value: &[u8]) -> Newest {
        Newest {
            seqno,
            kind: Kind::Put,
            at: list.insert(&[&seqno.to_be_bytes()], value).position(),
        }
    }

    fn newest(list: &SkipList, ix: &NewestIndex, k: &[u8]) -> Option<(SeqNo, Vec<u8>)> {
        match ix.probe(k).unwrap() {
            Probe::Absent => None,
            Probe::Newest(n) => Some((n.seqno, list.entry(n.at).unwrap().value().to_vec())),
        }
    }

    #[test]
    fn keeps_the_newest_entry_whatever_the_order_of_records() {
        let list = SkipList::new();
        let ix = NewestIndex::new();
        assert!(ix.record(b"k", entry(&list, 5, b"five")) > 0);
        assert_eq!(ix.record(b"k", entry(&list, 3, b"three")), 0);
        assert_eq!(newest(&list, &ix, b"k"), Some((5, b"five".to_vec())));
        ix.record(b"k", entry(&list, 9, b"nine"));
        assert_eq!(newest(&list, &ix, b"k"), Some((9, b"nine".to_vec())));
        assert_eq!(newest(&list, &ix, b"other"), None);
    }

    #[test]
    fn every_key_of_many_finds_its_own_entry_in_whatever_shard() {
        let list = SkipList::new();
        let ix = NewestIndex::new();
        let keys: Vec<Vec<u8>> = (0u32..5_000).map(|i| i.to_be_bytes().to_vec()).collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(ix.record(k, entry(&list, i as u64 + 1, k)), index_charge(k.len()));
        }
        let used = ix.shards.iter().filter(|s| !s.read().is_empty()).count();
        assert_eq!(used, SHARDS, "keys spread over every shard");
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(newest(&list, &ix, k), Some((i as u64 + 1, k.clone())));
        }
        assert_eq!(newest(&list, &ix, b"absent"), None);
    }

    #[test]
    fn keys_longer_than_a_slot_holds_are_found_and_charged() {
        let list = SkipList::new();
        let ix = NewestIndex::new();
        let long = vec![7u8; INLINE_KEY + 1];
        let mut prefix = long.clone();
        prefix.pop();
        assert_eq!(ix.record(&long, entry(&list, 1, b"long")), INDEX_OVERHEAD + long.len());
        assert_eq!(ix.record(&prefix, entry(&list, 2, b"short")), INDEX_OVERHEAD);
        assert_eq!(newest(&list, &ix, &long), Some((1, b"long".to_vec())));
        assert_eq!(newest(&list, &ix, &prefix), Some((2, b"short".to_vec())));
    }
}
