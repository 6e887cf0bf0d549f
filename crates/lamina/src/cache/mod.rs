//! Caches shared by every reader: decompressed data blocks, and open tables.

mod block_cache;
pub(crate) mod doorkeeper;
mod recent;
mod row_cache;
mod row_use;
mod table_cache;

pub use block_cache::{BlockCache, Charge};
pub use row_cache::RowCache;
#[cfg(test)]
pub(crate) use row_use::RowUse;
pub use table_cache::TableCache;
