//! Caches shared by every reader: decompressed data blocks, and open tables;
//! and the counters of what readers asked of them and of the table files.

mod block_cache;
pub(crate) mod doorkeeper;
mod read_counts;
mod recent;
mod row_cache;
mod row_use;
mod table_cache;

pub use block_cache::{BlockCache, Charge};
pub(crate) use read_counts::Count;
pub use row_cache::RowCache;
#[cfg(test)]
pub(crate) use row_use::RowUse;
pub use table_cache::TableCache;
