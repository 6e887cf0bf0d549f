//! A transaction's pops: [`super::Transaction::pop_first`] and
//! [`super::Transaction::pop_last`] take from the two ends of one open
//! cursor on a keyspace, so each pop costs one step of it and a key
//! appended to a list however many pops came before: a queue drained in
//! one transaction costs amortized O(1) a pop, as a B-tree's cursor does.
//!
//! The cursor merges the snapshot with the writes the transaction held when
//! it opened; the pops since are deletes of keys it has already passed, so
//! it stays exact until another write of the transaction (any put, delete
//! or merge not made by a pop), which closes it. Until then the popped
//! keys are two lists, not entries of the transaction's buffer: the front's
//! ascending, the back's descending, every key of the first below every key
//! of the second. Reads of the transaction ask them first
//! ([`Pops::popped`], [`Pops::in_range`]); closing the cursor moves them
//! into the buffer, and a commit writes them after it.
//!
//! What the pops read is the keyspace from its start up to the last key
//! popped from the front, and from the last key popped from the back to its
//! end (all of it once an end came back empty): recorded in the read set
//! when the cursor closes, as one range each, so a key written there by
//! another writer before the commit is a conflict.

use super::iter::TxnIter;
use super::pending::Pending;
use super::validate::KeyRange;
use crate::key::{self, KeyspaceId};
use std::collections::VecDeque;
use std::ops::{Bound, RangeBounds};

/// Keys side by side in one buffer, in the order pushed.
#[derive(Default)]
pub(super) struct Keys {
    bytes: Vec<u8>,
    /// Where each key ends in `bytes`.
    ends: Vec<usize>,
}

impl Keys {
    fn push(&mut self, k: &[u8]) {
        self.bytes.extend_from_slice(k);
        self.ends.push(self.bytes.len());
    }

    fn get(&self, i: usize) -> &[u8] {
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.bytes.get(start..end).unwrap_or_default()
    }

    fn last(&self) -> Option<&[u8]> {
        self.ends.len().checked_sub(1).map(|i| self.get(i))
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The keys in the order pushed.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The number of keys before the first for which `after` holds (the
    /// keys are ordered so that `after` is false, then true).
    fn partition_point(&self, after: impl Fn(&[u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if after(self.get(mid)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }
}

/// An open cursor of pops on one keyspace (see the module doc).
pub(super) struct Pops {
    pub ks: KeyspaceId,
    pub iter: TxnIter,
    /// User keys popped from the front, ascending.
    front: Keys,
    /// User keys popped from the back, descending.
    back: Keys,
    /// Whether an end came back empty: the whole keyspace was read.
    pub drained: bool,
}

impl Pops {
    pub fn new(ks: KeyspaceId, iter: TxnIter) -> Pops {
        Pops {
            ks,
            iter,
            front: Keys::default(),
            back: Keys::default(),
            drained: false,
        }
    }

    /// Records `user_key` as popped from the front or the back.
    pub fn push(&mut self, front: bool, user_key: &[u8]) {
        if front {
            self.front.push(user_key);
        } else {
            self.back.push(user_key);
        }
    }

    /// Whether no key was popped.
    pub fn is_empty(&self) -> bool {
        self.front.len() == 0 && self.back.len() == 0
    }

    /// Whether the tree key `tk` was popped.
    pub fn popped(&self, tk: &[u8]) -> bool {
        let (ks, user_key) = super::pending::split(tk);
        if ks != self.ks || tk.len() < key::KEYSPACE_ID_LEN {
            return false;
        }
        let i = self.front.partition_point(|k| k >= user_key);
        if i < self.front.len() && self.front.get(i) == user_key {
            return true;
        }
        let i = self.back.partition_point(|k| k <= user_key);
        i < self.back.len() && self.back.get(i) == user_key
    }

    /// The popped keys between tree keys `lower` and `upper`, as tree keys,
    /// ascending (found by binary search in each list).
    pub fn in_range(&self, lower: &Bound<Vec<u8>>, upper: &Bound<Vec<u8>>) -> Vec<Vec<u8>> {
        let tk = |k: &[u8]| key::tree_key(self.ks, k);
        let from = (lower.as_ref(), Bound::Unbounded);
        let to = (Bound::Unbounded, upper.as_ref());
        let above = |k: &[u8]| RangeBounds::<Vec<u8>>::contains(&from, &tk(k));
        let below = |k: &[u8]| RangeBounds::<Vec<u8>>::contains(&to, &tk(k));
        // The front's keys ascend, the back's descend.
        let front = self.front.partition_point(above)..self.front.partition_point(|k| !below(k));
        let back = self.back.partition_point(below)..self.back.partition_point(|k| !above(k));
        front
            .map(|i| self.front.get(i))
            .chain(back.rev().map(|i| self.back.get(i)))
            .map(tk)
            .collect()
    }

    /// Every popped key, as a tree key, in no particular order.
    pub fn all(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        self.front
            .iter()
            .chain(self.back.iter())
            .map(|k| key::tree_key(self.ks, k))
    }

    /// The ranges of tree keys the pops read, given the keyspace's end.
    pub fn read_ranges(&self, end: Bound<Vec<u8>>) -> Vec<KeyRange> {
        let start = Bound::Included(key::tree_key(self.ks, b""));
        if self.drained {
            return vec![(start, end)];
        }
        let mut ranges = Vec::new();
        if let Some(front) = self.front.last() {
            ranges.push((start, Bound::Included(key::tree_key(self.ks, front))));
        }
        if let Some(back) = self.back.last() {
            ranges.push((Bound::Included(key::tree_key(self.ks, back)), end));
        }
        ranges
    }
}

/// Merges `own` (a transaction's writes in a range, ascending) with
/// `popped` (its popped keys there, ascending): a popped key is a delete,
/// newer than the write it replaces.
pub(super) fn with_popped(
    own: impl Iterator<Item = (Vec<u8>, Pending)>,
    popped: Vec<Vec<u8>>,
) -> VecDeque<(Vec<u8>, Pending)> {
    let mut out = VecDeque::new();
    let mut popped = popped.into_iter().peekable();
    for (k, p) in own {
        while let Some(d) = popped.next_if(|d| d.as_slice() < k.as_slice()) {
            out.push_back((d, super::deleted()));
        }
        let write = match popped.next_if(|d| *d == k) {
            Some(_) => super::deleted(),
            None => p,
        };
        out.push_back((k, write));
    }
    out.extend(popped.map(|d| (d, super::deleted())));
    out
}
