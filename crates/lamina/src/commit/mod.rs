//! The commit subsystem: everything between a write call and a durable,
//! visible write. Writers queue and take seqnos (`write`), make room in the
//! memtable (`room`), hand their records to the WAL segment (`segments`) and
//! their large values to the memtable's blob file (`blobs`), wait for the
//! sync that covers them (`pipeline`, `wait`), and publish in seqno order;
//! a full memtable is swapped for a fresh one and a fresh segment
//! (`rotation`).

mod blobs;
mod merge_check;
mod pipeline;
mod room;
mod rotation;
mod segments;
mod wait;
mod write;

pub(crate) use blobs::{hand_mark, ReplayedBlobs, ReplayedValues};
pub(crate) use pipeline::Pipeline;
pub(crate) use rotation::Debts;
pub(crate) use write::CommitQueue;
