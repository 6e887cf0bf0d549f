//! An open table: opening it, point lookups and reading its data blocks
//! (its iterator is `table_iter`'s, its checks `verify`'s). Each read of
//! the file is counted in the database's read counters, by the kind of
//! block read (`cache::read_counts`).
//!
//! Layout: docs/format.md#table.

mod verify;

use super::block::{Block, KeyBuf, PointHit};
use super::bloom::BlockedBloom;
use super::compress::{check_stored, decode_block, BLOCK_TRAILER_LEN};
use super::filter_use::FilterUse;
use super::footer::{BlockHandle, Footer, FOOTER_LEN};
use super::properties::Properties;
use super::slots::BlockSlots;
use super::PAGE;
use crate::cache::{BlockCache, Count};
use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, ReadMap};
use crate::iter::InternalIterator;
use crate::key;
use bytes::Bytes;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_64;

/// An open, immutable table.
///
/// Opening reads and checks the footer, the filter, the properties and the
/// index, which stay pinned in memory; data blocks are read on demand
/// through the shared [`BlockCache`], keyed by `(file_number, offset)`:
/// copied from the file's read-only mapping when the file system can map
/// it, the process runs under no memory cap, and the block lies within one
/// page; else read with one read call. Such a block stored uncompressed is
/// read in place, not cached, once the data outgrows the cache.
/// Every block's checksum is verified when it is read from the file (a
/// block read in place by a point lookup: the first time, if it starts on
/// a page).
/// `Table` is `Send + Sync`; share it through `Arc`.
pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    path: Arc<Path>,
    file_number: u64,
    file_size: u64,
    cache: Arc<BlockCache>,
    footer: Footer,
    index: Arc<Block>,
    /// Layout: docs/format.md#filter.
    filter: BlockedBloom,
    props: Properties,
    /// One per index entry, when every index entry is a restart point
    /// (docs/design.md, "Block slots"); none otherwise.
    slots: Arc<BlockSlots<Block>>,
    /// Whether lookups ask a large filter before a block in its slot
    /// (see `filter_use`).
    filter_use: FilterUse,
    /// The file mapped read-only (`None` where the file system cannot map
    /// it, or the process runs under a memory cap): a block within one page
    /// is copied from here, with no system call, and at most one page fault
    /// if the page is not in memory.
    map: Option<Arc<ReadMap>>,
    /// One bit per page of the mapped file: set once the block that starts
    /// on that page has had its checksum verified in place (empty when the
    /// file is not mapped).
    checked_pages: Box<[AtomicU64]>,
}

/// What a point lookup in one table found.
#[derive(Debug, PartialEq, Eq)]
pub enum Probe<R> {
    /// The lookup's callback ran on the first entry at or after the target.
    Found(R),
    /// No entry at or after the target could be of the key.
    Absent,
    /// The answer needs a block that is not cached, and the lookup was
    /// asked not to read.
    NeedsIo,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("path", &self.path)
            .field("file_number", &self.file_number)
            .field("file_size", &self.file_size)
            .field("footer", &self.footer)
            .field("properties", &self.props)
            .finish_non_exhaustive()
    }
}

fn corruption(path: &Path, offset: u64, reason: impl Into<String>) -> Error {
    Error::corruption(path, offset, reason)
}

/// The hash of a tree key that a table's filter and its blocks' hash
/// indexes are built on (xxh3, 64 bits); the row cache's doorkeeper
/// uses it too, so one lookup hashes its key once.
#[inline]
pub fn key_hash(tree_key: &[u8]) -> u64 {
    xxh3_64(tree_key)
}

impl Table {
    /// Opens the table in `file` (read from `path`, which names it in
    /// errors) as table number `file_number`, reading data blocks through
    /// `cache`.
    ///
    /// Corruption if the file is too short, the footer's magic, version or
    /// checksum is wrong, its block handles do not tile the file, or the
    /// filter, properties or index block is damaged.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        path: PathBuf,
        file_number: u64,
        cache: Arc<BlockCache>,
    ) -> Result<Table> {
        let path: Arc<Path> = Arc::from(path);
        let file_size = file.len();
        let Some(footer_offset) = file_size.checked_sub(FOOTER_LEN as u64) else {
            let reason = format!("file of {file_size} bytes is too short to be a table");
            return Err(corruption(&path, 0, reason));
        };
        cache.count(Count::FooterRead, 1);
        let bytes = file
            .read_at(footer_offset, FOOTER_LEN)
            .map_err(|e| Error::io(&*path, e))?;
        let footer = Footer::decode(&bytes, &path, footer_offset)?;
        let (f, p, i) = (footer.filter, footer.properties, footer.index);
        if f.end_with_trailer() != Some(p.offset)
            || p.end_with_trailer() != Some(i.offset)
            || i.end_with_trailer() != Some(footer_offset)
        {
            return Err(corruption(
                &path,
                footer_offset,
                format!(
                    "footer's block handles (filter {f:?}, properties {p:?}, index {i:?}) do not \
                     end at the footer ({footer_offset}); the file may be truncated"
                ),
            ));
        }
        // The filter, properties and index blocks lie back to back before
        // the footer: read them at once.
        let meta_len = usize::try_from(footer_offset - f.offset)
            .map_err(|_| corruption(&path, f.offset, "table metadata does not fit in memory"))?;
        cache.count(Count::IndexFilterRead, 1);
        let mut meta = file
            .read_at(f.offset, meta_len)
            .map_err(|e| Error::io(&*path, e))?;
        let index = meta.split_off(((i.offset - f.offset) as usize).min(meta.len()));
        let props = meta.split_off(((p.offset - f.offset) as usize).min(meta.len()));
        let mut filter = decode_block(meta, &path, f.offset)?;
        filter.shrink_to_fit(); // it kept the capacity of the whole region
        let filter = BlockedBloom::new(&filter).map_err(|r| corruption(&path, f.offset, r))?;
        let props = Properties::decode(&decode_block(props, &path, p.offset)?, &path, p.offset)?;
        let index = decode_block(index, &path, i.offset)?;
        let index = Arc::new(Block::new(index, path.clone(), i.offset)?.with_restart_prefixes()?);
        let slots = BlockSlots::new(index.entries_if_all_restarts().unwrap_or(0));
        // Under a memory cap, the pages lookups fault in through a mapping
        // must be unmapped before the cap's reclaim can take them: sixteen
        // threads of random lookups over 12 GB of tables under a 512 MiB
        // cap got the process killed by the cap, where read calls ran.
        let map = if crate::budget::memory_capped() {
            None
        } else {
            ReadMap::of(file.as_ref(), file_size).map(Arc::new)
        };
        if let Some(m) = &map {
            m.advise_random();
        }
        let pages = if map.is_some() {
            file_size.div_ceil(PAGE as u64).div_ceil(64)
        } else {
            0
        };
        let checked_pages = (0..pages).map(|_| AtomicU64::new(0)).collect();
        Ok(Table {
            map,
            checked_pages,
            slots,
            filter_use: FilterUse::new(),
            file,
            path,
            file_number,
            file_size,
            cache,
            footer,
            index,
            filter,
            props,
        })
    }

    /// False only if the table certainly holds no entry of `tree_key`
    /// (an internal key without its 8-byte trailer).
    pub fn may_contain(&self, tree_key: &[u8]) -> bool {
        self.filter_allows(key_hash(tree_key))
    }

    /// Point lookup of tree key `tk` at internal key `target` (of `tk`):
    /// consults the filter, then calls `f` with the first entry whose
    /// internal key is `>= target` — its key and value, borrowed from the
    /// cached block — and returns what `f` returns. [`Probe::Absent`] when
    /// the filter excludes `tk` or every key is smaller (`f` may also be
    /// called with another key's entry: the caller checks). Copies nothing;
    /// hashes `tk` once for the filter and the block's hash index. With
    /// `cached_only`, a block not in the cache is not read:
    /// [`Probe::NeedsIo`], and `f` is not called.
    #[cfg(any(test, feature = "internals"))]
    pub fn get_point<R>(
        &self,
        tk: &[u8],
        target: &[u8],
        cached_only: bool,
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Probe<R>> {
        self.get_point_hashed(tk, key_hash(tk), target, cached_only, f)
    }

    /// [`Table::get_point`] with `h`, the [`key_hash`] of `tk`, computed by
    /// the caller: a lookup that probes several tables hashes the key once.
    /// REQUIRES: `h == key_hash(tk)` (another value makes the filter and the
    /// block's hash index answer for another key).
    pub fn get_point_hashed<R>(
        &self,
        tk: &[u8],
        h: u64,
        target: &[u8],
        cached_only: bool,
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Probe<R>> {
        let mut key = KeyBuf::new();
        // The block this thread read last from this table, if it holds
        // `target` (the block then answers; the filter need not be asked);
        // else the one the index names, if the filter allows the key.
        let (covering, records) = self.cache.block_covering(self.file_number, target);
        let block = match covering {
            Some(b) => b,
            None => {
                let (overlap, ask_first) = self.filter_order(h);
                if !overlap && !self.filter_allows(h) {
                    return Ok(Probe::Absent);
                }
                let mut before = KeyBuf::new();
                // The keys the index sends to the block are kept for the
                // thread's next read only while it reads keys in order.
                let Some(hit) = self
                    .index
                    .seek_index(target, records, &mut key, &mut before)?
                else {
                    return Ok(Probe::Absent);
                };
                let (at, last, ordinal) = (hit.value, hit.key, hit.ordinal);
                let (bounded, after) = (hit.before.is_some(), hit.before.unwrap_or(&[]));
                if overlap && ask_first {
                    let passed = self.filter_allows(h);
                    self.filter_use.record(h, passed);
                    if !passed {
                        return Ok(Probe::Absent);
                    }
                }
                // The block the last lookup sent here found, while the
                // cache holds it (docs/design.md, "Block slots"); it was
                // read from the handle of this index entry, so its offset
                // is the handle's.
                let slots_serve = ordinal.is_some() && self.cache.slots_serve();
                if let Some(held) = ordinal
                    .filter(|_| slots_serve)
                    .and_then(|o| self.slots.get(o))
                {
                    if let Some(block) = held.as_ref() {
                        self.note_slot_hit(block, h, bounded.then_some((after, last)));
                        let mut key = KeyBuf::new();
                        return self.answer(
                            block,
                            tk,
                            h,
                            target,
                            cached_only,
                            records,
                            &mut key,
                            f,
                        );
                    }
                }
                if !ask_first && !self.filter_allows(h) {
                    return Ok(Probe::Absent);
                }
                let slot = ordinal.filter(|_| slots_serve);
                let Some((offset, block)) = self.point_block(at, slot, cached_only)? else {
                    return Ok(Probe::NeedsIo);
                };
                // The block holds the keys after the index key before its
                // own (empty: from the table's first) up to its own, the
                // block's last key (docs/format.md#index).
                if bounded && !block.is_in_place() {
                    self.cache
                        .remember_bounds(self.file_number, offset, &block, after, last);
                }
                block
            }
        };
        // A block read in place is gone after this read: no place in it is
        // kept for the next.
        let records = records && !block.is_in_place();
        self.answer(&block, tk, h, target, cached_only, records, &mut key, f)
    }

    /// A lookup served by the block in its slot: the block's hash bucket,
    /// read next, fetched while the thread's place is kept (with the keys
    /// before and at the block's index entry, `bounds`, when known).
    #[inline(always)]
    fn note_slot_hit(&self, block: &Arc<Block>, h: u64, bounds: Option<(&[u8], &[u8])>) {
        block.prefetch_bucket(h);
        self.cache.count_slot_hit();
        if let Some((after, last)) = bounds {
            self.cache
                .remember_bounds(self.file_number, block.offset(), block, after, last);
        }
    }

    /// When a point lookup asks the filter, as `(overlap, ask_first)`. A
    /// filter too large to stay in the CPU's caches has its line fetched
    /// while the index is searched (smaller, likely cached), and is asked
    /// after (`overlap`); a smaller one first, which spares a key it
    /// excludes the search. Either is asked before any block is read from
    /// the disk. A large filter that nearly every key passes is asked only
    /// when the block is not in its slot (`ask_first` false: see
    /// `filter_use`).
    #[inline]
    fn filter_order(&self, h: u64) -> (bool, bool) {
        if self.filter.outgrows_caches() {
            let ask = self.filter_use.asks(h);
            if ask {
                self.filter.prefetch(h);
            }
            (true, ask)
        } else {
            (false, true)
        }
    }

    /// The data block a point lookup reads, named by the index entry value
    /// at `at`, with its offset; put in slot `slot` if given. `None` when
    /// it is not cached and the lookup may not read (`cached_only`).
    #[inline]
    fn point_block(
        &self,
        at: (usize, usize),
        slot: Option<usize>,
        cached_only: bool,
    ) -> Result<Option<(u64, Arc<Block>)>> {
        let handle = self.handle_of(self.index.slice(at))?;
        let block = if cached_only {
            match self.cache.get_if_cached(self.file_number, handle.offset) {
                Some(b) => b,
                None => return Ok(None),
            }
        } else {
            self.data_block_for(handle, true, true)?
        };
        if let Some(o) = slot.filter(|_| !block.is_in_place()) {
            self.slots.fill(o, &block);
        }
        Ok(Some((handle.offset, block)))
    }

    #[cfg(test)]
    /// Whether a lookup of a key of hash `h` asks the filter before a block
    /// in its slot (see `filter_use`).
    pub(super) fn asks_filter_first(&self, h: u64) -> bool {
        self.filter_use.asks(h)
    }

    /// False only if the filter says the table holds no entry of `tk`, of
    /// [`key_hash`] `h`.
    #[inline]
    fn filter_allows(&self, h: u64) -> bool {
        self.filter.may_contain_hash(h)
    }

    /// The end of a point lookup: the first entry of `block` whose internal
    /// key is `>= target`, through the block's hash index where it has one.
    /// `records`: whether the thread's memo keeps places now (not while it
    /// reads at random, when none it holds would answer this read either).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn answer<R>(
        &self,
        block: &Block,
        tk: &[u8],
        h: u64,
        target: &[u8],
        cached_only: bool,
        records: bool,
        key: &mut KeyBuf,
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Probe<R>> {
        // Keys read in order: the entry after the one this thread's last
        // read in the block answered with, when it is the first `>= target`
        // (a damaged entry there is left to the searches below to report).
        let after_last = records
            .then(|| {
                self.cache
                    .with_place(self.file_number, block, |next, prev| {
                        if key::compare(prev, target) != Ordering::Less {
                            return None;
                        }
                        key.clear();
                        key.splice(0, prev);
                        let v = block.next_in_place(*next, target, key).ok().flatten()?;
                        *next = v.1;
                        prev.clear();
                        prev.extend_from_slice(key);
                        Some(v)
                    })
            })
            .flatten();
        if let Some(v) = after_last {
            return Ok(Probe::Found(f(key, block.slice(v))));
        }
        // Data blocks have a hash index, looked up with the filter's hash.
        match block.seek_point(tk, h, target, key)? {
            PointHit::Found(v) => {
                if records {
                    self.cache.put_place(self.file_number, block, v.1, key);
                }
                Ok(Probe::Found(f(key, block.slice(v))))
            }
            PointHit::NotInBlock => Ok(Probe::Absent),
            // Only a damaged index names a block whose keys all precede
            // `target`; the iterator path carries on with the next block.
            PointHit::AllSmaller if cached_only => Ok(Probe::NeedsIo),
            PointHit::AllSmaller => Ok(match self.get(target)? {
                Some((k, v)) => Probe::Found(f(&k, &v)),
                None => Probe::Absent,
            }),
        }
    }

    /// The first entry whose internal key is `>= target`, as `(key, value)`
    /// copied out; `None` if every key is smaller. The caller checks that the
    /// entry's tree key is the one it wants. It does not consult the filter;
    /// the database's lookups use [`Table::get_point`].
    pub fn get(&self, target: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let mut index = self.index.iter();
        index.seek(target);
        loop {
            if !index.valid() {
                index.status()?;
                return Ok(None);
            }
            let block = self.data_block(self.handle_of(index.value())?)?;
            let mut it = block.iter();
            it.seek(target);
            if it.valid() {
                return Ok(Some((it.key().to_vec(), it.value().to_vec())));
            }
            it.status()?;
            // Only a damaged index names a block whose keys all precede
            // `target`; carry on with the next block as the iterator would.
            index.next();
        }
    }

    /// The counters written with the table.
    pub fn properties(&self) -> &Properties {
        &self.props
    }

    /// Bytes of the filter block in the file, trailer included.
    pub fn filter_bytes(&self) -> u64 {
        self.footer.filter.size + BLOCK_TRAILER_LEN as u64
    }

    /// Bytes of the index block in the file, trailer included.
    pub fn index_bytes(&self) -> u64 {
        self.footer.index.size + BLOCK_TRAILER_LEN as u64
    }

    #[cfg(test)]
    /// Every data block the table's slots hold.
    pub fn slotted_blocks(&self) -> Vec<Arc<Block>> {
        self.slots.held()
    }

    /// Bytes of memory the table's block slots take.
    pub fn slot_bytes(&self) -> u64 {
        self.slots.charge() as u64
    }

    #[cfg(any(test, feature = "internals"))]
    /// The table's file number.
    pub fn file_number(&self) -> u64 {
        self.file_number
    }

    /// The table's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size of the table file in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The index block (its entries' values are block handles:
    /// [`Table::handle_of`]).
    pub(super) fn index_block(&self) -> &Arc<Block> {
        &self.index
    }

    /// Decodes an index entry's value.
    pub(super) fn handle_of(&self, value: &[u8]) -> Result<BlockHandle> {
        BlockHandle::decode(value).ok_or_else(|| {
            corruption(
                &self.path,
                self.footer.index.offset,
                "index entry holds a malformed block handle",
            )
        })
    }

    /// The data block at `handle`, from the cache or the file.
    pub(super) fn data_block(&self, handle: BlockHandle) -> Result<Arc<Block>> {
        self.data_block_filling(handle, true)
    }

    /// Asks the operating system to start reading the data block a point
    /// lookup of internal key `target` (tree key hash `h`) would read, if
    /// the filter allows the key and the block is not cached: so that the
    /// reads of a batch's keys are in flight together (`Reads::get_many`).
    pub fn will_need_for(&self, target: &[u8], h: u64) -> Result<()> {
        if !self.filter_allows(h) {
            return Ok(());
        }
        let (mut key, mut before) = (KeyBuf::new(), KeyBuf::new());
        let Some(hit) = self
            .index
            .seek_index(target, false, &mut key, &mut before)?
        else {
            return Ok(());
        };
        let handle = self.handle_of(self.index.slice(hit.value))?;
        if !self.cache.contains(self.file_number, handle.offset) {
            let len = handle.size.saturating_add(BLOCK_TRAILER_LEN as u64);
            self.will_need(handle.offset, len);
        }
        Ok(())
    }

    /// Asks the operating system to start reading `offset..offset + len`
    /// of the file (see `table::readahead`), within the data blocks.
    pub(super) fn will_need(&self, offset: u64, len: u64) {
        let data_end = self.footer.filter.offset;
        if offset < data_end {
            self.file.will_need(offset, len.min(data_end - offset));
        }
    }

    /// The data block at `handle`, from the cache or the file; a block read
    /// from the file is added to the cache only if `fill`.
    pub(super) fn data_block_filling(&self, handle: BlockHandle, fill: bool) -> Result<Arc<Block>> {
        self.data_block_for(handle, fill, false)
    }

    /// [`Table::data_block_filling`], a read from the file counted as a
    /// point lookup's too if `lookup`.
    #[inline]
    fn data_block_for(&self, handle: BlockHandle, fill: bool, lookup: bool) -> Result<Arc<Block>> {
        if let Some(block) = self.block_in_place(handle, lookup)? {
            return Ok(block);
        }
        if let Some(block) = self.cache.get(self.file_number, handle.offset) {
            return Ok(block);
        }
        if lookup {
            self.cache.count(Count::LookupDataRead, 1);
        }
        let block = Arc::new(self.read_data_block(handle)?);
        if fill {
            self.cache
                .insert(self.file_number, handle.offset, Arc::clone(&block));
        }
        Ok(block)
    }

    /// The data block at `handle` read in place, where the data outgrows
    /// the block cache ([`BlockCache::outgrown`]), the table is mapped, and
    /// the block lies within one page of it and is stored uncompressed: its
    /// checksum checked (by a point lookup, once for a block that starts on
    /// a page), its bytes not copied, and the block not cached
    /// (docs/design.md, "Blocks in place"). `None` otherwise.
    #[inline]
    fn block_in_place(&self, handle: BlockHandle, lookup: bool) -> Result<Option<Arc<Block>>> {
        let Some(map) = self.map.as_ref().filter(|_| self.cache.outgrown()) else {
            return Ok(None);
        };
        let Some(stored) = self.mapped_within_a_page(handle) else {
            return Ok(None);
        };
        self.check_in_data(handle)?;
        let raw = usize::try_from(handle.size).unwrap_or(usize::MAX);
        if stored.get(raw).copied() != Some(0) {
            return Ok(None);
        }
        self.cache.count(Count::DataRead, 1);
        if lookup {
            self.cache.count(Count::LookupDataRead, 1);
        }
        // A block that starts on a page is the only one starting there: a
        // point lookup, which reads a few lines of the page, verifies its
        // checksum only if no read in place has yet. A scan reads most of
        // the page: the checksum's pass over it fetches its lines in order,
        // where the scan's steps would wait for them one by one (random
        // range reads of 10 ran 0.83x-0.96x without it), and is kept.
        let page = handle
            .offset
            .is_multiple_of(PAGE as u64)
            .then(|| handle.offset / PAGE as u64);
        let bit = page.and_then(|p| {
            let word = self.checked_pages.get(usize::try_from(p / 64).ok()?)?;
            Some((word, 1u64 << (p % 64)))
        });
        let checked = lookup && bit.is_some_and(|(w, b)| w.load(AtomicOrdering::Relaxed) & b != 0);
        let size = if checked {
            raw
        } else {
            let (_, size) = check_stored(stored, &self.path, handle.offset)?;
            if let Some((w, b)) = bit {
                w.fetch_or(b, AtomicOrdering::Relaxed);
            }
            size
        };
        let start = handle.offset as usize;
        let bytes = Bytes::from_owner(InPlace {
            map: Arc::clone(map),
            range: start..start + size,
        });
        let block = Block::in_place(bytes, self.path.clone(), handle.offset)?;
        Ok(Some(Arc::new(block)))
    }

    /// Corruption unless `handle` lies within the data blocks.
    fn check_in_data(&self, handle: BlockHandle) -> Result<()> {
        let data_end = self.footer.filter.offset;
        if !matches!(handle.end_with_trailer(), Some(end) if end <= data_end) {
            return Err(corruption(
                &self.path,
                self.footer.index.offset,
                format!("index entry {handle:?} points outside the data blocks (0..{data_end})"),
            ));
        }
        Ok(())
    }

    /// Reads and decodes the data block at `handle`, bypassing the cache.
    fn read_data_block(&self, handle: BlockHandle) -> Result<Block> {
        self.check_in_data(handle)?;
        self.cache.count(Count::DataRead, 1);
        let stored = match self.mapped_within_a_page(handle) {
            Some(bytes) => bytes.to_vec(),
            None => read_stored(&*self.file, &self.path, handle)?,
        };
        let raw = decode_block(stored, &self.path, handle.offset)?;
        Block::with_hash_index(raw, self.path.clone(), handle.offset)
    }

    /// The stored bytes and trailer of the block at `handle` in the mapping,
    /// if the file is mapped and they lie within one page of it. Touching
    /// them then costs one page fault at most, which reads that page alone
    /// ([`ReadMap::advise_random`]): the device reads of one read call,
    /// without the call. A block over several pages is left to a read call,
    /// which reads them at once where faults would read one after another.
    #[inline]
    fn mapped_within_a_page(&self, handle: BlockHandle) -> Option<&[u8]> {
        let map = self.map.as_ref()?;
        let end = handle.end_with_trailer()?;
        let last = end.checked_sub(1)?;
        if handle.offset / PAGE as u64 != last / PAGE as u64 {
            return None;
        }
        map.bytes()
            .get(usize::try_from(handle.offset).ok()?..usize::try_from(end).ok()?)
    }

    /// Whether blocks are read through a mapping of the file.
    #[cfg(test)]
    pub(super) fn is_mapped(&self) -> bool {
        self.map.is_some()
    }
}

/// Bytes of a table's mapping, kept alive by the mapping they are in.
struct InPlace {
    map: Arc<ReadMap>,
    range: std::ops::Range<usize>,
}

impl AsRef<[u8]> for InPlace {
    fn as_ref(&self) -> &[u8] {
        self.map.bytes().get(self.range.clone()).unwrap_or(&[])
    }
}

/// Reads the stored block at `handle` with its trailer, with one read call.
fn read_stored(file: &dyn RandomAccessFile, path: &Path, handle: BlockHandle) -> Result<Vec<u8>> {
    let len = handle
        .size
        .checked_add(BLOCK_TRAILER_LEN as u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            corruption(
                path,
                handle.offset,
                format!("block size {} is absurd", handle.size),
            )
        })?;
    file.read_at(handle.offset, len)
        .map_err(|e| Error::io(path, e))
}
