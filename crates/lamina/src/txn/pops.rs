//! A transaction's pops: [`super::Transaction::pop_first`] and
//! [`super::Transaction::pop_last`] take from the two ends of one open
//! cursor on a keyspace, so each pop costs one step of it and a buffered
//! delete however many pops came before: a queue drained in one
//! transaction costs amortized O(1) a pop, as a B-tree's cursor does.
//!
//! The cursor merges the snapshot with the writes the transaction held when
//! it opened; the pops since are deletes of keys it has already passed, so
//! it stays exact until another write of the transaction (any put, delete
//! or merge not made by a pop), which closes it. What the pops read is the
//! keyspace from its start up to the last key popped from the front, and
//! from the last key popped from the back to its end (all of it once an
//! end came back empty): recorded in the read set when the cursor closes,
//! as one range each, so a key written there by another writer before the
//! commit is a conflict.

use super::iter::TxnIter;
use super::validate::KeyRange;
use crate::key::{self, KeyspaceId};
use std::ops::Bound;

/// An open cursor of pops on one keyspace (see the module doc).
pub(super) struct Pops {
    pub ks: KeyspaceId,
    pub iter: TxnIter,
    /// The tree keys last popped from the front and from the back.
    pub front: Option<Vec<u8>>,
    pub back: Option<Vec<u8>>,
    /// Whether an end came back empty: the whole keyspace was read.
    pub drained: bool,
}

impl Pops {
    /// The ranges of tree keys the pops read, given the keyspace's end.
    pub fn read_ranges(self, end: Bound<Vec<u8>>) -> Vec<KeyRange> {
        let start = Bound::Included(key::tree_key(self.ks, b""));
        if self.drained {
            return vec![(start, end)];
        }
        let mut ranges = Vec::new();
        if let Some(front) = self.front {
            ranges.push((start, Bound::Included(front)));
        }
        if let Some(back) = self.back {
            ranges.push((Bound::Included(back), end));
        }
        ranges
    }
}
