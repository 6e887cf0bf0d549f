//! The background subsystem: the work a database does on its own threads —
//! flushing full memtables to level-0 tables (`flush`), choosing and running
//! compactions (`compact`, over the policy in `crate::compaction`), and
//! collecting blob files whose values are mostly dead (`blobs`).

mod blobs;
mod compact;
mod flush;
