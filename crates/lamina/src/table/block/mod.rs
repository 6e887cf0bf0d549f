//! A decoded block and the iterator over its entries.
//!
//! Layout: docs/format.md#block.

use super::against::Against;
use super::block_builder::{bucket_of, common_prefix, BUCKET_COLLISION, BUCKET_EMPTY};
pub use super::key_buf::KeyBuf;
use crate::coding::{get_u32, Decoder};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key;
use std::cmp::Ordering;
use std::path::Path;
use super::slots::{BlockSlots, Home};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering as AtomicOrdering};
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
    data: Vec<u8>,
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
    /// Numbers standing for the restart keys (see [`RestartPrefixes`]):
    /// built with the block for index blocks, and for a data block once
    /// [`PREFIXES_AFTER`] point lookups have binary-searched it.
    prefixes: OnceLock<RestartPrefixes>,
    /// Binary searches of the restart keys so far, while `prefixes` is unset.
    searches: AtomicU8,
    /// Whether every entry is a restart point, as in index blocks (checked
    /// by [`Block::with_restart_prefixes`]; false for other blocks).
    every_entry_restarts: bool,
    /// The table slot a point lookup put the block in, if any
    /// (docs/design.md, "Block slots").
    home: OnceLock<Home>,
    /// Set when the block cache lets the block go.
    evicted: AtomicBool,
}

/// A binary search of the restart keys that has to read each key it
/// compares (one cache miss apiece) costs more than building
/// [`RestartPrefixes`] once this many lookups have done it.
const PREFIXES_AFTER: u8 = 8;

/// A number for every restart key: the first 16 bytes ([`key::tree_prefix`])
/// of its tree key after the bytes all of them share, so that a binary
/// search compares numbers, side by side in memory, and reads only the
/// keys whose number equals the target's.
#[derive(Debug)]
struct RestartPrefixes {
    /// The bytes every restart key's tree key starts with.
    head: Vec<u8>,
    prefixes: Vec<u128>,
}

/// How many of `xs`, ascending, are `< t` (`xs.partition_point(|&x| x <
/// t)`), with no branch on a comparison: every step of a search for a
/// random key goes either way as often, so a branch on it would be
/// mispredicted half the time, a pipeline flush a step. The steps are
/// written out rather than looped over, as LLVM's x86 backend turns
/// conditional moves in a loop back into branches; past sixteen steps
/// (arrays of more than 65,536) the search goes on in a loop.
fn count_below(xs: &[u128], t: u128) -> usize {
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

/// What [`Block::seek_restart_entry`] found.
pub enum RestartSeek<'a> {
    /// The first entry whose key is `>= target`.
    Found(RestartEntry<'a>),
    /// Every key is smaller than the target.
    AllSmaller,
    /// Not every entry of the block is a restart point: use
    /// [`Block::seek_with_before`].
    NotAllRestarts,
}

/// An entry of a block whose every entry is a restart point, read in place.
pub struct RestartEntry<'a> {
    /// Its position among the block's entries, from 0.
    pub ordinal: usize,
    /// Its key.
    pub key: &'a [u8],
    /// Its value's byte range in [`Block::data`].
    pub value: (usize, usize),
}

/// Restart prefixes equal to a target's that are counted one by one before
/// a binary search counts the rest.
const NEAR_TIES: usize = 8;

/// Cache lines fetched from a restart interval's start: at least the
/// fewest, and as many as the block's intervals span on average (a scan
/// reads on until its key, in the interval's last entry as often as in its
/// first), up to the most.
const INTERVAL_LINES: (usize, usize) = (4, 16);

/// One entry decoded in place.
struct Entry<'a> {
    shared: usize,
    suffix: &'a [u8],
    value: (usize, usize),
    next: usize,
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
    /// Checks the restart array of `data`, the uncompressed bytes of the
    /// block stored at `offset` of `file` (both only name the block in
    /// errors). Corruption if the restart array is malformed.
    pub fn new(data: Vec<u8>, file: Arc<Path>, offset: u64) -> Result<Block> {
        Block::parse(data, file, offset, false)
    }

    /// Like [`Block::new`], for a data block (not an index block), which ends
    /// with a hash index (docs/format.md#data-block-hash-index); corruption
    /// also if the hash index is malformed.
    pub fn with_hash_index(data: Vec<u8>, file: Arc<Path>, offset: u64) -> Result<Block> {
        Block::parse(data, file, offset, true)
    }

    fn parse(data: Vec<u8>, file: Arc<Path>, offset: u64, hashed: bool) -> Result<Block> {
        let mut block = Block {
            data,
            restarts_offset: 0,
            num_restarts: 0,
            file,
            offset,
            buckets: (0, 0),
            prefixes: OnceLock::new(),
            searches: AtomicU8::new(0),
            every_entry_restarts: false,
            home: OnceLock::new(),
            evicted: AtomicBool::new(false),
        };
        let full_len = block.data.len();
        let mut len = full_len;
        if hashed {
            let b = len
                .checked_sub(6)
                .and_then(|p| block.data.get(p..p + 2)?.try_into().ok())
                .map(|b| usize::from(u16::from_le_bytes(b)))
                .ok_or_else(|| {
                    block.corruption(format!("block of {len} bytes has no hash index"))
                })?;
            let start = (len - 6).checked_sub(b).ok_or_else(|| {
                block.corruption(format!("{b} hash buckets do not fit a {len}-byte block"))
            })?;
            block.buckets = (start, b);
            // The restart array and its count end where the buckets start.
            len = start + 4;
        }
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
        let mut prev = None;
        for i in 0..num {
            let r = block.restart_point(i);
            let ok = match prev {
                None => r == 0,
                Some(p) => r > p && r < restarts_offset,
            };
            if !ok {
                return Err(block.corruption(format!(
                    "restart point {i} at byte {r} is out of order or outside the entries"
                )));
            }
            prev = Some(r);
        }
        let (start, b) = block.buckets;
        let buckets = block.data.get(start..start + b).unwrap_or(&[]);
        if let Some(i) = buckets
            .iter()
            .position(|&v| usize::from(v) >= num && v < BUCKET_COLLISION)
        {
            let v = buckets.get(i).copied().unwrap_or(0);
            return Err(block.corruption(format!(
                "hash bucket {i} names restart point {v} of a block with {num}"
            )));
        }
        Ok(block)
    }

    /// An iterator over this block, positioned nowhere.
    pub fn iter(self: &Arc<Self>) -> BlockIter {
        BlockIter::new(Arc::clone(self))
    }

    /// The uncompressed bytes of the block.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Offset in the table of the block's stored bytes.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes of memory the block holds, as charged to the block cache:
    /// with the [`RestartPrefixes`] it may come to keep (its shared head
    /// at most a key's length, counted as 16 bytes).
    pub fn charge(&self) -> usize {
        self.data.capacity()
            + std::mem::size_of::<Block>()
            + (self.num_restarts + 1) * std::mem::size_of::<u128>()
    }

    /// Records the slot the block is put in; false if it has one already.
    pub(super) fn set_home(&self, home: Home) -> bool {
        self.home.set(home).is_ok()
    }

    /// Whether the block's slot is slot `i` of `slots`.
    pub(super) fn is_home(&self, slots: &Arc<BlockSlots>, i: usize) -> bool {
        self.home.get().is_some_and(|h| h.is(slots, i))
    }

    /// The slot the block was put in, if any.
    pub(super) fn home(&self) -> Option<&Home> {
        self.home.get()
    }

    /// Marks the block let go by the block cache.
    pub(super) fn mark_evicted(&self) {
        self.evicted.store(true, AtomicOrdering::SeqCst);
    }

    /// Whether the block cache has let the block go.
    pub(super) fn is_evicted(&self) -> bool {
        self.evicted.load(AtomicOrdering::SeqCst)
    }

    fn restart_point(&self, i: usize) -> usize {
        let pos = self.restarts_offset.saturating_add(i.saturating_mul(4));
        get_u32(&self.data, pos).map_or(usize::MAX, |r| r as usize)
    }

    fn corruption(&self, reason: impl Into<String>) -> Error {
        Error::corruption(&*self.file, self.offset, reason)
    }

    /// Decodes the entry at byte `pos`; `None` if it is malformed or runs
    /// into the restart array.
    fn entry(&self, pos: usize) -> Option<Entry<'_>> {
        let rest = self.data.get(pos..self.restarts_offset)?;
        // Fast path: the three lengths fit in one byte each (nearly always).
        if let [shared, unshared, value_len, ..] = *rest {
            if (shared | unshared | value_len) < 0x80 {
                let key_start = 3usize;
                let value_start = key_start + usize::from(unshared);
                let end = value_start + usize::from(value_len);
                let suffix = rest.get(key_start..value_start)?;
                if end > rest.len() {
                    return None;
                }
                return Some(Entry {
                    shared: usize::from(shared),
                    suffix,
                    value: (pos + value_start, pos + end),
                    next: pos + end,
                });
            }
        }
        let mut d = Decoder::new(rest);
        let shared = d.varint32()? as usize;
        let unshared = d.varint32()? as usize;
        let value_len = d.varint32()? as usize;
        let suffix = d.bytes(unshared)?;
        let value_start = pos + d.position();
        d.bytes(value_len)?;
        let next = pos + d.position();
        Some(Entry {
            shared,
            suffix,
            value: (value_start, next),
            next,
        })
    }
}

impl Block {
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

    /// [`Block::seek_in_place`], also rebuilding into `before` the key of
    /// the entry before the one found. The flag returned says whether
    /// `before` is known: it holds that key, or is empty when the entry
    /// found is the block's first (for an index block: every key up to the
    /// one found belongs to the block the entry names).
    pub fn seek_with_before(
        &self,
        target: &[u8],
        key: &mut KeyBuf,
        before: &mut KeyBuf,
    ) -> Result<Option<((usize, usize), bool)>> {
        let from = self.seek_restart(target)?;
        self.scan(self.restart_point(from), target, key, Some(before))
    }

    /// The restart point to scan from for the first key `>= target`: the
    /// last whose key is `< target`, or the first.
    fn seek_restart(&self, target: &[u8]) -> Result<usize> {
        if let Some(p) = self.prefixes.get() {
            return self.seek_restart_by_prefix(p, target);
        }
        if self.searches.fetch_add(1, AtomicOrdering::Relaxed) >= PREFIXES_AFTER {
            let p = self.restart_prefixes()?;
            return self.seek_restart_by_prefix(self.prefixes.get_or_init(|| p), target);
        }
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
    /// [`RestartPrefixes`]), so that [`Block::seek_in_place`] compares
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

    /// [`Block::seek_with_before`] for a block built with
    /// [`Block::with_restart_prefixes`] whose every entry is a restart
    /// point (an index block as lamina writes them): the entry found is the
    /// first restart point not before `target`, so its key (and the key
    /// before it: [`Block::key_before_restart_entry`]) are read in place,
    /// not rebuilt, and its ordinal is known.
    /// Corruption if a restart entry on the way is malformed.
    pub fn seek_restart_entry(&self, target: &[u8]) -> Result<RestartSeek<'_>> {
        let Some(p) = self.prefixes.get().filter(|_| self.every_entry_restarts) else {
            return Ok(RestartSeek::NotAllRestarts);
        };
        let ordinal = self.first_restart_not_before(p, target)?;
        if ordinal >= self.num_restarts {
            return Ok(RestartSeek::AllSmaller);
        }
        let pos = self.restart_point(ordinal);
        let Some(e) = self.entry(pos).filter(|e| e.shared == 0) else {
            return Err(self.corruption(format!(
                "restart entry at byte {pos} is malformed or shares bytes with a previous key"
            )));
        };
        Ok(RestartSeek::Found(RestartEntry {
            ordinal,
            key: e.suffix,
            value: e.value,
        }))
    }

    /// The key of the entry before the one of ordinal `ordinal` found by
    /// [`Block::seek_restart_entry`]; empty for the block's first.
    /// Corruption if that entry is malformed.
    pub fn key_before_restart_entry(&self, ordinal: usize) -> Result<&[u8]> {
        match ordinal.checked_sub(1) {
            Some(b) => self.restart_key(b),
            None => Ok(&[]),
        }
    }

    /// Builds the block's [`RestartPrefixes`], reading every restart key.
    fn restart_prefixes(&self) -> Result<RestartPrefixes> {
        let Some(last) = self.num_restarts.checked_sub(1) else {
            return Ok(RestartPrefixes {
                head: Vec::new(),
                prefixes: Vec::new(),
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
        Ok(RestartPrefixes { head, prefixes })
    }

    /// The key of restart point `i`, read in place.
    fn restart_key(&self, i: usize) -> Result<&[u8]> {
        let pos = self.restart_point(i);
        match self.entry(pos) {
            Some(e) if e.shared == 0 => Ok(e.suffix),
            _ => Err(self.corruption(format!(
                "restart entry at byte {pos} is malformed or shares bytes with a previous key"
            ))),
        }
    }

    /// [`Block::seek_restart`] through the restart keys' prefixes.
    fn seek_restart_by_prefix(&self, p: &RestartPrefixes, target: &[u8]) -> Result<usize> {
        Ok(self.first_restart_not_before(p, target)?.saturating_sub(1))
    }

    /// The first restart point whose key is `>= target` (the number of
    /// restart points if none is), found through the restart keys'
    /// prefixes: only restart keys whose prefix equals the target's are
    /// compared in full.
    fn first_restart_not_before(&self, p: &RestartPrefixes, target: &[u8]) -> Result<usize> {
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
                let lo = count_below(&p.prefixes, tp);
                // Restart keys that share the target's prefix: nearly always
                // none or one, beside `lo` in memory (counted, not searched,
                // unless there are many).
                let ties = p.prefixes.get(lo..).unwrap_or(&[]);
                let near = ties.iter().take(NEAR_TIES).take_while(|&&x| x == tp).count();
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

    /// Point lookup through the block's hash index, for tree key `tk` of
    /// hash `h` (`xxh3_64(tk)`) and internal key `target` of `tk`:
    /// `Ok(None)` when the block has no usable hash entry (no index, or a
    /// collision: use [`Block::seek_in_place`]); `Ok(Some(None))` when the
    /// block holds no entry of `tk`; otherwise as `seek_in_place`, scanning
    /// from the restart point the bucket names. A bucket naming one whose
    /// key sorts after `tk` also gives `Ok(None)`.
    /// Layout: docs/format.md#data-block-hash-index.
    #[allow(clippy::type_complexity)]
    pub fn hash_seek(
        &self,
        tk: &[u8],
        h: u64,
        target: &[u8],
        key: &mut KeyBuf,
    ) -> Result<Option<Option<(usize, usize)>>> {
        let (start, b) = self.buckets;
        if b == 0 {
            return Ok(None);
        }
        let restart = match self.data.get(start + bucket_of(h, b)).copied() {
            Some(BUCKET_EMPTY) => return Ok(Some(None)),
            Some(r) if r < BUCKET_COLLISION => usize::from(r),
            _ => return Ok(None),
        };
        self.prefetch_interval(restart);
        let pos = self.restart_point(restart);
        let Some(first) = self.entry(pos).filter(|e| e.shared == 0) else {
            return Err(self.corruption(format!(
                "restart entry at byte {pos} is malformed or shares bytes"
            )));
        };
        match key::tree_key_of(first.suffix).cmp(tk) {
            // `tk` is absent and shares the bucket of a later key, or the
            // bucket is wrong: the binary search answers either way.
            Ordering::Greater => Ok(None),
            // The bucket names the interval of `tk`'s first entry (`Equal`:
            // this restart point's): no entry of `tk` lies before it.
            Ordering::Less | Ordering::Equal => self.scan_from(pos, target, key).map(Some),
        }
    }

    /// Asks the CPU for the hash bucket [`Block::hash_seek`] reads first
    /// for `h`, so that its miss overlaps the work before that call.
    pub fn prefetch_bucket(&self, h: u64) {
        let (start, b) = self.buckets;
        if b > 0 {
            if let Some(byte) = self.data.get(start + bucket_of(h, b)) {
                crate::prefetch::prefetch(byte);
            }
        }
    }

    /// Asks the CPU for what a search of restart interval `r` reads: its
    /// restart point's word and, at once rather than after that word
    /// arrives, the interval's lines were the block's intervals all the
    /// same length (as a block of same-sized entries has them). A wrong
    /// guess costs fetches, never a wrong read.
    fn prefetch_interval(&self, r: usize) {
        let base = self.data.as_ptr();
        crate::prefetch::prefetch(base.wrapping_add(self.restarts_offset + 4 * r));
        let stride = self.restarts_offset / self.num_restarts.max(1);
        self.prefetch_lines(r * stride);
    }

    /// Asks the CPU for the lines of the restart interval from byte `at`
    /// (see [`INTERVAL_LINES`]), at once rather than one after the other as
    /// a scan reaches them: the value found is copied from them next.
    fn prefetch_lines(&self, at: usize) {
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

    /// Checks the hash index against the entries: each bucket holds exactly
    /// what the builder would have put there. Corruption otherwise.
    pub fn verify_hash_index(self: &Arc<Self>) -> Result<()> {
        let (start, b) = self.buckets;
        if b == 0 {
            return Ok(());
        }
        let mut expected = vec![BUCKET_EMPTY; b];
        let mut it = self.iter();
        let mut last_tk: Option<Vec<u8>> = None;
        it.seek_to_first();
        while it.valid() {
            let tk = key::tree_key_of(it.key());
            if last_tk.as_deref() != Some(tk) {
                let restart = u8::try_from(it.restart_index).unwrap_or(BUCKET_COLLISION);
                if let Some(slot) = expected.get_mut(bucket_of(xxhash_rust::xxh3::xxh3_64(tk), b)) {
                    *slot = match *slot {
                        BUCKET_EMPTY => restart,
                        same if same == restart => restart,
                        _ => BUCKET_COLLISION,
                    };
                }
                last_tk = Some(tk.to_vec());
            }
            it.next();
        }
        it.status()?;
        if self.data.get(start..start + b) != Some(expected.as_slice()) {
            return Err(self.corruption("hash index does not match the block's keys"));
        }
        Ok(())
    }

    /// Scans entries from the restart point at byte `pos` for the first key
    /// `>= target` (see [`Block::seek_in_place`]).
    fn scan_from(
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
    /// entry before the one found; the flag as in
    /// [`Block::seek_with_before`].
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

    /// The entry at byte `pos`, if it is the first whose internal key is
    /// `>= target`: its key rebuilt into `key` and its value's byte range;
    /// `None` if its key is smaller, or the block ends at `pos`.
    /// REQUIRES: `key` holds the key of the entry that ends at `pos`, and
    /// that key sorts before `target` (so the entry at `pos`, its
    /// successor, is the first `>= target` if it is `>= target` at all).
    /// Corruption if the entry is malformed.
    pub fn next_in_place(&self, pos: usize, target: &[u8], key: &mut KeyBuf) -> Result<Option<(usize, usize)>> {
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

    /// The bytes `range` of the block (a value range from
    /// [`Block::seek_in_place`]); empty if out of bounds.
    pub fn slice(&self, range: (usize, usize)) -> &[u8] {
        self.data.get(range.0..range.1).unwrap_or(&[])
    }
}

/// A cursor over the entries of one block, ordered by `key::compare`.
///
/// Seeks binary-search the restart points and then scan; `prev` re-scans
/// from the restart point before the current entry. A malformed entry makes
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
        }
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

    /// The key of restart point `index`, read in place.
    fn restart_key(&self, index: usize) -> std::result::Result<&[u8], String> {
        let pos = self.block.restart_point(index);
        match self.block.entry(pos) {
            Some(e) if e.shared == 0 => Ok(e.suffix),
            Some(_) => Err(format!(
                "restart entry at byte {pos} shares bytes with a previous key"
            )),
            None => Err(format!(
                "block entry at byte {pos} is truncated or malformed"
            )),
        }
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
        self.seek_to_restart_point(self.block.num_restarts.saturating_sub(1));
        while self.parse_next() && self.next < self.block.restarts_offset {}
    }

    fn seek(&mut self, target: &[u8]) {
        if self.err.is_some() {
            return;
        }
        // The last restart point whose key is < target (or the first one).
        let (mut left, mut right) = (0, self.block.num_restarts.saturating_sub(1));
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            match self.restart_key(mid) {
                Ok(k) if key::compare(k, target) == Ordering::Less => left = mid,
                Ok(_) => right = mid - 1,
                Err(reason) => return self.fail(reason),
            }
        }
        self.seek_to_restart_point(left);
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
        let original = self.current;
        while self.block.restart_point(self.restart_index) >= original {
            if self.restart_index == 0 {
                self.invalidate();
                return;
            }
            self.restart_index -= 1;
        }
        self.seek_to_restart_point(self.restart_index);
        while self.parse_next() && self.next < original {}
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::table::test_util::{check_ops, exhaustive_walk, sample_entries, Op};
    use crate::table::BlockBuilder;
    use proptest::prelude::*;

    fn build(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(interval);
        for (k, v) in entries {
            b.add(k, v);
        }
        let data = b.finish().to_vec();
        Arc::new(Block::new(data, Arc::from(Path::new("test.sst")), 0).unwrap())
    }

    #[test]
    fn round_trip_many_keys_every_position() {
        for interval in [1, 2, 16, 1000] {
            let model = sample_entries(500, 7);
            let block = build(&model, interval);
            exhaustive_walk(&mut block.iter(), &model);
        }
    }

    #[test]
    fn count_below_is_the_partition_point() {
        for len in 0..40u128 {
            // Ascending with repeats: 0, 0, 2, 2, 4, ...
            let xs: Vec<u128> = (0..len).map(|i| i / 2 * 2).collect();
            for t in 0..len + 2 {
                assert_eq!(
                    count_below(&xs, t),
                    xs.partition_point(|&x| x < t),
                    "{len} elements, target {t}"
                );
            }
        }
        // Past the steps written out: the rest of the search in a loop.
        let xs: Vec<u128> = (0..200_000u128).map(|i| i * 3).collect();
        for t in [0, 1, 3, 196_607, 196_608, 196_609, 599_997, 599_998, 10_000_000] {
            assert_eq!(count_below(&xs, t), xs.partition_point(|&x| x < t), "target {t}");
        }
    }

    #[test]
    fn single_entry_block() {
        let model = sample_entries(1, 1);
        let block = build(&model, 16);
        exhaustive_walk(&mut block.iter(), &model);
    }

    #[test]
    fn malformed_restart_arrays_are_refused() {
        let file: Arc<Path> = Arc::from(Path::new("x.sst"));
        for data in [
            vec![],
            vec![1, 0, 0],
            vec![0, 0, 0, 0],
            vec![1, 0, 0, 0],
            vec![0, 0, 0, 0, 1, 0, 0, 0],
            vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0],
            vec![0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff],
        ] {
            let err = Block::new(data.clone(), file.clone(), 9).unwrap_err();
            assert!(err.is_corruption(), "{data:?}: {err}");
        }
    }

    #[test]
    fn damaged_entry_is_reported_not_panicked() {
        let model = sample_entries(40, 3);
        let block = build(&model, 4);
        let mut data = block.data().to_vec();
        data[1] = 0xff; // the first entry's unshared length becomes huge
        let block = Arc::new(Block::new(data, Arc::from(Path::new("x.sst")), 77).unwrap());
        let mut it = block.iter();
        it.seek_to_first();
        assert!(!it.valid());
        let err = it.status().unwrap_err();
        assert!(err.to_string().contains("offset 77"), "{err}");
        it.seek_to_last(); // sticky: stays invalid
        assert!(!it.valid());
    }

    /// Point seeks (with restart prefixes or without, and with the key
    /// before) land on the first entry `>= target`, for keys sharing a
    /// long head and targets inside, between, before and after them.
    #[test]
    fn point_seeks_find_the_first_entry_not_before_the_target() {
        let ks = [0u8, 0, 0, 7];
        let tk = |s: &[u8]| [&ks[..], s].concat();
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..300u32)
            .map(|i| {
                let k = tk(format!("0000000000{:06}", i * 3).as_bytes());
                (key::internal_key(&k, u64::from(i % 5) + 1, 1), i.to_be_bytes().to_vec())
            })
            .collect();
        let mut targets: Vec<Vec<u8>> = (0..905u32)
            .flat_map(|i| {
                let k = tk(format!("0000000000{i:06}").as_bytes());
                [key::internal_key(&k, 9, 1), key::internal_key(&k, 1, 1)]
            })
            .collect();
        for other in [&b""[..], b"\0\0\0\x07", b"\0\0\0\x07000", b"\0\0\0\x071", b"\0\0\0\x08"] {
            targets.push(key::internal_key(other, 1, 1));
        }
        for interval in [1, 3] {
            let plain = build(&entries, interval);
            let prefixed = Block::new(plain.data().to_vec(), Arc::from(Path::new("i.sst")), 0)
                .unwrap()
                .with_restart_prefixes()
                .unwrap();
            for t in &targets {
                let at = entries.partition_point(|(k, _)| key::compare(k, t) == Ordering::Less);
                let want = entries.get(at).map(|(k, v)| (k.as_slice(), v.as_slice()));
                for block in [&*plain, &prefixed] {
                    let mut k = KeyBuf::new();
                    let got = block.seek_in_place(t, &mut k).unwrap();
                    assert_eq!(got.map(|v| (&*k, block.slice(v))), want, "{t:?}");
                    let mut before = KeyBuf::new();
                    let got = block.seek_with_before(t, &mut k, &mut before).unwrap();
                    assert_eq!(got.map(|(v, _)| (&*k, block.slice(v))), want);
                    if let Some((_, known)) = got {
                        let prev = at.checked_sub(1).map(|p| entries[p].0.as_slice());
                        assert!(known, "{t:?}");
                        assert_eq!(&*before, prev.unwrap_or(&[]), "{t:?}");
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn ops_match_a_sorted_vec(
            n in 1usize..200,
            seed in any::<u64>(),
            interval in 1usize..20,
            ops in proptest::collection::vec(any::<Op>(), 1..60),
        ) {
            let model = sample_entries(n, seed);
            let block = build(&model, interval);
            check_ops(&mut block.iter(), &model, &ops);
        }

        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200),
                                       target in proptest::collection::vec(any::<u8>(), 0..20)) {
            if let Ok(block) = Block::new(data, Arc::from(Path::new("f.sst")), 0) {
                let block = Arc::new(block);
                let mut it = block.iter();
                it.seek_to_first();
                while it.valid() { it.next(); }
                it.seek_to_last();
                while it.valid() { it.prev(); }
                it.seek(&target);
                it.seek_for_prev(&target);
                let _ = it.status();
            }
        }
    }
}
