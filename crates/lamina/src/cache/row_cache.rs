//! The cache of values found in tables, by tree key, for keys read again
//! and again (a hot set): a hit skips the filter, index and block search.

use super::doorkeeper::Doorkeeper;
use super::row_use::RowUse;
use crate::key::Kind;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::sync::Arc;

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
    /// The kind of the key's newest entry: `Put`, or `Blob` (its value a
    /// blob pointer; the value itself stays in its blob file).
    pub kind: Kind,
    /// The newest entry's value.
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
    door: Doorkeeper,
    usage: RowUse,
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
        RowCache {
            door: Doorkeeper::new(rows.is_some()),
            rows,
            usage: RowUse::new(),
        }
    }

    /// Whether a point lookup of the key of hash `hash` asks this cache
    /// ([`RowCache::get`], then [`RowCache::insert_hashed`] with what the
    /// tables say): while the rows answer enough lookups, every one does;
    /// otherwise only a sample of keys, to learn when they would again
    /// (see `row_use`). Asks the CPU for the doorkeeper's word if so.
    pub fn asks(&self, hash: u64) -> bool {
        let asks = self.rows.is_some() && self.usage.asks(hash);
        if asks {
            self.door.prefetch(hash);
        }
        asks
    }

    /// The newest entry of `tree_key` cached for version `generation`, if
    /// any: its kind and value.
    /// `hash` is the tables' hash of `tree_key` (`crate::table::key_hash`):
    /// a key the doorkeeper has not seen since it was last cleared is not
    /// looked up (it is seldom cached; a row missed this way is found
    /// again after the next read of its key marks it).
    pub fn get(&self, tree_key: &[u8], hash: u64, generation: u64) -> Option<(Kind, Arc<[u8]>)> {
        let rows = self.rows.as_ref()?;
        let found = self
            .door
            .marked(hash)
            .then(|| rows.get(tree_key))
            .flatten()
            .filter(|row| row.generation == generation)
            .map(|row| (row.kind, row.value));
        self.usage.record(hash, found.is_some());
        found
    }

    /// Caches the entry of kind `kind` (`Put` or `Blob`) and value `value`
    /// as what `tree_key` holds at its newest in version `generation`
    /// (values over 16 KiB are not cached), if the key was offered before.
    /// `hash` is the tables' hash of `tree_key` (`crate::table::key_hash`),
    /// which the caller has already computed for the filters.
    pub fn insert_hashed(
        &self,
        tree_key: &[u8],
        hash: u64,
        generation: u64,
        kind: Kind,
        value: &[u8],
    ) {
        if value.len() > MAX_ROW_VALUE || self.rows.is_none() || !self.door.seen_before(hash) {
            return;
        }
        if let Some(c) = &self.rows {
            let row = Row {
                generation,
                kind,
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
    use crate::cache::doorkeeper::PERIOD as DOORKEEPER_PERIOD;
    use crate::table::key_hash;

    #[test]
    fn rows_of_another_generation_are_not_answers() {
        let c = RowCache::new(1 << 20);
        assert!(c.get(b"k", key_hash(b"k"), 1).is_none());
        c.insert_hashed(b"k", key_hash(b"k"), 1, Kind::Put, b"v");
        assert!(
            c.get(b"k", key_hash(b"k"), 1).is_none(),
            "a key read once is not kept"
        );
        c.insert_hashed(b"k", key_hash(b"k"), 1, Kind::Put, b"v");
        assert_eq!(&*c.get(b"k", key_hash(b"k"), 1).unwrap().1, b"v");
        assert!(c.get(b"k", key_hash(b"k"), 2).is_none());
        c.insert_hashed(
            b"big",
            key_hash(b"big"),
            1,
            Kind::Put,
            &vec![0u8; MAX_ROW_VALUE + 1],
        );
        c.insert_hashed(
            b"big",
            key_hash(b"big"),
            1,
            Kind::Put,
            &vec![0u8; MAX_ROW_VALUE + 1],
        );
        assert!(c.get(b"big", key_hash(b"big"), 1).is_none());
        let none = RowCache::new(0);
        none.insert_hashed(b"k", key_hash(b"k"), 1, Kind::Put, b"v");
        none.insert_hashed(b"k", key_hash(b"k"), 1, Kind::Put, b"v");
        assert!(none.get(b"k", key_hash(b"k"), 1).is_none());
    }

    #[test]
    fn a_row_is_found_again_after_the_doorkeeper_is_cleared() {
        let c = RowCache::new(1 << 20);
        let h = key_hash(b"hot");
        c.insert_hashed(b"hot", h, 1, Kind::Blob, b"v");
        c.insert_hashed(b"hot", h, 1, Kind::Blob, b"v");
        assert_eq!(
            c.get(b"hot", h, 1).unwrap(),
            (Kind::Blob, Arc::from(&b"v"[..]))
        );
        // Offer other keys, each once (none is admitted, nothing is
        // evicted), until the doorkeeper is cleared.
        for i in 0..DOORKEEPER_PERIOD {
            let k = i.to_le_bytes();
            c.insert_hashed(&k, key_hash(&k), 1, Kind::Put, b"w");
        }
        assert!(!c.door.marked(h), "the doorkeeper was cleared");
        assert!(
            c.get(b"hot", h, 1).is_none(),
            "an unmarked key is not looked up"
        );
        assert!(c.rows.as_ref().unwrap().get(b"hot".as_slice()).is_some());
        c.insert_hashed(b"hot", h, 1, Kind::Blob, b"v");
        assert_eq!(
            &*c.get(b"hot", h, 1).unwrap().1,
            b"v",
            "marked again, found again"
        );
    }
}
