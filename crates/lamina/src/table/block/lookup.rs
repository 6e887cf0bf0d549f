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

use super::{Block, KeyBuf};
use crate::error::Result;
use crate::key;
use crate::key_numbers::KeyNumbers;
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
        p: &KeyNumbers<u128>,
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
}
