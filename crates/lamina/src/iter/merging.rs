//! Merges several sorted internal iterators into one.

use super::InternalIterator;
use crate::error::Result;
use crate::key;
use std::cmp::Ordering;

/// The direction of travel, as the order in which a key comes first
/// (`Ordering`'s own values, so that a comparison is one test).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(i8)]
enum Direction {
    Forward = -1,
    Reverse = 1,
}

/// Yields the union of its children in internal-key order. Children must not
/// hold the same internal key twice (seqnos are unique). Going forward, the
/// valid children are kept in a binary heap by their current key, smallest
/// on top (largest going backward), so that a step costs a few comparisons
/// however many children there are (a compaction of level 0 merges up to
/// `l0_stop_trigger` tables: a linear scan was a fifth of a compaction
/// thread's time), and none beyond the top's two children while the same
/// child keeps the lead.
pub struct MergingIter<C = Box<dyn InternalIterator>> {
    children: Vec<C>,
    /// The valid children, a heap by key in the direction of travel (the
    /// first is the current one).
    heap: Vec<usize>,
    current: Option<usize>,
    direction: Direction,
}

impl<C: InternalIterator> MergingIter<C> {
    /// Merges `children`.
    pub fn new(children: Vec<C>) -> MergingIter<C> {
        MergingIter {
            heap: Vec::with_capacity(children.len()),
            children,
            current: None,
            direction: Direction::Forward,
        }
    }

    /// The children merged.
    pub fn children(&self) -> &[C] {
        &self.children
    }

    /// Makes the heap of the valid children, and its top (the smallest key,
    /// the largest going backward) current.
    fn make_heap(&mut self) {
        self.heap.clear();
        self.heap.extend(
            (0..self.children.len()).filter(|&i| self.children.get(i).is_some_and(|c| c.valid())),
        );
        for at in (0..self.heap.len() / 2).rev() {
            self.sift_down(at);
        }
        self.current = self.heap.first().copied();
    }

    /// Whether child `a`'s key comes before child `b`'s in the direction
    /// of travel.
    fn before(&self, a: usize, b: usize) -> bool {
        key::compare(self.key_of(a), self.key_of(b)) as i8 == self.direction as i8
    }

    /// Moves the heap's entry at `at` down to where its key belongs.
    fn sift_down(&mut self, mut at: usize) {
        let n = self.heap.len();
        loop {
            let left = 2 * at + 1;
            if left >= n {
                return;
            }
            let (Some(&l), Some(&here)) = (self.heap.get(left), self.heap.get(at)) else {
                return;
            };
            let smaller = match self.heap.get(left + 1) {
                Some(&r) if self.before(r, l) => left + 1,
                _ => left,
            };
            let Some(&child) = self.heap.get(smaller) else {
                return;
            };
            if !self.before(child, here) {
                return;
            }
            self.heap.swap(at, smaller);
            at = smaller;
        }
    }

    /// After the current child moved a step: back into its place in the
    /// heap, or out of it once exhausted.
    fn advance_top(&mut self) {
        let Some(&top) = self.heap.first() else {
            self.current = None;
            return;
        };
        if !self.children.get(top).is_some_and(|c| c.valid()) {
            self.heap.swap_remove(0);
        }
        self.sift_down(0);
        self.current = self.heap.first().copied();
    }

    fn key_of(&self, i: usize) -> &[u8] {
        self.children.get(i).map(|c| c.key()).unwrap_or(&[])
    }
}

impl<C: InternalIterator> InternalIterator for MergingIter<C> {
    fn valid(&self) -> bool {
        self.current.is_some()
    }

    fn seek_to_first(&mut self) {
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.direction = Direction::Forward;
        self.make_heap();
    }

    fn seek_to_last(&mut self) {
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.direction = Direction::Reverse;
        self.make_heap();
    }

    fn seek(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek(target);
        }
        self.direction = Direction::Forward;
        self.make_heap();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek_for_prev(target);
        }
        self.direction = Direction::Reverse;
        self.make_heap();
    }

    fn next(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction != Direction::Forward {
            // Every other child is positioned at or before the current key;
            // move each to the first entry after it.
            let k = self.key_of(cur).to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i == cur {
                    continue;
                }
                c.seek(&k);
                if c.valid() && key::compare(c.key(), &k) == Ordering::Equal {
                    c.next();
                }
            }
            self.direction = Direction::Forward;
            if let Some(c) = self.children.get_mut(cur) {
                c.next();
            }
            self.make_heap();
            return;
        }
        if let Some(c) = self.children.get_mut(cur) {
            c.next();
        }
        self.advance_top();
    }

    fn prev(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction != Direction::Reverse {
            let k = self.key_of(cur).to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i == cur {
                    continue;
                }
                c.seek_for_prev(&k);
                if c.valid() && key::compare(c.key(), &k) == Ordering::Equal {
                    c.prev();
                }
            }
            self.direction = Direction::Reverse;
            if let Some(c) = self.children.get_mut(cur) {
                c.prev();
            }
            self.make_heap();
            return;
        }
        if let Some(c) = self.children.get_mut(cur) {
            c.prev();
        }
        self.advance_top();
    }

    fn key(&self) -> &[u8] {
        self.current.map(|i| self.key_of(i)).unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.current
            .and_then(|i| self.children.get(i))
            .map(|c| c.value())
            .unwrap_or(&[])
    }

    fn status(&self) -> Result<()> {
        for c in &self.children {
            c.status()?;
        }
        Ok(())
    }
}

#[cfg(any(test, feature = "internals"))]
/// An iterator over a sorted vector of owned entries; used in tests and for
/// small in-memory sources.
pub struct VecIter {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    pos: Option<usize>,
}

#[cfg(any(test, feature = "internals"))]
impl VecIter {
    /// REQUIRES: `entries` sorted by `key::compare` without duplicates.
    pub fn new(entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
        VecIter { entries, pos: None }
    }

    fn at(&self) -> Option<&(Vec<u8>, Vec<u8>)> {
        self.pos.and_then(|p| self.entries.get(p))
    }
}

#[cfg(any(test, feature = "internals"))]
impl InternalIterator for VecIter {
    fn valid(&self) -> bool {
        self.at().is_some()
    }
    fn seek_to_first(&mut self) {
        self.pos = if self.entries.is_empty() {
            None
        } else {
            Some(0)
        };
    }
    fn seek_to_last(&mut self) {
        self.pos = self.entries.len().checked_sub(1);
    }
    fn seek(&mut self, target: &[u8]) {
        let i = self
            .entries
            .partition_point(|(k, _)| key::compare(k, target) == Ordering::Less);
        self.pos = (i < self.entries.len()).then_some(i);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let i = self
            .entries
            .partition_point(|(k, _)| key::compare(k, target) != Ordering::Greater);
        self.pos = i.checked_sub(1);
    }
    fn next(&mut self) {
        self.pos = self.pos.map(|p| p + 1).filter(|p| *p < self.entries.len());
    }
    fn prev(&mut self) {
        self.pos = self.pos.and_then(|p| p.checked_sub(1));
    }
    fn key(&self) -> &[u8] {
        self.at().map(|e| e.0.as_slice()).unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.at().map(|e| e.1.as_slice()).unwrap_or(&[])
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::key::{internal_key, tree_key};
    use proptest::prelude::*;

    fn ik(k: u8, seq: u64) -> Vec<u8> {
        internal_key(&tree_key(0, &[k]), seq, 1)
    }

    proptest! {
        #[test]
        fn merging_matches_sorted_union(
            parts in proptest::collection::vec(proptest::collection::btree_set((0u8..20, 1u64..50), 0..15), 1..12),
            moves in proptest::collection::vec((0u8..4, 0u8..20), 1..40),
        ) {
            // Make (key, seq) pairs unique across children.
            let mut seen = std::collections::BTreeSet::new();
            let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
            let mut all = Vec::new();
            for p in parts {
                let mut v: Vec<(Vec<u8>, Vec<u8>)> = p.into_iter().filter(|e| seen.insert(*e)).map(|(k, s)| (ik(k, s), vec![k])).collect();
                v.sort_by(|a, b| key::compare(&a.0, &b.0));
                all.extend(v.clone());
                children.push(Box::new(VecIter::new(v)));
            }
            all.sort_by(|a, b| key::compare(&a.0, &b.0));
            let mut m = MergingIter::new(children);
            let mut model = VecIter::new(all);
            for (op, k) in moves {
                match op {
                    0 => { m.seek(&ik(k, 25)); model.seek(&ik(k, 25)); }
                    1 => { m.seek_for_prev(&ik(k, 25)); model.seek_for_prev(&ik(k, 25)); }
                    2 => if m.valid() { m.next(); model.next(); } else { m.seek_to_first(); model.seek_to_first(); },
                    _ => if m.valid() { m.prev(); model.prev(); } else { m.seek_to_last(); model.seek_to_last(); },
                }
                prop_assert_eq!(m.valid(), model.valid());
                if m.valid() {
                    prop_assert_eq!(m.key(), model.key());
                }
            }
        }
    }
}
