//! Everything a caller can set when opening a database.

use crate::budget::{
    default_memory_budget, BudgetOptions, DEFAULT_CACHE_SIZE, DEFAULT_MEMTABLE_SIZE,
};
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
    /// Bytes of writes buffered in the active memtable before it is flushed.
    /// Default: derived from `memory_budget` (a quarter of it, at most 64 MiB).
    pub memtable_size: usize,
    /// Target size of a data block before compression. Default: 0, chosen
    /// from the data: from the sizes of the entries flushes write, about 1024
    /// entries a block between 4 and 64 KiB (16 KiB before the first
    /// flush), and 4 KiB below level 0 once the tables outgrow the block
    /// cache; `Stats::block_size_reason` says what was chosen and why.
    pub block_size: usize,
    /// Compression of data blocks. Default: LZ4.
    pub compression: Compression,
    /// Compression of data blocks in the last level. Default: LZ4.
    pub bottom_compression: Compression,
    /// Bloom filter bits per key (0 disables filters). Default: 10.
    pub bloom_bits_per_key: u32,
    /// Bytes of decompressed blocks kept in the block cache (the row cache
    /// gets an eighth of it on top). Default: derived from `memory_budget`
    /// (two thirds of it, memtables and open tables charged to it).
    pub cache_size: usize,
    /// Tables the table cache keeps open at once. Default: 1000. Point
    /// reads also keep open the tables of the current version they have
    /// read (when it lists no more than this many), so a table the cache
    /// lets go while the version still lists it stays open until the next
    /// flush or compaction: at most twice this many files open at once.
    pub max_open_tables: usize,
    /// Level-0 tables that trigger a compaction into level 1. Default: 4.
    pub l0_compaction_trigger: usize,
    /// Level-0 tables at which writers start being slowed. Default: 20.
    pub l0_slowdown_trigger: usize,
    /// Level-0 tables at which writers wait for compaction. Default: 36.
    pub l0_stop_trigger: usize,
    /// Target size of level 1 in bytes; each further level is
    /// `level_multiplier` times larger. Default: 0, chosen: what level 0
    /// holds at its trigger (`l0_compaction_trigger` × `memtable_size`, 256
    /// MiB with the default budget), between 16 MiB and 1 GiB;
    /// `Stats::level_sizes_reason` says what was chosen and why.
    pub level_base_size: u64,
    /// Growth factor between levels. Default: 0, chosen: 4, which rewrites
    /// less per byte written than the 10 of most leveled stores (TokuDB's
    /// db-update, `lamina-bench update`, ran 13 % faster in a deep tree;
    /// docs/design.md, "Settings chosen from the data").
    pub level_multiplier: u64,
    /// Target size of one table written by compaction. Default: 64 MiB.
    pub target_table_size: u64,
    /// Folds merge operands. Default: [`Add`], a u64 little-endian counter.
    pub merge_operator: Arc<dyn MergeOperator>,
    /// The file system. Default: the operating system's.
    pub fs: Arc<dyn FileSystem>,
    /// Values of at least this many bytes are kept in blob files, the tree
    /// holding a pointer to each (`usize::MAX` keeps every value in the tree).
    /// A Put of such a value writes it to a blob file at commit, once; the
    /// WAL logs only the pointer.
    /// Default: 4 KiB, a page. Values of 4 KiB and 16 KiB were written,
    /// overwritten and read faster kept apart than in the tree; values of
    /// 1 KiB were read faster but written about a fifth slower (each costs a
    /// write to its blob file at commit): `examples/dbbench --value_size V
    /// --blob_threshold T --benchmarks fillrandom,overwrite,readrandom`.
    pub blob_threshold: usize,
    /// A blob file whose dead bytes reach this share of its values has its
    /// live values moved by compaction and is removed. Default: 0.5.
    pub blob_gc_ratio: f64,
    /// Bytes of memory lamina may hold for this database: block cache, row
    /// cache, memtables (charged to the cache) and the index and filter
    /// blocks of open tables together. `cache_size` and `memtable_size`
    /// left at their defaults are derived from it (see docs/design.md#memory);
    /// one set to anything else wins. Default: an eighth of the memory the
    /// process may use (the machine's, or its control group's limit where
    /// lower), at least 64 MiB and at most 1 GiB
    /// ([`crate::default_memory_budget`]).
    pub memory_budget: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            read_only: false,
            durability: Durability::Os,
            memtable_size: DEFAULT_MEMTABLE_SIZE,
            block_size: crate::tuning::AUTOMATIC,
            compression: Compression::Lz4,
            bottom_compression: Compression::Lz4,
            bloom_bits_per_key: 10,
            cache_size: DEFAULT_CACHE_SIZE,
            max_open_tables: 1000,
            l0_compaction_trigger: 4,
            l0_slowdown_trigger: 20,
            l0_stop_trigger: 36,
            level_base_size: crate::tuning::levels::AUTOMATIC,
            level_multiplier: crate::tuning::levels::AUTOMATIC,
            target_table_size: 64 << 20,
            merge_operator: Arc::new(Add),
            fs: default_fs(),
            blob_threshold: 4 << 10,
            blob_gc_ratio: 0.5,
            memory_budget: default_memory_budget(),
        }
    }
}

impl BudgetOptions for Options {
    fn memory_budget(&self) -> usize {
        self.memory_budget
    }

    fn cache_size(&self) -> usize {
        self.cache_size
    }

    fn memtable_size(&self) -> usize {
        self.memtable_size
    }

    fn set_sizes(&mut self, cache_size: usize, memtable_size: usize) {
        self.cache_size = cache_size;
        self.memtable_size = memtable_size;
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
            .field("memory_budget", &self.memory_budget)
            .finish_non_exhaustive()
    }
}

/// The ranges [`Options::validate`] enforces.
mod limits {
    /// Smallest and largest memtable, in bytes.
    pub const MEMTABLE: (u64, u64) = (1 << 10, 1 << 34);
    /// Smallest and largest data block, in bytes (docs/format.md#block caps blocks at 256 MiB).
    pub const BLOCK: (u64, u64) = (64, crate::table::MAX_BLOCK_SIZE as u64);
    /// Largest bloom filter bits per key.
    pub const BLOOM_BITS: u64 = 100;
    /// Fewest and most open tables.
    pub const OPEN_TABLES: (u64, u64) = (1, 1 << 20);
    /// Smallest and largest level-0 trigger.
    pub const L0: (u64, u64) = (1, 10_000);
    /// Smallest and largest level-1 target, in bytes.
    pub const LEVEL_BASE: (u64, u64) = (1 << 10, 1 << 50);
    /// Smallest and largest growth factor between levels.
    pub const MULTIPLIER: (u64, u64) = (2, 1000);
    /// Smallest and largest table written by compaction, in bytes.
    pub const TABLE: (u64, u64) = (1 << 10, 1 << 40);
    /// Smallest and largest memory budget, in bytes.
    pub const MEMORY_BUDGET: (u64, u64) = (256 << 10, 1 << 50);
}

fn out_of_range(name: &str, value: u64, (lo, hi): (u64, u64)) -> crate::Error {
    crate::Error::InvalidArgument(format!(
        "option {name} is {value}; it must be between {lo} and {hi}"
    ))
}

fn in_range(name: &str, value: u64, range: (u64, u64)) -> crate::Result<()> {
    if value < range.0 || value > range.1 {
        return Err(out_of_range(name, value, range));
    }
    Ok(())
}

impl Options {
    /// Checks every option against its range, and the options that depend on
    /// one another: `l0_compaction_trigger < l0_slowdown_trigger ≤
    /// l0_stop_trigger` (otherwise writers would wait for a compaction that
    /// never starts). [`crate::Db::open`] calls it first.
    ///
    /// Errors: [`crate::Error::InvalidArgument`] naming the option, its value and
    /// the allowed range.
    pub fn validate(&self) -> crate::Result<()> {
        let u = |v: usize| v as u64;
        in_range("memtable_size", u(self.memtable_size), limits::MEMTABLE)?;
        if self.block_size != crate::tuning::AUTOMATIC {
            in_range("block_size", u(self.block_size), limits::BLOCK)?;
        }
        in_range(
            "bloom_bits_per_key",
            u64::from(self.bloom_bits_per_key),
            (0, limits::BLOOM_BITS),
        )?;
        in_range(
            "max_open_tables",
            u(self.max_open_tables),
            limits::OPEN_TABLES,
        )?;
        let (l0, slow, stop) = (
            u(self.l0_compaction_trigger),
            u(self.l0_slowdown_trigger),
            u(self.l0_stop_trigger),
        );
        in_range("l0_compaction_trigger", l0, limits::L0)?;
        in_range(
            "l0_slowdown_trigger",
            slow,
            (l0.saturating_add(1), limits::L0.1),
        )
        .map_err(|e| with_reason(e, "above l0_compaction_trigger"))?;
        in_range("l0_stop_trigger", stop, (slow, limits::L0.1))
            .map_err(|e| with_reason(e, "at least l0_slowdown_trigger"))?;
        let automatic = crate::tuning::levels::AUTOMATIC;
        if self.level_base_size != automatic {
            in_range("level_base_size", self.level_base_size, limits::LEVEL_BASE)
                .map_err(|e| with_reason(e, "or 0 to let lamina choose"))?;
        }
        if self.level_multiplier != automatic {
            in_range(
                "level_multiplier",
                self.level_multiplier,
                limits::MULTIPLIER,
            )
            .map_err(|e| with_reason(e, "or 0 to let lamina choose"))?;
        }
        in_range("target_table_size", self.target_table_size, limits::TABLE)?;
        in_range("blob_threshold", u(self.blob_threshold), (1, u64::MAX))?;
        in_range(
            "memory_budget",
            u(self.memory_budget),
            limits::MEMORY_BUDGET,
        )?;
        if !(0.0..=1.0).contains(&self.blob_gc_ratio) {
            return Err(crate::Error::InvalidArgument(format!(
                "option blob_gc_ratio is {}; it must be between 0 and 1",
                self.blob_gc_ratio
            )));
        }
        Ok(())
    }
}

/// Adds why a range starts where it does to an out-of-range error.
fn with_reason(e: crate::Error, why: &str) -> crate::Error {
    match e {
        crate::Error::InvalidArgument(m) => crate::Error::InvalidArgument(format!("{m} ({why})")),
        other => other,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn message(o: &Options) -> String {
        o.validate().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_valid() {
        Options::default().validate().unwrap();
    }

    #[test]
    fn each_range_names_the_option_and_its_bounds() {
        let o = Options {
            block_size: 1 << 40,
            ..Options::default()
        };
        assert_eq!(
            message(&o),
            "invalid argument: option block_size is 1099511627776; it must be between 64 and 268435456"
        );
        let o = Options {
            memtable_size: 0,
            ..Options::default()
        };
        assert!(message(&o).contains("memtable_size is 0"));
        let o = Options {
            level_multiplier: 1,
            ..Options::default()
        };
        assert!(message(&o).contains("level_multiplier is 1; it must be between 2 and 1000"));
    }

    #[test]
    fn triggers_must_rise() {
        let o = Options {
            l0_compaction_trigger: 8,
            l0_slowdown_trigger: 4,
            l0_stop_trigger: 4,
            ..Options::default()
        };
        assert_eq!(
            message(&o),
            "invalid argument: option l0_slowdown_trigger is 4; it must be between 9 and 10000 \
             (above l0_compaction_trigger)"
        );
        let o = Options {
            l0_slowdown_trigger: 30,
            l0_stop_trigger: 25,
            ..Options::default()
        };
        assert!(message(&o).contains("l0_stop_trigger is 25; it must be between 30"));
    }
}
