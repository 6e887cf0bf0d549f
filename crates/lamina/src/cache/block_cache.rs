//! The cache of decompressed data blocks, bounded in bytes, and the
//! database's read counters (`read_counts`) that every table reading
//! through it bumps.

use super::read_counts::{Count, ReadCounts};
use crate::table::Block;
use quick_cache::sync::Cache;
use quick_cache::{Lifecycle, Weighter};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Assumed average block charge, to size the cache's tables.
const TYPICAL_BLOCK: usize = 16 << 10;

#[derive(Debug, Clone, Copy, Default)]
struct BlockWeighter;

impl Weighter<(u64, u64), Arc<Block>> for BlockWeighter {
    fn weight(&self, _key: &(u64, u64), block: &Arc<Block>) -> u64 {
        block.charge() as u64
    }
}

/// Tells each block the cache lets go (evicted, or replaced by another
/// copy read at the same time) that it is gone, so that no table slot keeps
/// it (docs/design.md, "Block slots"); counts the bytes let go.
#[derive(Clone)]
struct BlockLifecycle {
    let_go: Arc<AtomicU64>,
}

impl Lifecycle<(u64, u64), Arc<Block>> for BlockLifecycle {
    type RequestState = ();

    fn begin_request(&self) -> Self::RequestState {}

    fn on_evict(&self, _state: &mut Self::RequestState, _key: (u64, u64), block: Arc<Block>) {
        self.let_go
            .fetch_add(block.charge() as u64, Ordering::Relaxed);
        crate::table::block_evicted(&block);
    }
}

type Blocks =
    Cache<(u64, u64), Arc<Block>, BlockWeighter, quick_cache::DefaultHashBuilder, BlockLifecycle>;

/// Table slots serve point lookups only while the cache has let go of less
/// than this fraction (1/n) of the bytes it took in: past it, the working
/// set no longer fits, and every hit goes through the cache so that its
/// replacement policy sees it.
const SLOTS_WHILE_LET_GO_UNDER: u64 = 8;

/// Decompressed data blocks keyed by `(table file number, block offset)`,
/// holding at most about `capacity_bytes` (each block charged by
/// [`Block::charge`]); least useful blocks are evicted first.
///
/// File numbers are never reused, so entries of deleted tables are never
/// wrong, only dead weight until evicted. Thread-safe; share it through
/// `Arc`. A capacity of 0 caches nothing.
pub struct BlockCache {
    cache: Option<Blocks>,
    /// Bytes of blocks taken in, and let go (see [`BlockCache::slots_serve`]).
    taken: AtomicU64,
    let_go: Arc<AtomicU64>,
    /// Names this cache in the memo of each thread's recent blocks.
    id: u64,
    capacity: usize,
    /// Hits, misses, lookups and reads of table files (see `read_counts`).
    reads: ReadCounts,
    /// Whether memory held elsewhere is charged to the cache.
    charging: bool,
    /// Bytes charged per kind (memtables, open tables): stored by every
    /// write group, without a lock.
    charges: [AtomicU64; 2],
    /// Their sum when the capacity was last set. Changed, with the
    /// capacity, only under `apply`, from a sum read under it: a flush's
    /// charge and a `stats()` call applying at the same moment cannot leave
    /// a stale sum applied.
    applied: AtomicU64,
    apply: parking_lot::Mutex<()>,
}

/// What holds memory charged to the block cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charge {
    /// Memtables, active and waiting for flush.
    Memtables = 0,
    /// Index and filter blocks of open tables.
    Tables = 1,
}

/// The block cache never shrinks below this fraction (1/n) of its capacity,
/// however much is charged to it.
const MIN_SHARE: usize = 8;
/// Charges are applied to the capacity once they move by this fraction (1/n)
/// of it (resizing the cache takes every shard's lock).
const CHARGE_STEP: usize = 64;

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("capacity", &self.capacity)
            .field("usage", &self.usage_bytes())
            .field("hits", &self.hits())
            .field("misses", &self.misses())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding about `capacity_bytes` of blocks.
    pub fn new(capacity_bytes: usize) -> BlockCache {
        let let_go = Arc::new(AtomicU64::new(0));
        let cache = (capacity_bytes > 0).then(|| {
            let items = (capacity_bytes / TYPICAL_BLOCK).max(16);
            let options = quick_cache::OptionsBuilder::new()
                .estimated_items_capacity(items)
                .weight_capacity(capacity_bytes as u64)
                .build()
                .unwrap_or_else(|_| unreachable!("both sizes are set"));
            Cache::with_options(
                options,
                BlockWeighter,
                quick_cache::DefaultHashBuilder::default(),
                BlockLifecycle {
                    let_go: Arc::clone(&let_go),
                },
            )
        });
        BlockCache {
            cache,
            taken: AtomicU64::new(0),
            let_go,
            id: super::recent::new_cache_id(),
            capacity: capacity_bytes,
            reads: ReadCounts::default(),
            charging: false,
            charges: Default::default(),
            applied: AtomicU64::new(0),
            apply: parking_lot::Mutex::new(()),
        }
    }

    /// A cache of `capacity_bytes` to which memory held elsewhere (memtables,
    /// open tables) is charged with [`BlockCache::charge`]: blocks get what
    /// the charges leave, and never less than an eighth of the capacity.
    pub fn charged(capacity_bytes: usize) -> BlockCache {
        BlockCache {
            charging: true,
            ..BlockCache::new(capacity_bytes)
        }
    }

    /// Records that `kind` now holds `bytes`, shrinking or growing the room
    /// left for blocks (in steps of a 64th of the capacity). No effect on a
    /// cache made with [`BlockCache::new`]. Thread-safe.
    pub fn charge(&self, kind: Charge, bytes: u64) {
        if !self.charging {
            return;
        }
        if let Some(slot) = self.charges.get(kind as usize) {
            slot.store(bytes, Ordering::Relaxed);
        }
        let step = self.charge_step();
        let moved = |applied: u64, total: u64| {
            total.abs_diff(applied) >= step || (total == 0 && applied != 0)
        };
        // Most calls (every write group's) change nothing applied.
        if !moved(self.applied.load(Ordering::Relaxed), self.total()) {
            return;
        }
        let _apply = self.apply.lock();
        let total = self.total();
        if !moved(self.applied.load(Ordering::Relaxed), total) {
            return;
        }
        self.applied.store(total, Ordering::Relaxed);
        if let Some(c) = &self.cache {
            c.set_capacity(self.room_for(total));
        }
    }

    /// The change in a charge smaller than which [`BlockCache::charge`]
    /// changes nothing: callers charging often may skip smaller changes.
    pub fn charge_step(&self) -> u64 {
        (self.capacity / CHARGE_STEP).max(1) as u64
    }

    fn total(&self) -> u64 {
        self.charges
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .fold(0u64, u64::saturating_add)
    }

    /// Bytes left for blocks when `charged` bytes are charged.
    fn room_for(&self, charged: u64) -> u64 {
        let cap = self.capacity as u64;
        cap.saturating_sub(charged).max(cap / MIN_SHARE as u64)
    }

    /// Bytes charged to the cache now (0 for a cache made with
    /// [`BlockCache::new`]) and the bytes blocks may hold now (the capacity
    /// less the charges applied), read together.
    pub fn charge_state(&self) -> (u64, u64) {
        let _apply = self.apply.lock();
        let room = if self.charging {
            self.room_for(self.applied.load(Ordering::Relaxed))
        } else {
            self.capacity as u64
        };
        (self.total(), room)
    }

    /// The block at `offset` of table `file_number`, if cached. Counts a hit
    /// or a miss.
    pub fn get(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        let found = self.lookup(file_number, offset);
        let counter = if found.is_some() {
            Count::CacheHit
        } else {
            Count::CacheMiss
        };
        self.reads.add(counter, 1);
        found
    }

    /// Whether the block at `offset` of table `file_number` is cached;
    /// counts nothing and changes nothing (`get_many`'s read-ahead).
    pub fn contains(&self, file_number: u64, offset: u64) -> bool {
        self.cache
            .as_ref()
            .is_some_and(|c| c.contains_key(&(file_number, offset)))
    }

    /// The block at `offset` of table `file_number`, if cached; counts a
    /// hit but not a miss (for lookups that try memory first and count
    /// their miss when they read).
    pub fn get_if_cached(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        let found = self.lookup(file_number, offset)?;
        self.reads.add(Count::CacheHit, 1);
        Some(found)
    }

    /// The block, from the block this thread was served last for the table
    /// if it is the one (see `recent`), else from the cache.
    fn lookup(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        let cache = self.cache.as_ref()?;
        if let Some(b) = super::recent::get(self.id, file_number, offset) {
            return Some(b);
        }
        let b = cache.get(&(file_number, offset))?;
        super::recent::put(self.id, file_number, offset, &b);
        Some(b)
    }

    /// The block this thread was served last from table `file_number`, if
    /// the keys the table's index sends to it were recorded
    /// ([`BlockCache::remember_bounds`]) and hold `target`: the block a
    /// search of the table's index for `target` would name. Counts a hit.
    ///
    /// Also tells whether this thread records bounds and places now: what
    /// [`BlockCache::remember_bounds`] and [`BlockCache::put_place`] keep
    /// serves later reads only while it does (not while it reads at random).
    pub fn block_covering(&self, file_number: u64, target: &[u8]) -> (Option<Arc<Block>>, bool) {
        if self.cache.is_none() {
            return (None, false);
        }
        let (found, records) = super::recent::covering(self.id, file_number, target);
        if found.is_some() {
            self.reads.add(Count::CacheHit, 1);
        }
        (found, records)
    }

    /// Runs `f` on where this thread's last point read in `block` of table
    /// `file_number` ended (see `recent`): the end of the entry it answered
    /// with and that entry's key, which `f` may move on. `None` if unknown.
    pub fn with_place<R>(
        &self,
        file_number: u64,
        block: &Block,
        f: impl FnOnce(&mut usize, &mut Vec<u8>) -> Option<R>,
    ) -> Option<R> {
        self.cache.as_ref()?;
        super::recent::with_place(self.id, file_number, block, f)
    }

    /// Records that a point read in `block` of table `file_number` answered
    /// with the entry of key `key` that ends at byte `next`.
    pub fn put_place(&self, file_number: u64, block: &Block, next: usize, key: &[u8]) {
        if self.cache.is_some() {
            super::recent::put_place(self.id, file_number, block, next, key);
        }
    }

    /// Whether this thread's last point read in a table (of any cache) went
    /// to the block it had read before from that table: the thread reads
    /// keys in order, and the next read will most likely do the same.
    pub fn reading_in_order(&self) -> bool {
        super::recent::reading_in_order()
    }

    /// Records, for this thread, that the table's index sends the internal
    /// keys after `after` (empty: from the table's first) up to `last` to
    /// `block`, at `offset` of table `file_number` (see
    /// [`BlockCache::block_covering`]).
    pub fn remember_bounds(
        &self,
        file_number: u64,
        offset: u64,
        block: &Arc<Block>,
        after: &[u8],
        last: &[u8],
    ) {
        if self.cache.is_some() {
            super::recent::put_bounded(self.id, file_number, offset, block, after, last);
        }
    }

    /// Caches `block` as the block at `offset` of table `file_number`
    /// (replacing any block cached there). A block larger than the cache
    /// can hold is not kept.
    pub fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>) {
        if let Some(c) = &self.cache {
            self.taken
                .fetch_add(block.charge() as u64, Ordering::Relaxed);
            super::recent::put(self.id, file_number, offset, &block);
            c.insert((file_number, offset), block);
        }
    }

    /// Whether table slots may serve point lookups (docs/design.md, "Block
    /// slots"): the cache caches, and has let go of less than an eighth of
    /// the bytes it took in.
    pub fn slots_serve(&self) -> bool {
        self.cache.is_some()
            && self.let_go.load(Ordering::Relaxed) * SLOTS_WHILE_LET_GO_UNDER
                <= self.taken.load(Ordering::Relaxed)
    }

    /// Whether the data outgrows the cache: it caches nothing, or has let
    /// go of an eighth or more of the bytes it took in (the opposite of
    /// [`BlockCache::slots_serve`]). A block a table can read in place
    /// (`table::reader`) is then read there, neither looked up nor cached.
    pub fn outgrown(&self) -> bool {
        !self.slots_serve()
    }

    /// Counts a hit served from a table slot.
    pub fn count_slot_hit(&self) {
        self.reads.add(Count::CacheHit, 1);
    }

    /// Adds `n` to the database's read counter `c` (see `read_counts`).
    #[inline]
    pub(crate) fn count(&self, c: Count, n: u64) {
        self.reads.add(c, n);
    }

    /// The database's read counter `c` since the cache was made.
    pub(crate) fn counted(&self, c: Count) -> u64 {
        self.reads.total(c)
    }

    #[cfg(test)]
    /// Whether `block` is the block cached at `offset` of `file_number`
    /// (without counting a hit or touching the replacement policy).
    pub fn holds(&self, file_number: u64, offset: u64, block: &Arc<Block>) -> bool {
        let cached = self
            .cache
            .as_ref()
            .and_then(|c| c.peek(&(file_number, offset)));
        cached.is_some_and(|c| Arc::ptr_eq(&c, block))
    }

    /// Lookups that found their block.
    pub fn hits(&self) -> u64 {
        self.reads.total(Count::CacheHit)
    }

    /// Lookups that did not.
    pub fn misses(&self) -> u64 {
        self.reads.total(Count::CacheMiss)
    }

    /// Bytes charged for the blocks held now.
    pub fn usage_bytes(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.weight())
    }

    /// The capacity in bytes given to [`BlockCache::new`].
    pub fn capacity_bytes(&self) -> usize {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::table::BlockBuilder;
    use std::path::Path;

    fn block(n: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(16);
        b.add(&crate::key::internal_key(b"\0\0\0\0k", 1, 1), &vec![7u8; n]);
        Arc::new(Block::new(b.finish().to_vec(), Arc::from(Path::new("t")), 0).unwrap())
    }

    #[test]
    fn counts_hits_misses_and_bytes() {
        let c = BlockCache::new(1 << 20);
        assert!(c.get(1, 0).is_none());
        c.insert(1, 0, block(1000));
        assert_eq!(c.get(1, 0).unwrap().data().len(), block(1000).data().len());
        assert!(c.get(2, 0).is_none());
        assert_eq!((c.hits(), c.misses()), (1, 2));
        assert!(c.usage_bytes() >= 1000);
    }

    #[test]
    fn charges_shrink_and_restore_the_room_for_blocks() {
        let c = BlockCache::charged(64 << 10);
        for i in 0..100 {
            c.insert(1, i, block(1000));
        }
        c.charge(Charge::Memtables, 40 << 10);
        assert_eq!(c.charge_state().0, 40 << 10);
        assert!(c.usage_bytes() <= 24 << 10, "{}", c.usage_bytes());
        c.charge(Charge::Tables, 1 << 30);
        assert_eq!(c.charge_state().1, 8 << 10, "never below an eighth");
        c.charge(Charge::Tables, 0);
        c.charge(Charge::Memtables, 0);
        assert_eq!(c.charge_state(), (0, 64 << 10));
        // A small change is recorded at once but applied in steps.
        c.charge(Charge::Memtables, 100);
        assert_eq!(c.charge_state(), (100, 64 << 10));
        let plain = BlockCache::new(64 << 10);
        plain.charge(Charge::Memtables, 40 << 10);
        assert_eq!(plain.charge_state(), (0, 64 << 10));
    }

    #[test]
    fn charges_from_two_threads_leave_the_capacity_matching_their_sum() {
        let cap = 64u64 << 20;
        let step = cap / CHARGE_STEP as u64;
        for _ in 0..20 {
            let c = Arc::new(BlockCache::charged(cap as usize));
            let run = |kind: Charge, last: u64| {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    for i in 0..2_000u64 {
                        c.charge(kind, (i % 7) * (cap / 16));
                    }
                    c.charge(kind, last);
                })
            };
            let (a, b) = (
                run(Charge::Memtables, cap / 4),
                run(Charge::Tables, cap / 8),
            );
            a.join().unwrap();
            b.join().unwrap();
            let (charged, room) = c.charge_state();
            assert_eq!(charged, cap / 4 + cap / 8);
            assert!(
                room.abs_diff(cap - charged) < step,
                "room {room} for {charged} charged"
            );
        }
    }

    #[test]
    fn stays_near_its_capacity() {
        let c = BlockCache::new(64 << 10);
        for i in 0..100 {
            c.insert(1, i, block(4000));
        }
        assert!(c.usage_bytes() <= 64 << 10, "{}", c.usage_bytes());
        let zero = BlockCache::new(0);
        zero.insert(1, 0, block(10));
        assert!(zero.get(1, 0).is_none());
        assert_eq!(zero.usage_bytes(), 0);
    }
}
