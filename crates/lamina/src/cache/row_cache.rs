//! The cache of values found in tables, by tree key, for keys read again
//! and again (a hot set): a hit skips the filter, index and block search.

use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bits of the doorkeeper (128 KiB): keys seen once since it was last
/// cleared.
const DOORKEEPER_BITS: usize = 1 << 20;
/// The doorkeeper is cleared after this many keys were offered, so that
/// "seen before" means "seen recently".
const DOORKEEPER_PERIOD: u64 = 1 << 19;

/// Bytes charged per row besides its key and value.
const ROW_OVERHEAD: u64 = 64;

/// Larger values are not remembered: copying them costs more than the
/// search a row saves.
const MAX_ROW_VALUE: usize = 16 << 10;

/// A cached row: the value a read found in the tables of one version.
#[derive(Clone)]
pub struct Row {
    /// The generation of the version the value was read from; the row is
    /// valid only for readers of that same version.
    pub generation: u64,
    /// The value of the key's newest entry, a Put.
    pub value: Arc<[u8]>,
}

#[derive(Debug, Clone, Copy, Default)]
struct RowWeighter;

impl Weighter<Box<[u8]>, Row> for RowWeighter {
    fn weight(&self, key: &Box<[u8]>, row: &Row) -> u64 {
        key.len() as u64 + row.value.len() as u64 + ROW_OVERHEAD
    }
}

/// Values read from tables, keyed by tree key, each valid for one version
/// generation. Because tables change only with the version, a row is right
/// for every later reader of that version that found nothing newer in the
/// memtables. Thread-safe; capacity 0 caches nothing.
///
/// A row is admitted on the second read of its key (a doorkeeper, as in
/// TinyLFU): a key read once, as every key of a scan-like pass is, costs a
/// bit, not a copy and an eviction.
pub struct RowCache {
    rows: Option<Cache<Box<[u8]>, Row, RowWeighter>>,
    seen: Vec<AtomicU64>,
    offered: AtomicU64,
}

impl std::fmt::Debug for RowCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowCache")
            .field("rows", &self.rows.as_ref().map_or(0, |c| c.len()))
            .finish()
    }
}

impl RowCache {
    /// A cache holding about `capacity_bytes` of keys and values.
    pub fn new(capacity_bytes: usize) -> RowCache {
        let rows = (capacity_bytes > 0).then(|| {
            let items = (capacity_bytes / 256).max(16);
            Cache::with_weighter(items, capacity_bytes as u64, RowWeighter)
        });
        let words = if rows.is_some() {
            DOORKEEPER_BITS / 64
        } else {
            0
        };
        RowCache {
            rows,
            seen: (0..words).map(|_| AtomicU64::new(0)).collect(),
            offered: AtomicU64::new(0),
        }
    }

    /// Whether `tree_key` was offered before since the doorkeeper was last
    /// cleared; marks it as offered.
    fn seen_before(&self, tree_key: &[u8]) -> bool {
        if self.offered.fetch_add(1, Ordering::Relaxed) % DOORKEEPER_PERIOD
            == DOORKEEPER_PERIOD - 1
        {
            for w in &self.seen {
                w.store(0, Ordering::Relaxed);
            }
        }
        let bit = xxhash_rust::xxh3::xxh3_64(tree_key) as usize % DOORKEEPER_BITS;
        let Some(word) = self.seen.get(bit / 64) else {
            return false;
        };
        let mask = 1u64 << (bit % 64);
        word.fetch_or(mask, Ordering::Relaxed) & mask != 0
    }

    /// The value of `tree_key` cached for version `generation`, if any.
    pub fn get(&self, tree_key: &[u8], generation: u64) -> Option<Arc<[u8]>> {
        let row = self.rows.as_ref()?.get(tree_key)?;
        (row.generation == generation).then_some(row.value)
    }

    /// Caches `value` as what `tree_key` holds in version `generation`
    /// (values over 16 KiB are not cached), if the key was offered before.
    pub fn insert(&self, tree_key: &[u8], generation: u64, value: &[u8]) {
        if value.len() > MAX_ROW_VALUE || self.rows.is_none() || !self.seen_before(tree_key) {
            return;
        }
        if let Some(c) = &self.rows {
            let row = Row {
                generation,
                value: Arc::from(value),
            };
            c.insert(Box::from(tree_key), row);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rows_of_another_generation_are_not_answers() {
        let c = RowCache::new(1 << 20);
        assert!(c.get(b"k", 1).is_none());
        c.insert(b"k", 1, b"v");
        assert!(c.get(b"k", 1).is_none(), "a key read once is not kept");
        c.insert(b"k", 1, b"v");
        assert_eq!(&*c.get(b"k", 1).unwrap(), b"v");
        assert!(c.get(b"k", 2).is_none());
        c.insert(b"big", 1, &vec![0u8; MAX_ROW_VALUE + 1]);
        c.insert(b"big", 1, &vec![0u8; MAX_ROW_VALUE + 1]);
        assert!(c.get(b"big", 1).is_none());
        let none = RowCache::new(0);
        none.insert(b"k", 1, b"v");
        none.insert(b"k", 1, b"v");
        assert!(none.get(b"k", 1).is_none());
    }
}
