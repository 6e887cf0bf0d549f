//! Everything a caller can set when opening a database.

use crate::fs::{default_fs, FileSystem};
use crate::merge::{Add, MergeOperator};
use std::fmt;
use std::sync::Arc;

/// How durable a write is when the call that made it returns.
///
/// Whatever the choice, `Db::sync`, `Db::flush` and `Db::close` make every
/// earlier write durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// On stable storage before the call returns (the WAL is fsynced; concurrent
    /// writers share one fsync).
    Sync,
    /// Handed to the operating system before the call returns: it survives the
    /// process being killed, but not a power loss until the next `sync()`.
    #[default]
    Os,
    /// Buffered in the process; durable only after `flush()`, `sync()` or `close()`.
    /// For bulk loads.
    None,
}

/// Block compression.
///
/// Written to disk (the block trailer); never renumber.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Compression {
    /// Stored as is.
    None = 0,
    /// LZ4 block format (fast; the default).
    #[default]
    Lz4 = 1,
    /// zstd (smaller, slower).
    Zstd = 2,
}

/// Options for [`crate::Db::open`]. `Options::default()` needs no tuning.
#[derive(Clone)]
pub struct Options {
    /// Create the database if the directory holds none. Default: true.
    pub create_if_missing: bool,
    /// Fail with `AlreadyExists` if a database is already there. Default: false.
    pub error_if_exists: bool,
    /// Open without the lock and refuse every write. Default: false.
    pub read_only: bool,
    /// Durability of writes that do not choose one. Default: [`Durability::Os`].
    pub durability: Durability,
    /// Bytes of writes buffered in the active memtable before it is flushed. Default: 64 MiB.
    pub memtable_size: usize,
    /// Target size of a data block before compression. Default: 16 KiB.
    pub block_size: usize,
    /// Compression of data blocks. Default: LZ4.
    pub compression: Compression,
    /// Compression of data blocks in the last level. Default: LZ4.
    pub bottom_compression: Compression,
    /// Bloom filter bits per key (0 disables filters). Default: 10.
    pub bloom_bits_per_key: u32,
    /// Bytes of decompressed blocks kept in the block cache. Default: 256 MiB.
    pub cache_size: usize,
    /// Tables kept open at once. Default: 1000.
    pub max_open_tables: usize,
    /// Level-0 tables that trigger a compaction into level 1. Default: 4.
    pub l0_compaction_trigger: usize,
    /// Level-0 tables at which writers start being slowed. Default: 20.
    pub l0_slowdown_trigger: usize,
    /// Level-0 tables at which writers wait for compaction. Default: 36.
    pub l0_stop_trigger: usize,
    /// Target size of level 1 in bytes; each further level is `level_multiplier` times larger.
    /// Default: 256 MiB.
    pub level_base_size: u64,
    /// Growth factor between levels. Default: 10.
    pub level_multiplier: u64,
    /// Target size of one table written by compaction. Default: 64 MiB.
    pub target_table_size: u64,
    /// Folds merge operands. Default: [`Add`], a u64 little-endian counter.
    pub merge_operator: Arc<dyn MergeOperator>,
    /// The file system. Default: the operating system's.
    pub fs: Arc<dyn FileSystem>,
    /// Values of at least this many bytes are kept in blob files, the tree
    /// holding a pointer to each (`usize::MAX` keeps every value in the tree).
    /// Default: 8 KiB, half a data block: a smaller value shares its block
    /// with others, a larger one fills a block of its own and gains nothing
    /// from the tree but being rewritten by every compaction.
    pub blob_threshold: usize,
    /// A blob file whose dead bytes reach this share of its values has its
    /// live values moved by compaction and is removed. Default: 0.5.
    pub blob_gc_ratio: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            read_only: false,
            durability: Durability::Os,
            memtable_size: 64 << 20,
            block_size: 16 << 10,
            compression: Compression::Lz4,
            bottom_compression: Compression::Lz4,
            bloom_bits_per_key: 10,
            cache_size: 256 << 20,
            max_open_tables: 1000,
            l0_compaction_trigger: 4,
            l0_slowdown_trigger: 20,
            l0_stop_trigger: 36,
            level_base_size: 256 << 20,
            level_multiplier: 10,
            target_table_size: 64 << 20,
            merge_operator: Arc::new(Add),
            fs: default_fs(),
            blob_threshold: 8 << 10,
            blob_gc_ratio: 0.5,
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("create_if_missing", &self.create_if_missing)
            .field("error_if_exists", &self.error_if_exists)
            .field("read_only", &self.read_only)
            .field("durability", &self.durability)
            .field("memtable_size", &self.memtable_size)
            .field("block_size", &self.block_size)
            .field("compression", &self.compression)
            .field("bottom_compression", &self.bottom_compression)
            .field("bloom_bits_per_key", &self.bloom_bits_per_key)
            .field("cache_size", &self.cache_size)
            .field("max_open_tables", &self.max_open_tables)
            .field("l0_compaction_trigger", &self.l0_compaction_trigger)
            .field("l0_slowdown_trigger", &self.l0_slowdown_trigger)
            .field("l0_stop_trigger", &self.l0_stop_trigger)
            .field("level_base_size", &self.level_base_size)
            .field("level_multiplier", &self.level_multiplier)
            .field("target_table_size", &self.target_table_size)
            .field("merge_operator", &self.merge_operator.name())
            .field("blob_threshold", &self.blob_threshold)
            .field("blob_gc_ratio", &self.blob_gc_ratio)
            .finish_non_exhaustive()
    }
}
