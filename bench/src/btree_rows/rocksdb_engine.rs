//! RocksDB (the `rocksdb` crate, its C++ built here in release mode) under
//! the rows of `lamina-bench btree-rows`, as redb's harness drives it: an
//! `OptimisticTransactionDB` with an LRU block cache of 4 GiB that holds
//! the index and filter blocks, a write buffer manager of half of it
//! charged to that cache, `max_write_buffer_size_to_maintain` the same, a
//! bloom filter of 10 bits per key and `increase_parallelism(cores)`.
//! Write transactions take a snapshot and sync on commit when durable;
//! every 100,000 writes a transaction is committed and a new one begun
//! with the default options (not synced: the harness's cap on RocksDB's
//! memory for large transactions). Pop, retain and extract_if iterate the
//! transaction and delete through it; reads go to a snapshot (len counts
//! its iterator); compaction is `compact_range` over everything; sorted
//! inserts are puts (the harness gives RocksDB no sorted path).

use super::{Engine, Reader, Writer, CACHE_SIZE};
use rocksdb::{
    BlockBasedOptions, Cache, Direction, IteratorMode, OptimisticTransactionDB,
    OptimisticTransactionOptions, WriteBufferManager, WriteOptions,
};
use std::path::Path;

/// Writes after which a transaction is committed and another begun.
const MAX_WRITES_PER_TXN: u64 = 100_000;

fn err(e: rocksdb::Error) -> String {
    format!("rocksdb: {e}")
}

/// An open RocksDB database.
pub struct RocksEngine {
    db: OptimisticTransactionDB,
    /// Kept alive beside the database (the options hold them too).
    _cache: Cache,
    _write_buffer: WriteBufferManager,
}

impl RocksEngine {
    /// Opens (creating) the database in `dir`.
    pub fn open(dir: &Path) -> Result<RocksEngine, String> {
        let cache = Cache::new_lru_cache(CACHE_SIZE);
        let write_buffer = WriteBufferManager::new_write_buffer_manager_with_cache(
            CACHE_SIZE / 2,
            false,
            cache.clone(),
        );
        let mut bb = BlockBasedOptions::default();
        bb.set_block_cache(&cache);
        bb.set_bloom_filter(10.0, false);
        bb.set_cache_index_and_filter_blocks(true);
        bb.set_pin_l0_filter_and_index_blocks_in_cache(false);
        bb.set_pin_top_level_index_and_filter(false);
        let mut opts = rocksdb::Options::default();
        opts.set_block_based_table_factory(&bb);
        opts.set_write_buffer_manager(&write_buffer);
        opts.set_max_write_buffer_size_to_maintain((CACHE_SIZE / 2) as i64);
        opts.create_if_missing(true);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        opts.increase_parallelism(i32::try_from(cores).unwrap_or(1));
        let db = OptimisticTransactionDB::open(&opts, dir).map_err(err)?;
        Ok(RocksEngine {
            db,
            _cache: cache,
            _write_buffer: write_buffer,
        })
    }
}

type Txn<'a> = rocksdb::Transaction<'a, OptimisticTransactionDB>;

struct RocksWriter<'a> {
    db: &'a OptimisticTransactionDB,
    txn: Txn<'a>,
    /// Writes since the transaction began.
    counter: u64,
}

impl RocksWriter<'_> {
    /// Counts a write; at the cap commits the transaction and begins
    /// another with the default options, as the harness does.
    fn count(&mut self) -> Result<(), String> {
        self.counter += 1;
        if self.counter == MAX_WRITES_PER_TXN {
            let old = std::mem::replace(&mut self.txn, self.db.transaction());
            old.commit().map_err(err)?;
            self.counter = 0;
        }
        Ok(())
    }

    fn pop(&mut self, mode: IteratorMode<'_>, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        let entry = self.txn.iterator(mode).next().transpose().map_err(err)?;
        let Some((k, _)) = entry else {
            return Ok(false);
        };
        self.remove(&k)?;
        seen(&k);
        Ok(true)
    }
}

impl Writer for RocksWriter<'_> {
    fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.count()?;
        self.txn.put(key, value).map_err(err)
    }

    fn insert_sorted<'p>(
        &mut self,
        pairs: &mut dyn Iterator<Item = (&'p [u8], &'p [u8])>,
    ) -> Result<(), String> {
        for (k, v) in pairs {
            self.insert(k, v)?;
        }
        Ok(())
    }

    fn remove(&mut self, key: &[u8]) -> Result<(), String> {
        self.count()?;
        self.txn.delete(key).map_err(err)
    }

    fn pop_first(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        self.pop(IteratorMode::Start, seen)
    }

    fn pop_last(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        self.pop(IteratorMode::End, seen)
    }

    fn retain(&mut self, keep: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<u64, String> {
        // No cursor delete in a transaction: collect, then delete.
        let mut keys = Vec::new();
        for entry in self.txn.iterator(IteratorMode::Start) {
            let (k, v) = entry.map_err(err)?;
            if !keep(&k, &v) {
                keys.push(k);
            }
        }
        for k in &keys {
            self.remove(k)?;
        }
        Ok(keys.len() as u64)
    }

    fn extract_if(
        &mut self,
        start: &[u8],
        end: &[u8],
        extract: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64, String> {
        let mut entries = Vec::new();
        for entry in self
            .txn
            .iterator(IteratorMode::From(start, Direction::Forward))
        {
            let (k, v) = entry.map_err(err)?;
            if &*k >= end {
                break;
            }
            if extract(&k, &v) {
                entries.push((k, v));
            }
        }
        for (k, _) in &entries {
            self.remove(k)?;
        }
        Ok(entries.len() as u64)
    }
}

struct RocksReader<'a> {
    snap: rocksdb::SnapshotWithThreadMode<'a, OptimisticTransactionDB>,
}

impl Reader for RocksReader<'_> {
    fn get(&mut self, key: &[u8]) -> Result<Option<u8>, String> {
        Ok(self
            .snap
            .get(key)
            .map_err(err)?
            .map(|v| v.first().copied().unwrap_or(0)))
    }

    fn range_from(
        &mut self,
        start: &[u8],
        n: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, String> {
        let mut seen = 0;
        for entry in self
            .snap
            .iterator(IteratorMode::From(start, Direction::Forward))
            .take(n)
        {
            let (k, v) = entry.map_err(err)?;
            visit(&k, &v);
            seen += 1;
        }
        Ok(seen)
    }

    fn len(&mut self) -> Result<u64, String> {
        let mut n = 0;
        for entry in self.snap.iterator(IteratorMode::Start) {
            entry.map_err(err)?;
            n += 1;
        }
        Ok(n)
    }
}

impl Engine for RocksEngine {
    fn write(
        &mut self,
        durable: bool,
        f: &mut dyn FnMut(&mut dyn Writer) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut wo = WriteOptions::new();
        wo.set_sync(durable);
        let mut to = OptimisticTransactionOptions::new();
        to.set_snapshot(true);
        let mut w = RocksWriter {
            db: &self.db,
            txn: self.db.transaction_opt(&wo, &to),
            counter: 0,
        };
        f(&mut w)?;
        w.txn.commit().map_err(err)
    }

    fn read(&self, f: &mut dyn FnMut(&mut dyn Reader) -> Result<(), String>) -> Result<(), String> {
        f(&mut RocksReader {
            snap: self.db.snapshot(),
        })
    }

    fn compact(&mut self) -> Result<(), String> {
        self.db.compact_range::<&[u8], &[u8]>(None, None);
        Ok(())
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        drop(self);
        Ok(())
    }
}
