//! The restart search: which restart point of a block a lookup scans
//! from, by a binary search of the restart keys or, once a block keeps
//! them, of numbers standing for them.
//!
//! Layout: docs/format.md#block.

use super::Block;
use crate::error::Result;
use crate::key;
use crate::key_numbers::{prefetch_range, KeyNumbers};
use std::cmp::Ordering;
use std::sync::atomic::Ordering as AtomicOrdering;

/// A binary search of the restart keys that has to read each key it
/// compares (one cache miss apiece) costs more than building
/// the numbers of its restart keys once this many lookups have done it.
const PREFIXES_AFTER: u8 = 8;

impl Block {
    /// The restart point to scan from for the first key `>= target`: the
    /// last whose key is `< target`, or the first.
    pub(super) fn seek_restart(&self, target: &[u8]) -> Result<usize> {
        if let Some(p) = self.prefixes.get() {
            return Ok(self.first_restart_not_before(p, target)?.saturating_sub(1));
        }
        if self.searches.fetch_add(1, AtomicOrdering::Relaxed) >= PREFIXES_AFTER {
            let p = self.restart_prefixes()?;
            let p = self.prefixes.get_or_init(|| p);
            return Ok(self.first_restart_not_before(p, target)?.saturating_sub(1));
        }
        self.last_restart_before(target)
    }

    /// The last restart point whose key is `< target`, or the first, by a
    /// binary search that reads each restart key it compares.
    pub(super) fn last_restart_before(&self, target: &[u8]) -> Result<usize> {
        let (mut left, mut right) = (0, self.num_restarts.saturating_sub(1));
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            if key::compare(self.restart_key(mid)?, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        Ok(left)
    }

    /// Keeps, beside the block, a number for every restart key (see
    /// `crate::key_numbers`), so that the restart search compares
    /// numbers instead of decoding entries from its first search on (for
    /// index blocks, which stay in memory as long as their table).
    /// Corruption if a restart entry is malformed, or the restart keys are
    /// not in order.
    pub fn with_restart_prefixes(mut self) -> Result<Block> {
        let p = self.restart_prefixes()?;
        let _ = self.prefixes.set(p);
        self.every_entry_restarts = (0..self.num_restarts).all(|i| {
            let next = if i + 1 < self.num_restarts {
                self.restart_point(i + 1)
            } else {
                self.restarts_offset
            };
            self.entry(self.restart_point(i))
                .is_some_and(|e| e.next == next)
        });
        Ok(self)
    }

    /// Entries in the block when every one is a restart point; `None`
    /// otherwise (or when not known: see [`Block::with_restart_prefixes`]).
    pub fn entries_if_all_restarts(&self) -> Option<usize> {
        self.every_entry_restarts.then_some(self.num_restarts)
    }

    /// Builds the numbers of the block's restart keys, reading every
    /// restart key.
    fn restart_prefixes(&self) -> Result<KeyNumbers<u128>> {
        let keys = (0..self.num_restarts)
            .map(|i| self.restart_key(i).map(key::tree_key_of))
            .collect::<Result<Vec<_>>>()?;
        let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
            return Ok(KeyNumbers::empty());
        };
        KeyNumbers::new(first, last, keys.iter().copied()).map_err(|i| {
            self.corruption(format!(
                "restart key {i} is not between the block's first and last keys"
            ))
        })
    }

    /// The first restart point whose key is `>= target` (the number of
    /// restart points if none is), found through the restart keys'
    /// numbers `p`: only restart keys whose number equals the target's are
    /// compared in full.
    pub(super) fn first_restart_not_before(
        &self,
        p: &KeyNumbers<u128>,
        target: &[u8],
    ) -> Result<usize> {
        if p.prefetch() {
            // The restart point found is read next: its word too.
            let restarts = self.data.as_ptr().wrapping_add(self.restarts_offset);
            prefetch_range(restarts, 4 * self.num_restarts);
        }
        let (mut a, mut b) = p.candidates(key::tree_key_of(target));
        while a < b {
            let mid = a + (b - a) / 2;
            if key::compare(self.restart_key(mid)?, target) == Ordering::Less {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        Ok(a)
    }
}
