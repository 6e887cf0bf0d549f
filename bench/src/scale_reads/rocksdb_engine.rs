//! RocksDB (the `rocksdb` crate, its C++ built here in release mode) under
//! `lamina-bench scale-reads`, with the settings RocksDB recommends for
//! point lookups in data far larger than memory (its wiki's "Partitioned
//! Index/Filters"): a two-level index and partitioned full bloom filters
//! of 10 bits per key in 4 KiB metadata blocks, index and filter blocks
//! kept in the block cache at high priority with the top level pinned, 4
//! KiB data blocks (its default), LZ4. The load: `SstFileWriter` tables of
//! 64 MiB written in key order, added by `IngestExternalFile` (moved in),
//! RocksDB's documented fastest full load. The lookups: a read-only open
//! with an LRU block cache of the cache share of the cap; single gets by
//! `get_pinned`, batches by `MultiGet` (`batched_multi_get_cf`), its own
//! batched lookup.

use super::{Engine, Load, Reader};
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType,
    IngestExternalFileOptions, SstFileWriter, DB,
};
use std::path::{Path, PathBuf};

/// Bytes at which the load cuts a table (RocksDB's `target_file_size_base`).
const TABLE_SIZE: u64 = 64 << 20;

fn err(e: rocksdb::Error) -> String {
    format!("rocksdb: {e}")
}

/// The options of the load and of the lookups; `cache` is the block cache
/// of the lookups.
fn options(cache: Option<&Cache>) -> rocksdb::Options {
    let mut bb = BlockBasedOptions::default();
    bb.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    bb.set_partition_filters(true);
    bb.set_metadata_block_size(4096);
    bb.set_bloom_filter(10.0, false);
    bb.set_cache_index_and_filter_blocks(true);
    bb.set_cache_index_and_filter_blocks_with_high_priority(true);
    bb.set_pin_top_level_index_and_filter(true);
    bb.set_pin_l0_filter_and_index_blocks_in_cache(true);
    if let Some(c) = cache {
        bb.set_block_cache(c);
    }
    let mut opts = rocksdb::Options::default();
    opts.set_block_based_table_factory(&bb);
    opts.set_compression_type(DBCompressionType::Lz4);
    opts
}

/// Loads the records into a new database in `dir`.
pub fn build(dir: &Path, load: &mut Load) -> Result<(), String> {
    let staging = dir.with_extension("load");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    let opts = options(None);
    let mut tables: Vec<PathBuf> = Vec::new();
    let mut writer: Option<SstFileWriter> = None;
    load.for_each(&mut |k, v| {
        if writer.as_ref().is_none_or(|w| w.file_size() >= TABLE_SIZE) {
            if let Some(mut full) = writer.take() {
                full.finish().map_err(err)?;
            }
            let path = staging.join(format!("{:06}.sst", tables.len()));
            let w = SstFileWriter::create(&opts);
            w.open(&path).map_err(err)?;
            tables.push(path);
            writer = Some(w);
        }
        match &mut writer {
            Some(w) => w.put(k, v).map_err(err),
            None => Ok(()),
        }
    })?;
    if let Some(mut last) = writer {
        last.finish().map_err(err)?;
    }
    let mut db_opts = options(None);
    db_opts.create_if_missing(true);
    db_opts.set_error_if_exists(true);
    let db = DB::open(&db_opts, dir).map_err(err)?;
    let mut ingest = IngestExternalFileOptions::default();
    ingest.set_move_files(true);
    db.ingest_external_file_opts(&ingest, tables).map_err(err)?;
    drop(db);
    std::fs::remove_dir_all(&staging).map_err(|e| format!("{}: {e}", staging.display()))
}

/// The database in `dir`, opened read-only.
pub struct RocksEngine {
    db: DB,
    /// Kept alive beside the database (the options hold it too).
    _cache: Cache,
}

impl RocksEngine {
    /// Opens the database in `dir` for the lookups with a block cache of
    /// `cache` bytes.
    pub fn open(dir: &Path, cache: usize) -> Result<RocksEngine, String> {
        let block_cache = Cache::new_lru_cache(cache);
        let opts = options(Some(&block_cache));
        // The default column family by name, with the options above, so
        // that MultiGet has its handle.
        let cf = ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
        let db = DB::open_cf_descriptors_read_only(&opts, dir, [cf], false).map_err(err)?;
        Ok(RocksEngine {
            db,
            _cache: block_cache,
        })
    }
}

impl Engine for RocksEngine {
    fn reader(&self) -> Result<Box<dyn Reader + '_>, String> {
        Ok(Box::new(RocksReader { db: &self.db }))
    }
}

struct RocksReader<'a> {
    db: &'a DB,
}

impl Reader for RocksReader<'_> {
    fn get(&mut self, key: &[u8], seen: &mut dyn FnMut(Option<&[u8]>)) -> Result<(), String> {
        let v = self.db.get_pinned(key).map_err(err)?;
        seen(v.as_deref());
        Ok(())
    }

    fn get_many(
        &mut self,
        keys: &[&[u8]],
        seen: &mut dyn FnMut(usize, Option<&[u8]>),
    ) -> Result<(), String> {
        let cf = self
            .db
            .cf_handle(rocksdb::DEFAULT_COLUMN_FAMILY_NAME)
            .ok_or("rocksdb: no default column family")?;
        for (i, v) in self
            .db
            .batched_multi_get_cf(cf, keys, false)
            .into_iter()
            .enumerate()
        {
            seen(i, v.map_err(err)?.as_deref());
        }
        Ok(())
    }
}
