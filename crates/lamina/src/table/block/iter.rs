//! [`BlockIter`]: the cursor over a block's entries, forward and back.
//!
//! Layout: docs/format.md#block.

use super::Block;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key;
use std::cmp::Ordering;
use std::sync::Arc;

/// A cursor over the entries of one block, ordered by `key::compare`.
///
/// Seeks search the restart points (through the numbers standing for their
/// keys, once the block keeps them: `search.rs`) and then scan; `prev` scans
/// from the restart point before the current entry and keeps the entries it
/// passed, so that the `prev`s after it take them one by one: walking a
/// block backward parses each entry once, as walking it forward does. A malformed entry makes
/// the iterator invalid for good and `status` returns the corruption; later
/// positioning calls do nothing. Owns an `Arc<Block>`, so it is `'static`.
#[derive(Debug)]
pub struct BlockIter {
    block: Arc<Block>,
    /// Offset of the current entry; `restarts_offset` when not valid.
    current: usize,
    /// Offset just past the current entry.
    next: usize,
    /// The last restart point at or before `current`.
    restart_index: usize,
    key: Vec<u8>,
    value: (usize, usize),
    err: Option<Error>,
    /// The entries before the current one that the last backward scan
    /// passed, in block order; their keys side by side in `passed_keys`.
    passed: Vec<Passed>,
    passed_keys: Vec<u8>,
}

/// An entry a backward scan passed: where it starts and ends, its restart
/// point, its key's end in `passed_keys` and its value.
#[derive(Debug, Clone, Copy)]
struct Passed {
    current: usize,
    next: usize,
    restart_index: usize,
    key_end: usize,
    value: (usize, usize),
}

impl Block {
    /// An iterator over this block, positioned nowhere.
    pub fn iter(self: &Arc<Self>) -> BlockIter {
        BlockIter::new(Arc::clone(self))
    }
}

impl BlockIter {
    /// An iterator over `block`, positioned nowhere.
    pub fn new(block: Arc<Block>) -> BlockIter {
        let end = block.restarts_offset;
        BlockIter {
            block,
            current: end,
            next: end,
            restart_index: 0,
            key: Vec::new(),
            value: (end, end),
            err: None,
            passed: Vec::new(),
            passed_keys: Vec::new(),
        }
    }

    /// The iterator moved to `block`, positioned nowhere, keeping its
    /// buffer (a table's cursor going from block to block).
    pub fn reset(&mut self, block: Arc<Block>) {
        let end = block.restarts_offset;
        self.block = block;
        self.current = end;
        self.next = end;
        self.restart_index = 0;
        self.key.clear();
        self.value = (end, end);
        self.err = None;
        self.passed.clear();
        self.passed_keys.clear();
    }

    /// The block iterated over.
    pub fn block(&self) -> &Arc<Block> {
        &self.block
    }

    fn invalidate(&mut self) {
        self.current = self.block.restarts_offset;
        self.next = self.current;
        self.restart_index = self.block.num_restarts;
    }

    fn fail(&mut self, reason: String) {
        if self.err.is_none() {
            self.err = Some(self.block.corruption(reason));
        }
        self.invalidate();
    }

    fn seek_to_restart_point(&mut self, index: usize) {
        self.key.clear();
        self.restart_index = index;
        let r = self.block.restart_point(index);
        self.current = r;
        self.next = r;
    }

    /// Moves to the entry at `self.next`; false at the end or on corruption.
    fn parse_next(&mut self) -> bool {
        let pos = self.next;
        if pos >= self.block.restarts_offset {
            self.invalidate();
            return false;
        }
        let Some(e) = self.block.entry(pos) else {
            self.fail(format!(
                "block entry at byte {pos} is truncated or malformed"
            ));
            return false;
        };
        if e.shared > self.key.len() {
            let (shared, len) = (e.shared, self.key.len());
            self.fail(format!(
                "block entry at byte {pos} shares {shared} bytes with a previous key of {len}"
            ));
            return false;
        }
        self.key.truncate(e.shared);
        self.key.extend_from_slice(e.suffix);
        self.value = e.value;
        self.current = pos;
        self.next = e.next;
        while self.restart_index + 1 < self.block.num_restarts
            && self.block.restart_point(self.restart_index + 1) <= pos
        {
            self.restart_index += 1;
        }
        true
    }

    /// Moves to the last entry that starts before byte `end`, scanning from
    /// restart point `restart` (backward moves: `seek_to_last`, `prev`);
    /// the entries passed on the way are kept for the `prev`s that follow.
    fn last_before(&mut self, restart: usize, end: usize) {
        self.passed.clear();
        self.passed_keys.clear();
        self.seek_to_restart_point(restart);
        while self.parse_next() && self.next < end {
            self.passed_keys.extend_from_slice(&self.key);
            self.passed.push(Passed {
                current: self.current,
                next: self.next,
                restart_index: self.restart_index,
                key_end: self.passed_keys.len(),
                value: self.value,
            });
        }
    }

    /// Moves to the entry just before the current one if the last backward
    /// scan passed it; false if it did not.
    fn take_passed(&mut self) -> bool {
        let Some(&p) = self.passed.last().filter(|p| p.next == self.current) else {
            return false;
        };
        self.passed.pop();
        let start = self.passed.last().map_or(0, |q| q.key_end);
        self.key.clear();
        self.key
            .extend_from_slice(self.passed_keys.get(start..p.key_end).unwrap_or_default());
        self.passed_keys.truncate(start);
        self.current = p.current;
        self.next = p.next;
        self.restart_index = p.restart_index;
        self.value = p.value;
        true
    }

    /// The last restart point at or before the current entry.
    pub(super) fn restart_index(&self) -> usize {
        self.restart_index
    }
}

impl InternalIterator for BlockIter {
    fn valid(&self) -> bool {
        self.err.is_none() && self.current < self.block.restarts_offset
    }

    fn seek_to_first(&mut self) {
        if self.err.is_some() {
            return;
        }
        self.seek_to_restart_point(0);
        self.parse_next();
    }

    fn seek_to_last(&mut self) {
        if self.err.is_some() {
            return;
        }
        let last = self.block.num_restarts.saturating_sub(1);
        self.last_before(last, self.block.restarts_offset);
    }

    fn seek(&mut self, target: &[u8]) {
        if self.err.is_some() {
            return;
        }
        if let Some(p) = self
            .block
            .prefixes
            .get()
            .filter(|_| self.block.every_entry_restarts)
        {
            // Every entry a restart point (an index block): the first
            // restart key not before the target is the entry.
            return match self.block.first_restart_not_before(p, target) {
                Ok(i) if i < self.block.num_restarts => {
                    self.seek_to_restart_point(i);
                    self.parse_next();
                }
                Ok(_) => self.invalidate(),
                Err(e) => {
                    self.err = Some(e);
                    self.invalidate();
                }
            };
        }
        let from = match self.block.seek_restart(target) {
            Ok(from) => from,
            Err(e) => {
                self.err = Some(e);
                return self.invalidate();
            }
        };
        self.seek_to_restart_point(from);
        while self.parse_next() {
            if key::compare(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if self.err.is_some() {
            return;
        }
        if !self.valid() {
            self.seek_to_last();
        } else if key::compare(&self.key, target) == Ordering::Greater {
            self.prev();
        }
    }

    fn next(&mut self) {
        if self.valid() {
            self.parse_next();
        }
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if self.take_passed() {
            return;
        }
        let original = self.current;
        while self.block.restart_point(self.restart_index) >= original {
            if self.restart_index == 0 {
                self.invalidate();
                return;
            }
            self.restart_index -= 1;
        }
        self.last_before(self.restart_index, original);
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn value(&self) -> &[u8] {
        self.block
            .data
            .get(self.value.0..self.value.1)
            .unwrap_or(&[])
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
