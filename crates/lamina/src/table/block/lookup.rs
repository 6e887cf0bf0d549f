//! Lookups in a block without an iterator, scanning from the restart point
//! the restart search picks: the point lookup of a data block and the index
//! lookup of an index block (the entry found and the key before it).
//!
//! A point lookup enters through [`Block::seek_point`]: the hash index,
//! then the restart search ([`Block::hash_seek`], [`Block::seek_in_place`],
//! public so that tests check each). [`Block::next_in_place`] is a
//! sequential reader's shortcut: the entry after the one it found last.
//!
//! Layout: docs/format.md#block.

use super::super::against::Against;
use super::search::RestartPrefixes;
use super::{Block, KeyBuf};
use crate::error::Result;
use crate::key;
use std::cmp::Ordering;

/// What a point lookup in a data block ([`Block::seek_point`]) found.
#[derive(Debug, PartialEq, Eq)]
pub enum PointHit {
    /// The first entry whose key is `>= target`: its value's byte range in
    /// [`Block::data`] (its key is rebuilt into the caller's [`KeyBuf`]).
    Found((usize, usize)),
    /// The hash index says the block holds no entry of the tree key.
    NotInBlock,
    /// Every key in the block is smaller than the target.
    AllSmaller,
}

/// The entry an index lookup ([`Block::seek_index`]) found: the first whose
/// key is `>= target`.
#[derive(Debug)]
pub struct IndexHit<'a> {
    /// Its value's byte range in [`Block::data`].
    pub value: (usize, usize),
    /// Its key.
    pub key: &'a [u8],
    /// The key of the entry before it, empty when it is the block's first
    /// (for an index block: every key up to the one found belongs to the
    /// block the entry names); `None` when not known, or not asked for.
    pub before: Option<&'a [u8]>,
    /// Its position among the block's entries, when every entry is a
    /// restart point.
    pub ordinal: Option<usize>,
}

/// Cache lines fetched from a restart interval's start: at least the
/// fewest, and as many as the block's intervals span on average (a scan
/// reads on until its key, in the interval's last entry as often as in its
/// first), up to the most.
const INTERVAL_LINES: (usize, usize) = (4, 16);

impl Block {
    /// Point lookup in a data block, for tree key `tk` of hash `h`
    /// (`xxh3_64(tk)`) and internal key `target` of `tk`: through the hash
    /// index where it answers ([`Block::hash_seek`]), else through the
    /// restart search ([`Block::seek_in_place`]). The key found is rebuilt
    /// into `key`. Corruption if an entry on the way is malformed.
    #[inline]
    pub fn seek_point(
        &self,
        tk: &[u8],
        h: u64,
        target: &[u8],
        key: &mut KeyBuf,
    ) -> Result<PointHit> {
        Ok(match self.hash_seek(tk, h, target, key)? {
            Some(Some(v)) => PointHit::Found(v),
            Some(None) => PointHit::NotInBlock,
            None => match self.seek_in_place(target, key)? {
                Some(v) => PointHit::Found(v),
                None => PointHit::AllSmaller,
            },
        })
    }

    /// Point lookup without an iterator: finds the first entry whose key is
    /// `>= target`, rebuilds its key into `key` and returns its value's byte
    /// range in [`Block::data`]; `None` if every key is smaller. Corruption
    /// if an entry on the way is malformed.
    pub fn seek_in_place(&self, target: &[u8], key: &mut KeyBuf) -> Result<Option<(usize, usize)>> {
        let from = self.seek_restart(target)?;
        let pos = self.restart_point(from);
        self.prefetch_lines(pos);
        self.scan_from(pos, target, key)
    }

    /// The entry at byte `pos`, if it is the first whose internal key is
    /// `>= target`: its key rebuilt into `key` and its value's byte range;
    /// `None` if its key is smaller, or the block ends at `pos`.
    /// REQUIRES: `key` holds the key of the entry that ends at `pos`, and
    /// that key sorts before `target` (so the entry at `pos`, its
    /// successor, is the first `>= target` if it is `>= target` at all).
    /// Corruption if the entry is malformed.
    pub fn next_in_place(
        &self,
        pos: usize,
        target: &[u8],
        key: &mut KeyBuf,
    ) -> Result<Option<(usize, usize)>> {
        if pos >= self.restarts_offset {
            return Ok(None);
        }
        let Some(e) = self.entry(pos).filter(|e| e.shared <= key.len()) else {
            return Err(self.corruption(format!(
                "block entry at byte {pos} is truncated or malformed"
            )));
        };
        key.splice(e.shared, e.suffix);
        Ok((key::compare(key, target) != Ordering::Less).then_some(e.value))
    }

    /// Index lookup: the first entry whose key is `>= target`, with the key
    /// before it when `want_before` (always, for a block whose entries are
    /// not all restart points: its scan passes that key anyway). A block
    /// built with [`Block::with_restart_prefixes`] whose every entry is a
    /// restart point (an index block as lamina writes them) has the entry
    /// and the key before it read in place, not rebuilt, and its ordinal
    /// known; other blocks rebuild them into `key` and `before`. `None` if
    /// every key is smaller. Corruption if an entry on the way is malformed.
    pub fn seek_index<'a>(
        &'a self,
        target: &[u8],
        want_before: bool,
        key: &'a mut KeyBuf,
        before: &'a mut KeyBuf,
    ) -> Result<Option<IndexHit<'a>>> {
        if let Some(p) = self.prefixes.get().filter(|_| self.every_entry_restarts) {
            return self.seek_restart_entry(p, target, want_before);
        }
        let from = self.seek_restart(target)?;
        let found = self.scan(self.restart_point(from), target, key, Some(before))?;
        Ok(found.map(|(value, known)| IndexHit {
            value,
            key: &key[..],
            before: known.then_some(&before[..]),
            ordinal: None,
        }))
    }

    /// [`Block::seek_index`] for a block whose every entry is a restart
    /// point, through its restart prefixes `p`: the entry found is the first
    /// restart point not before `target`.
    fn seek_restart_entry(
        &self,
        p: &RestartPrefixes,
        target: &[u8],
        want_before: bool,
    ) -> Result<Option<IndexHit<'_>>> {
        let ordinal = self.first_restart_not_before(p, target)?;
        if ordinal >= self.num_restarts {
            return Ok(None);
        }
        let pos = self.restart_point(ordinal);
        let Some(e) = self.entry(pos).filter(|e| e.shared == 0) else {
            return Err(self.corruption(format!(
                "restart entry at byte {pos} is malformed or shares bytes with a previous key"
            )));
        };
        let before = if want_before {
            Some(match ordinal.checked_sub(1) {
                Some(b) => self.restart_key(b)?,
                None => &[],
            })
        } else {
            None
        };
        Ok(Some(IndexHit {
            value: e.value,
            key: e.suffix,
            before,
            ordinal: Some(ordinal),
        }))
    }

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
    fn scan(
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
