//! A decoded block: the [`Block`] type and the checks made when it is
//! built; the modules below read it.
//!
//! - `decode`: entries and restart keys, decoded in place, and keys rebuilt
//!   from them ([`KeyBuf`]);
//! - `search`: the restart search, which restart point a lookup scans from;
//! - `scan`: the scan of a restart interval for a target, telling each
//!   key's order against it from the bytes it shares;
//! - `lookup`: the point lookup of a data block and the index lookup of an
//!   index block (restart search, then scan);
//! - `hash_index`: the data block's hash index (lookup, prefetch, check);
//! - `iter`: [`BlockIter`], the cursor over a block's entries.
//!
//! Layout: docs/format.md#block.

mod decode;
mod hash_index;
mod iter;
mod lookup;
mod scan;
mod search;
#[cfg(test)]
mod tests;

use super::block_builder::BUCKET_COLLISION;
use super::slots::{SlotMark, Slotted};
use crate::coding::get_u32;
use crate::error::{Error, Result};
use crate::key_numbers::KeyNumbers;
use bytes::Bytes;
pub use decode::KeyBuf;
pub use iter::BlockIter;
pub use lookup::PointHit;
use std::path::Path;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, OnceLock};

/// The uncompressed bytes of one data or index block, with its restart
/// array checked.
///
/// Construction validates the restart array (present, starting at 0,
/// strictly ascending, inside the block); entries are decoded lazily by a
/// [`BlockIter`], which reports a malformed entry as corruption. A `Block`
/// is immutable and shared between threads through `Arc`.
#[derive(Debug)]
pub struct Block {
    /// Owned, or in place in the table's mapping (see [`Block::in_place`]).
    data: Bytes,
    /// Bytes of memory `data` holds of its own (0 in place).
    owned: usize,
    /// Where the restart array starts; entries occupy `data[..restarts_offset]`.
    restarts_offset: usize,
    num_restarts: usize,
    /// The table the block came from and the offset of its stored bytes, to
    /// name in errors.
    file: Arc<Path>,
    offset: u64,
    /// Where the hash index's buckets start, and how many there are (0:
    /// no hash index).
    buckets: (usize, usize),
    /// Numbers standing for the restart keys (`crate::key_numbers`):
    /// built with the block for index blocks, and for a data block once
    /// `search::PREFIXES_AFTER` point lookups have binary-searched it.
    prefixes: OnceLock<KeyNumbers<u128>>,
    /// Binary searches of the restart keys so far, while `prefixes` is unset.
    searches: AtomicU8,
    /// Whether every entry is a restart point, as in index blocks (checked
    /// by [`Block::with_restart_prefixes`]; false for other blocks).
    every_entry_restarts: bool,
    /// The table slot a point lookup put the block in, if any, and whether
    /// the block cache let it go (docs/design.md, "Block slots").
    slot: SlotMark<Block>,
}

impl Slotted for Block {
    fn slot_mark(&self) -> &SlotMark<Block> {
        &self.slot
    }
}

impl Block {
    /// Checks the restart array of `data`, the uncompressed bytes of the
    /// block stored at `offset` of `file` (both only name the block in
    /// errors). Corruption if the restart array is malformed.
    pub fn new(data: Vec<u8>, file: Arc<Path>, offset: u64) -> Result<Block> {
        let owned = data.capacity();
        Block::parse(Bytes::from(data), owned, file, offset, false)
    }

    /// Like [`Block::new`], for a data block (not an index block), which ends
    /// with a hash index (docs/format.md#data-block-hash-index); corruption
    /// also if the hash index is malformed.
    pub fn with_hash_index(data: Vec<u8>, file: Arc<Path>, offset: u64) -> Result<Block> {
        let owned = data.capacity();
        Block::parse(Bytes::from(data), owned, file, offset, true)
    }

    /// Like [`Block::with_hash_index`], over bytes that stay where they are
    /// (a data block stored uncompressed, in the table's mapping), held by
    /// `data`'s owner, which keeps them alive.
    pub fn in_place(data: Bytes, file: Arc<Path>, offset: u64) -> Result<Block> {
        Block::parse(data, 0, file, offset, true)
    }

    fn parse(
        data: Bytes,
        owned: usize,
        file: Arc<Path>,
        offset: u64,
        hashed: bool,
    ) -> Result<Block> {
        let mut block = Block {
            data,
            owned,
            restarts_offset: 0,
            num_restarts: 0,
            file,
            offset,
            buckets: (0, 0),
            prefixes: OnceLock::new(),
            searches: AtomicU8::new(0),
            every_entry_restarts: false,
            slot: SlotMark::default(),
        };
        let full_len = block.data.len();
        let len = if hashed {
            block.find_buckets()?
        } else {
            full_len
        };
        let count = full_len
            .checked_sub(4)
            .and_then(|p| get_u32(&block.data, p))
            .ok_or_else(|| {
                block.corruption(format!("block of {len} bytes has no restart count"))
            })?;
        let num = count as usize;
        let restarts_offset = num
            .checked_mul(4)
            .and_then(|n| len.checked_sub(n)?.checked_sub(4))
            .ok_or_else(|| {
                block.corruption(format!(
                    "{num} restart points do not fit a {len}-byte block"
                ))
            })?;
        if num == 0 || restarts_offset == 0 {
            return Err(block.corruption("block holds no entry"));
        }
        block.restarts_offset = restarts_offset;
        block.num_restarts = num;
        block.check_restart_points()?;
        block.check_buckets()?;
        Ok(block)
    }

    /// Checks that the restart points start at 0 and ascend strictly inside
    /// the entries (every block read from a file: the words are read in
    /// one pass, without a branch on each).
    fn check_restart_points(&self) -> Result<()> {
        let words = self
            .data
            .get(self.restarts_offset..self.restarts_offset + 4 * self.num_restarts)
            .unwrap_or(&[]);
        let mut bad = words.len() != 4 * self.num_restarts;
        // `prev + 1` from `u64::MAX`, before the first, is 0: the first is 0.
        let mut prev = u64::MAX;
        let (mut first, end) = (true, self.restarts_offset as u64);
        for w in words.chunks_exact(4) {
            let r = <[u8; 4]>::try_from(w).map_or(u64::MAX, |b| u64::from(u32::from_le_bytes(b)));
            bad |= if first { r != 0 } else { r <= prev || r >= end };
            first = false;
            prev = r;
        }
        if !bad {
            return Ok(());
        }
        let mut prev = None;
        for i in 0..self.num_restarts {
            let r = self.restart_point(i);
            let ok = match prev {
                None => r == 0,
                Some(p) => r > p && r < self.restarts_offset,
            };
            if !ok {
                return Err(self.corruption(format!(
                    "restart point {i} at byte {r} is out of order or outside the entries"
                )));
            }
            prev = Some(r);
        }
        Ok(())
    }

    /// Finds the buckets at the end of the block (their count in the two
    /// bytes before the restart count) and returns where the restart count
    /// would end without them, to read the restart array from.
    fn find_buckets(&mut self) -> Result<usize> {
        let len = self.data.len();
        let b = len
            .checked_sub(6)
            .and_then(|p| self.data.get(p..p + 2)?.try_into().ok())
            .map(|b| usize::from(u16::from_le_bytes(b)))
            .ok_or_else(|| self.corruption(format!("block of {len} bytes has no hash index")))?;
        let start = (len - 6).checked_sub(b).ok_or_else(|| {
            self.corruption(format!("{b} hash buckets do not fit a {len}-byte block"))
        })?;
        self.buckets = (start, b);
        // The restart array and its count end where the buckets start.
        Ok(start + 4)
    }

    /// Checks that every hash bucket names a restart point of the block, a
    /// collision, or none.
    fn check_buckets(&self) -> Result<()> {
        let num = self.num_restarts;
        let (start, b) = self.buckets;
        let buckets = self.data.get(start..start + b).unwrap_or(&[]);
        // Checked in one pass without a branch on each bucket (every block
        // read from a file is checked), then searched for the one to name.
        // A bucket names a restart point below `num`, or is a collision or
        // empty (254, 255): with `num` of 255 or more, every value is right.
        let limit = u8::try_from(num).unwrap_or(u8::MAX);
        let wrong = |v: u8| v >= limit && v < BUCKET_COLLISION;
        if !buckets.iter().fold(false, |any, &v| any | wrong(v)) {
            return Ok(());
        }
        if let Some(i) = buckets.iter().position(|&v| wrong(v)) {
            let v = buckets.get(i).copied().unwrap_or(0);
            return Err(self.corruption(format!(
                "hash bucket {i} names restart point {v} of a block with {num}"
            )));
        }
        Ok(())
    }

    /// Where restart point `i` starts; `usize::MAX` past the array.
    fn restart_point(&self, i: usize) -> usize {
        let pos = self.restarts_offset.saturating_add(i.saturating_mul(4));
        get_u32(&self.data, pos).map_or(usize::MAX, |r| r as usize)
    }

    /// Corruption of this block, for `reason`.
    fn corruption(&self, reason: impl Into<String>) -> Error {
        Error::corruption(&*self.file, self.offset, reason)
    }

    /// The uncompressed bytes of the block.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Whether the block's bytes are read in place ([`Block::in_place`]):
    /// such a block is never cached, nor kept by anything that outlives
    /// the read that made it.
    pub fn is_in_place(&self) -> bool {
        self.owned == 0
    }

    /// Offset in the table of the block's stored bytes.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes of memory the block holds, as charged to the block cache:
    /// with the restart keys' numbers it may come to keep (their shared
    /// head at most a key's length, counted as 16 bytes).
    pub fn charge(&self) -> usize {
        self.owned
            + std::mem::size_of::<Block>()
            + (self.num_restarts + 1 + crate::key_numbers::top_len(self.num_restarts))
                * std::mem::size_of::<u128>()
    }

    /// The bytes `range` of the block (a value range from a lookup); empty
    /// if out of bounds.
    pub fn slice(&self, range: (usize, usize)) -> &[u8] {
        self.data.get(range.0..range.1).unwrap_or(&[])
    }
}
