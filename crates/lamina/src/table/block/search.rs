//! The restart search: which restart point of a block a lookup scans
//! from, by a binary search of the restart keys or, once a block keeps
//! them, of numbers standing for them.
//!
//! Layout: docs/format.md#block.

use super::super::block_builder::common_prefix;
use super::{Block, RestartPrefixes};
use crate::error::Result;
use crate::key;
use std::cmp::Ordering;
use std::sync::atomic::Ordering as AtomicOrdering;

/// A binary search of the restart keys that has to read each key it
/// compares (one cache miss apiece) costs more than building
/// [`RestartPrefixes`] once this many lookups have done it.
const PREFIXES_AFTER: u8 = 8;

/// How many of `xs`, ascending, are `< t` (`xs.partition_point(|&x| x <
/// t)`), with no branch on a comparison: every step of a search for a
/// random key goes either way as often, so a branch on it would be
/// mispredicted half the time, a pipeline flush a step. The steps are
/// written out rather than looped over, as LLVM's x86 backend turns
/// conditional moves in a loop back into branches; past sixteen steps
/// (arrays of more than 65,536) the search goes on in a loop.
pub(super) fn count_below(xs: &[u128], t: u128) -> usize {
    // `rest` holds the answer's candidates from `base` on (the answer is
    // in `base..=base + rest.len()`); every element before `base` is `< t`.
    let mut rest = xs;
    let mut base = 0;
    let mut step = || {
        if rest.len() > 1 {
            let (low, high) = rest.split_at(rest.len() / 2);
            let below = high.first().is_some_and(|&x| x < t);
            let keep = high.len();
            base = std::hint::select_unpredictable(below, base + low.len(), base);
            rest = std::hint::select_unpredictable(below, high, rest.split_at(keep).0);
            true
        } else {
            false
        }
    };
    let _ = step() && step() && step() && step();
    let _ = step() && step() && step() && step();
    let _ = step() && step() && step() && step();
    let _ = step() && step() && step() && step();
    while step() {}
    base + usize::from(rest.first().is_some_and(|&x| x < t))
}

/// Restart prefixes equal to a target's that are counted one by one before
/// a binary search counts the rest.
const NEAR_TIES: usize = 8;

/// The prefixes a large block's search reads after its top level: 1 KiB,
/// sixteen cache lines asked for together.
pub(super) const SPAN: usize = 64;
/// Prefixes past which a block keeps a top level ([`RestartPrefixes::top`]):
/// 64 KiB of them. A binary search of a larger array waits for memory at
/// each of its last steps (an index block of 230,000 entries, 4 KiB blocks
/// of a 900 MB table: a fifth of a random point read's time out of the
/// block cache, in the search alone).
pub(super) const TOP_AFTER: usize = 4096;

/// The length of the top level of `n` prefixes.
pub(super) fn top_len(n: usize) -> usize {
    if n <= TOP_AFTER {
        0
    } else {
        n.div_ceil(SPAN)
    }
}

/// The top level of `prefixes`: every [`SPAN`]-th, if there are more than
/// [`TOP_AFTER`]; empty otherwise.
pub(super) fn top_level(prefixes: &[u128]) -> Vec<u128> {
    if prefixes.len() <= TOP_AFTER {
        return Vec::new();
    }
    prefixes.iter().step_by(SPAN).copied().collect()
}

/// How many of `prefixes` (ascending) are `< t`, as [`count_below`],
/// through `top` (see [`top_level`]) when it is not empty: the span of
/// `prefixes` that holds the answer is found in `top`, then searched.
pub(super) fn count_below_two_level(prefixes: &[u128], top: &[u128], t: u128) -> usize {
    if top.is_empty() {
        return count_below(prefixes, t);
    }
    // top[i - 1] = prefixes[(i - 1) * SPAN] is < t and top[i] =
    // prefixes[i * SPAN] is not: the answer is past the first and at most
    // the second.
    let Some(from) = count_below(top, t).checked_sub(1).map(|i| i * SPAN) else {
        return 0;
    };
    let span = prefixes
        .get(from..prefixes.len().min(from + SPAN))
        .unwrap_or(&[]);
    prefetch_range(span.as_ptr().cast::<u8>(), std::mem::size_of_val(span));
    from + count_below(span, t)
}

impl RestartPrefixes {
    /// Asks the CPU for every line of a data block's numbers (a few KiB at
    /// most) at once, so that a binary search over them waits for memory
    /// about once rather than at each of its steps. An index block's, larger
    /// and searched by every lookup, is left to the caches.
    /// Returns whether it did.
    fn prefetch(&self) -> bool {
        let bytes = std::mem::size_of_val(self.prefixes.as_slice());
        prefetch_range(self.prefixes.as_ptr().cast::<u8>(), bytes)
    }
}

/// Asks the CPU for every line of the `bytes` from `base` if they are a
/// few KiB at most; returns whether it did.
fn prefetch_range(base: *const u8, bytes: usize) -> bool {
    const MOST: usize = 4 << 10;
    if bytes > MOST {
        return false;
    }
    // From the line `base` is in, to the one its last byte is in.
    let skew = base as usize % 64;
    let first = base.wrapping_sub(skew);
    for line in (0..skew + bytes).step_by(64) {
        crate::prefetch::prefetch(first.wrapping_add(line));
    }
    true
}

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
    /// [`RestartPrefixes`]), so that the restart search compares
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

    /// Builds the block's [`RestartPrefixes`], reading every restart key.
    fn restart_prefixes(&self) -> Result<RestartPrefixes> {
        let Some(last) = self.num_restarts.checked_sub(1) else {
            return Ok(RestartPrefixes {
                head: Vec::new(),
                prefixes: Vec::new(),
                top: Vec::new(),
            });
        };
        let first_tk = key::tree_key_of(self.restart_key(0)?);
        let last_tk = key::tree_key_of(self.restart_key(last)?);
        let shared = common_prefix(first_tk, last_tk);
        let head = first_tk.get(..shared).unwrap_or(&[]).to_vec();
        let mut prefixes = Vec::with_capacity(self.num_restarts);
        for i in 0..self.num_restarts {
            let tk = key::tree_key_of(self.restart_key(i)?);
            match tk.strip_prefix(head.as_slice()) {
                Some(rest) => prefixes.push(key::tree_prefix(rest)),
                None => {
                    return Err(self.corruption(format!(
                        "restart key {i} is not between the block's first and last keys"
                    )))
                }
            }
        }
        let top = top_level(&prefixes);
        Ok(RestartPrefixes {
            head,
            prefixes,
            top,
        })
    }

    /// The first restart point whose key is `>= target` (the number of
    /// restart points if none is), found through the restart keys'
    /// prefixes: only restart keys whose prefix equals the target's are
    /// compared in full.
    pub(super) fn first_restart_not_before(
        &self,
        p: &RestartPrefixes,
        target: &[u8],
    ) -> Result<usize> {
        let tk = key::tree_key_of(target);
        let head = tk.get(..p.head.len()).unwrap_or(tk);
        let (lo, hi) = match head.cmp(&p.head) {
            // Every restart key is greater, or every one smaller.
            Ordering::Less => (0, 0),
            Ordering::Greater => (p.prefixes.len(), p.prefixes.len()),
            Ordering::Equal => {
                if p.prefetch() {
                    // The restart point found is read next: its word too.
                    let restarts = self.data.as_ptr().wrapping_add(self.restarts_offset);
                    prefetch_range(restarts, 4 * self.num_restarts);
                }
                let tp = key::tree_prefix(tk.get(p.head.len()..).unwrap_or(&[]));
                let lo = count_below_two_level(&p.prefixes, &p.top, tp);
                // Restart keys that share the target's prefix: nearly always
                // none or one, beside `lo` in memory (counted, not searched,
                // unless there are many).
                let ties = p.prefixes.get(lo..).unwrap_or(&[]);
                let near = ties
                    .iter()
                    .take(NEAR_TIES)
                    .take_while(|&&x| x == tp)
                    .count();
                let n = if near < NEAR_TIES {
                    near
                } else {
                    ties.partition_point(|&x| x == tp)
                };
                (lo, lo + n)
            }
        };
        let (mut a, mut b) = (lo, hi);
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
