//! The scan of a restart interval: entries decoded from a restart point
//! on, until the first key not before a target.
//!
//! Layout: docs/format.md#block.

use super::super::against::Against;
use super::{Block, KeyBuf};
use crate::error::Result;
use crate::key;
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
