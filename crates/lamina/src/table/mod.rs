//! Tables: immutable sorted files of internal keys and values.
//!
//! A table is written once by a [`TableBuilder`] (flush or compaction) and
//! then read through a [`Table`]: point lookups with [`Table::get_point`],
//! which consults the filter and the block's hash index and copies nothing,
//! and ordered scans in both directions with a [`TableIter`]. Data blocks are read through the shared
//! [`BlockCache`](crate::cache::BlockCache), from the table's read-only
//! mapping where the file system can map it (in place, not cached, for a
//! block of a page once the data outgrows the cache); the index and the
//! filter are pinned in the `Table`.
//!
//! Layout: docs/format.md#table.

mod block;
mod block_builder;
mod bloom;
mod builder;
mod compress;
mod filter_use;
mod footer;
#[cfg(test)]
mod point_tests;
mod properties;
mod readahead;
mod reader;
mod slots;
mod table_iter;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;
mod writer_props;

pub use block::Block;
pub use builder::TableBuilder;
pub use reader::{key_hash, Probe, Table};
pub use slots::evicted as block_evicted;
pub use table_iter::TableIter;
pub use writer_props::WriterProps;
#[cfg(any(test, feature = "internals"))]
pub use {
    block::{BlockIter, KeyBuf},
    block_builder::BlockBuilder,
    bloom::{BlockedBloom, BloomBuilder},
    builder::TableSummary,
    footer::{BlockHandle, Footer, FOOTER_LEN, TABLE_MAGIC, TABLE_VERSION},
    properties::Properties,
};

use crate::Compression;

/// How a [`TableBuilder`] lays out a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableOptions {
    /// Uncompressed size at which a data block is cut. Default: 16 KiB.
    /// Values below 1 act as 1 and values above [`MAX_BLOCK_SIZE`] as
    /// `MAX_BLOCK_SIZE`.
    pub block_size: usize,
    /// Entries between restart points in data blocks. Default: 16.
    /// 0 acts as 1.
    pub restart_interval: usize,
    /// Compression of data and index blocks. Default: LZ4.
    pub compression: Compression,
    /// Bloom filter bits per distinct tree key; 0 writes an empty filter
    /// that matches everything. Default: 10.
    pub bloom_bits_per_key: u32,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: 16 << 10,
            restart_interval: 16,
            compression: Compression::Lz4,
            bloom_bits_per_key: 10,
        }
    }
}

/// A page of the device and of the page cache: data blocks of this size
/// are cut to end on the file's page boundaries, so that a point read that
/// misses the cache reads one page; and a block within one page is read
/// through the table's mapping, where touching it costs one page fault at
/// most.
const PAGE: usize = 4096;

/// Largest `block_size` a builder honours (larger requests are clamped).
pub const MAX_BLOCK_SIZE: usize = 256 << 20;

/// Largest uncompressed block a reader accepts; anything claiming more is
/// corruption. A block is at most `MAX_BLOCK_SIZE` plus one entry (a key of
/// at most 64 KiB and a value of at most 256 MiB) plus its restart array.
pub const MAX_BLOCK_LEN: usize = 1 << 30;
