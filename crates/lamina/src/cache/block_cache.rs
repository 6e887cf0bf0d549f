//! The cache of decompressed data blocks, bounded in bytes.

use crate::table::Block;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
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

/// Decompressed data blocks keyed by `(table file number, block offset)`,
/// holding at most about `capacity_bytes` (each block charged by
/// [`Block::charge`]); least useful blocks are evicted first.
///
/// File numbers are never reused, so entries of deleted tables are never
/// wrong, only dead weight until evicted. Thread-safe; share it through
/// `Arc`. A capacity of 0 caches nothing.
pub struct BlockCache {
    cache: Option<Cache<(u64, u64), Arc<Block>, BlockWeighter>>,
    capacity: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

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
        let cache = (capacity_bytes > 0).then(|| {
            let items = (capacity_bytes / TYPICAL_BLOCK).max(16);
            Cache::with_weighter(items, capacity_bytes as u64, BlockWeighter)
        });
        BlockCache {
            cache,
            capacity: capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The block at `offset` of table `file_number`, if cached. Counts a hit
    /// or a miss.
    pub fn get(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        let found = self
            .cache
            .as_ref()
            .and_then(|c| c.get(&(file_number, offset)));
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// The block at `offset` of table `file_number`, if cached; counts a
    /// hit but not a miss (for lookups that try memory first and count
    /// their miss when they read).
    pub fn get_if_cached(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        let found = self.cache.as_ref()?.get(&(file_number, offset))?;
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(found)
    }

    /// Caches `block` as the block at `offset` of table `file_number`
    /// (replacing any block cached there). A block larger than the cache
    /// can hold is not kept.
    pub fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>) {
        if let Some(c) = &self.cache {
            c.insert((file_number, offset), block);
        }
    }

    /// Lookups that found their block.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Lookups that did not.
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
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
