//! The scan of a restart interval: entries decoded from a restart point
//! on, until the first key not before a target.
//!
//! How the keys the scan meets stand against its target is told from each
//! entry's shared length and suffix alone ([`Against`]): the keys the scan
//! passes are never rebuilt, and only the one it stops at is (from the
//! target's bytes and the entry's suffix). An entry's key is the previous
//! key's first `shared` bytes followed by its suffix. Knowing how many
//! bytes the previous key has in common with the target, and its byte
//! after them, is enough to know the same of the next key, reading only
//! the next key's suffix: a key sharing no more with the previous key than
//! the previous key does with the target starts with the target's own
//! bytes.
//!
//! Layout: docs/format.md#block.

use super::super::block_builder::common_prefix;
use super::{Block, KeyBuf};
use crate::error::Result;
use crate::key::{self, TRAILER_LEN};
use std::cmp::Ordering;

/// Cache lines fetched from a restart interval's start: at least the
/// fewest, and as many as the block's intervals span on average (a scan
/// reads on until its key, in the interval's last entry as often as in its
/// first), up to the most.
const INTERVAL_LINES: (usize, usize) = (4, 16);

impl Block {
    /// Asks the CPU for the lines of the restart interval from byte `at`
    /// (see [`INTERVAL_LINES`]), at once rather than one after the other as
    /// a scan reaches them: the value found is copied from them next.
    pub(super) fn prefetch_lines(&self, at: usize) {
        let base = self.data.as_ptr();
        let stride = self.restarts_offset / self.num_restarts.max(1);
        let (fewest, most) = INTERVAL_LINES;
        // The lines from `at`'s to the one past an average interval's end.
        let first = (base as usize).wrapping_add(at) % 64;
        let lines = ((first + stride) / 64 + 1).clamp(fewest, most);
        for line in 0..lines {
            let p = at + line * 64;
            if p < self.restarts_offset {
                crate::prefetch::prefetch(base.wrapping_add(p));
            }
        }
    }

    /// Scans entries from the restart point at byte `pos` for the first key
    /// `>= target` (see [`Block::seek_in_place`]).
    pub(super) fn scan_from(
        &self,
        pos: usize,
        target: &[u8],
        key: &mut KeyBuf,
    ) -> Result<Option<(usize, usize)>> {
        if let Some(found) = self.scan_against(pos, target, key) {
            return Ok(found);
        }
        Ok(self.scan(pos, target, key, None)?.map(|(v, _)| v))
    }

    /// [`Block::scan_from`] without rebuilding the keys it passes (see
    /// [`Against`]); `None` where it cannot tell, or meets a malformed
    /// entry, for the full scan to answer or report.
    #[inline]
    fn scan_against(
        &self,
        mut pos: usize,
        target: &[u8],
        key: &mut KeyBuf,
    ) -> Option<Option<(usize, usize)>> {
        let mut against = Against::new(target)?;
        while pos < self.restarts_offset {
            let e = self.entry(pos)?;
            if against.next(e.shared, e.suffix)? != Ordering::Less {
                return against
                    .rebuild(e.shared, e.suffix, key)
                    .then_some(Some(e.value));
            }
            pos = e.next;
        }
        Some(None)
    }

    /// [`Block::scan_from`], keeping in `before` (if given) the key of the
    /// entry before the one found; the flag says whether `before` is known:
    /// it holds that key, or is empty when the entry found is the block's
    /// first.
    pub(super) fn scan(
        &self,
        mut pos: usize,
        target: &[u8],
        key: &mut KeyBuf,
        mut before: Option<&mut KeyBuf>,
    ) -> Result<Option<((usize, usize), bool)>> {
        let start = pos;
        key.clear();
        if let Some(b) = before.as_deref_mut() {
            b.clear();
        }
        while pos < self.restarts_offset {
            let Some(e) = self.entry(pos) else {
                return Err(self.corruption(format!(
                    "block entry at byte {pos} is truncated or malformed"
                )));
            };
            if e.shared > key.len() {
                return Err(self.corruption(format!(
                    "block entry at byte {pos} shares {} bytes with a previous key of {}",
                    e.shared,
                    key.len()
                )));
            }
            if let Some(b) = before.as_deref_mut() {
                b.splice(0, key);
            }
            key.splice(e.shared, e.suffix);
            if key::compare(key, target) != Ordering::Less {
                return Ok(Some((e.value, pos != start || pos == 0)));
            }
            pos = e.next;
        }
        Ok(None)
    }
}

/// What is known of the last key taken in against the target.
pub(super) struct Against<'t> {
    target: &'t [u8],
    /// Bytes the key has in common with the target, from the first.
    common: usize,
    /// The key's byte at `common`, if it is longer than that.
    next_byte: Option<u8>,
    /// The key's length (0 before the first).
    len: usize,
    /// Whether the key is the target's first `shared` bytes and its suffix
    /// (it shares no more with the key before it than that key shares
    /// with the target), so that [`Against::rebuild`] can rebuild it.
    rebuildable: bool,
}

impl<'t> Against<'t> {
    /// A scan towards the internal key `target`, before its first entry;
    /// `None` for a target shorter than a trailer (no tree key to compare).
    pub fn new(target: &'t [u8]) -> Option<Against<'t>> {
        (target.len() >= TRAILER_LEN).then_some(Against {
            target,
            common: 0,
            next_byte: None,
            len: 0,
            rebuildable: false,
        })
    }

    /// Takes in the next key, the last one's first `shared` bytes and
    /// `suffix`, and returns its order against the target by
    /// [`crate::key::compare`]; `None` when that cannot be told without
    /// the last key's bytes (keys sharing trailer bytes, or shorter than a
    /// trailer), or the entry does not fit the last key (more shared
    /// bytes than it has). The scan is then done again the full way.
    #[inline]
    pub fn next(&mut self, shared: usize, suffix: &[u8]) -> Option<Ordering> {
        if shared > self.len {
            return None;
        }
        let len = shared + suffix.len();
        let target = self.target;
        self.rebuildable = shared <= self.common;
        if self.rebuildable {
            // The key starts with the target's first `shared` bytes.
            let rest = target.get(shared..).unwrap_or(&[]);
            let same = common_prefix(suffix, rest);
            self.common = shared + same;
            self.next_byte = suffix.get(same).copied();
        }
        // Otherwise the key has the last key's bytes up to and past
        // `common`, where that key parted from the target: the same
        // `common` and `next_byte`.
        self.len = len;
        let key_tree = len.checked_sub(TRAILER_LEN)?;
        let target_tree = target.len() - TRAILER_LEN;
        let common = self.common;
        Some(if common < key_tree && common < target_tree {
            // The tree keys differ at `common`.
            self.next_byte?.cmp(target.get(common)?)
        } else if key_tree == target_tree {
            // The same tree key: the newer entry (the larger trailer) first.
            let at = key_tree.checked_sub(shared)?;
            let trailer = u64::from_le_bytes(suffix.get(at..)?.try_into().ok()?);
            let wanted = u64::from_le_bytes(target.get(target_tree..)?.try_into().ok()?);
            wanted.cmp(&trailer)
        } else if key_tree < target_tree {
            // The key's tree key is the start of the target's.
            Ordering::Less
        } else {
            // The target's tree key is the start of the key's.
            Ordering::Greater
        })
    }

    /// Rebuilds into `key` the key last taken in, given its `shared` and
    /// `suffix` again; false if it cannot be rebuilt from the target (see
    /// `rebuildable`).
    pub fn rebuild(&self, shared: usize, suffix: &[u8], key: &mut KeyBuf) -> bool {
        let Some(head) = self.target.get(..shared).filter(|_| self.rebuildable) else {
            return false;
        };
        key.assign(head, suffix);
        true
    }
}
