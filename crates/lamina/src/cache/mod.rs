//! Caches shared by every reader: decompressed data blocks, and open tables.

mod block_cache;
mod table_cache;

pub use block_cache::BlockCache;
pub use table_cache::TableCache;
