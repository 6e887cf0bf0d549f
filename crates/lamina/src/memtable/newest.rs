//! A hash index beside the memtable's skip list: each tree key maps to its
//! newest entry, so a lookup as of now costs a hash probe instead of a
//! descent through the skip list.
//!
//! The skip list stays the record of every entry and the only ordered view;
//! this index answers one question, "what is the newest entry of this key?",
//! and the memtable falls back to the skip list whenever that is not the
//! question (a snapshot older than the newest entry, a Merge operand).

use crate::key::{Kind, SeqNo};
use ahash::RandomState;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;

/// Shards of the index, each behind its own lock, so that concurrent
/// readers and writers of different keys rarely meet.
const SHARDS: usize = 16;

/// Bytes an index entry takes besides its key, counted in the memtable's
/// approximate size (the table slot, the boxed key's header, the entry).
pub(super) const INDEX_OVERHEAD: usize = 48;

/// The newest entry of one tree key.
#[derive(Clone)]
pub(super) struct Newest {
    pub seqno: SeqNo,
    pub kind: Kind,
    /// Shared with the skip list's entry: not a copy.
    pub value: Arc<[u8]>,
}

/// What the index knows about a tree key.
pub(super) enum Probe {
    /// The memtable holds no entry of the key.
    Absent,
    /// The key's newest entry.
    Newest(Newest),
}

type Shard = RwLock<HashMap<Box<[u8]>, Newest, RandomState>>;

/// Tree key → newest entry, safe for concurrent readers and writers.
pub(super) struct NewestIndex {
    hasher: RandomState,
    shards: Vec<Shard>,
}

impl NewestIndex {
    pub(super) fn new() -> NewestIndex {
        NewestIndex {
            hasher: RandomState::new(),
            shards: (0..SHARDS)
                .map(|_| RwLock::new(HashMap::with_hasher(RandomState::new())))
                .collect(),
        }
    }

    fn shard(&self, tree_key: &[u8]) -> Option<&Shard> {
        let h = self.hasher.hash_one(tree_key);
        self.shards.get((h as usize) % SHARDS)
    }

    /// Records an entry of `tree_key`; it becomes the key's newest unless a
    /// newer one is already recorded. Returns the bytes a new key added.
    pub(super) fn record(&self, tree_key: &[u8], entry: Newest) -> usize {
        let Some(shard) = self.shard(tree_key) else {
            return 0;
        };
        let mut map = shard.write();
        if let Some(cur) = map.get_mut(tree_key) {
            if cur.seqno < entry.seqno {
                *cur = entry;
            }
            return 0;
        }
        map.insert(tree_key.into(), entry);
        tree_key.len() + INDEX_OVERHEAD
    }

    /// The newest entry of `tree_key`, or `None` if the index cannot say.
    pub(super) fn probe(&self, tree_key: &[u8]) -> Option<Probe> {
        let map = self.shard(tree_key)?.read();
        Some(match map.get(tree_key) {
            Some(n) => Probe::Newest(n.clone()),
            None => Probe::Absent,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn entry(seqno: SeqNo, value: &[u8]) -> Newest {
        Newest {
            seqno,
            kind: Kind::Put,
            value: Arc::from(value),
        }
    }

    fn newest(ix: &NewestIndex, k: &[u8]) -> Option<(SeqNo, Vec<u8>)> {
        match ix.probe(k).unwrap() {
            Probe::Absent => None,
            Probe::Newest(n) => Some((n.seqno, n.value.to_vec())),
        }
    }

    #[test]
    fn keeps_the_newest_entry_whatever_the_order_of_records() {
        let ix = NewestIndex::new();
        assert!(ix.record(b"k", entry(5, b"five")) > 0);
        assert_eq!(ix.record(b"k", entry(3, b"three")), 0);
        assert_eq!(newest(&ix, b"k"), Some((5, b"five".to_vec())));
        ix.record(b"k", entry(9, b"nine"));
        assert_eq!(newest(&ix, b"k"), Some((9, b"nine".to_vec())));
        assert_eq!(newest(&ix, b"other"), None);
    }
}
