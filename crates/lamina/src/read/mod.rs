//! The read subsystem: the view published to readers (memtables and
//! version, swapped atomically by writers and background threads), point
//! lookups through it (`point`), the table handles a view keeps open
//! (`table_handles`), and the iterators, snapshots and cursors users read
//! with (`iter`, `snapshot`, `seek_cursor`).

mod iter;
mod point;
mod seek_cursor;
mod snapshot;
mod table_handles;

pub use iter::Iter;

pub use point::Cached;
pub(crate) use point::Pinned;
pub use seek_cursor::SeekCursor;
pub use snapshot::Snapshot;
