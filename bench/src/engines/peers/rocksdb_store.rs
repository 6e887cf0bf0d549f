//! RocksDB through the `rocksdb` crate: default options, LZ4, a block cache
//! and write buffers that add up to lamina's budget, a bloom filter of
//! lamina's 10 bits per key, writes with the WAL and no sync.

use super::super::order::Key;
use super::super::store::{Config, Op, Store};
use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, WriteBatch, WriteOptions, DB};
use std::path::Path;

/// An open RocksDB database.
pub struct RocksStore {
    db: DB,
    wo: WriteOptions,
}

fn err(e: rocksdb::Error) -> String {
    format!("rocksdb: {e}")
}

impl RocksStore {
    /// Opens (creating) the database in `path`.
    pub fn open(path: &Path, cfg: &Config) -> Result<RocksStore, String> {
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(DBCompressionType::Lz4);
        opts.set_write_buffer_size(cfg.write_buffer as usize);
        opts.set_max_write_buffer_number(2);
        let cache = Cache::new_lru_cache(cfg.cache_beside_two_write_buffers() as usize);
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&cache);
        table.set_bloom_filter(10.0, false);
        opts.set_block_based_table_factory(&table);
        let db = DB::open(&opts, path).map_err(err)?;
        // sync off, WAL on: each write is handed to the OS before it returns.
        let wo = WriteOptions::default();
        Ok(RocksStore { db, wo })
    }
}

impl Store for RocksStore {
    fn write(&mut self, ops: &[Op<'_>]) -> Result<(), String> {
        match ops {
            [Op {
                key,
                value: Some(v),
            }] => self.db.put_opt(key, v, &self.wo).map_err(err),
            [Op { key, value: None }] => self.db.delete_opt(key, &self.wo).map_err(err),
            _ => {
                let mut batch = WriteBatch::default();
                for op in ops {
                    match op.value {
                        Some(v) => batch.put(op.key, v),
                        None => batch.delete(op.key),
                    }
                }
                self.db.write_opt(batch, &self.wo).map_err(err)
            }
        }
    }

    fn gets(&mut self, keys: &mut dyn Iterator<Item = Key>) -> Result<(u64, u64), String> {
        let (mut found, mut bytes) = (0, 0);
        for k in keys {
            if let Some(v) = self.db.get_pinned(k).map_err(err)? {
                found += 1;
                bytes += v.len() as u64;
            }
        }
        Ok((found, bytes))
    }

    fn scan(&mut self) -> Result<(u64, u64), String> {
        let (mut n, mut bytes) = (0, 0);
        let mut it = self.db.raw_iterator();
        it.seek_to_first();
        while it.valid() {
            let k = it.key().map_or(0, <[u8]>::len);
            let v = it.value().map_or(0, <[u8]>::len);
            n += 1;
            bytes += (k + v) as u64;
            it.next();
        }
        it.status().map_err(err)?;
        Ok((n, bytes))
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        drop(self);
        Ok(())
    }
}
