//! Asking for the write-back of a file being appended to, a whole step at a
//! time, so that the sync which later makes it durable finds little left to
//! write. Durability is unchanged: only a sync makes bytes durable.

use super::WritableFile;
use std::sync::Arc;

/// Bytes whose write-back is asked for at once, at offsets that are
/// multiples of it.
pub(crate) const WRITEBACK_STEP: u64 = 4 << 20;

/// Bytes of a file whose write-back is to be started from another thread
/// ([`super::FileSyncer::start_writeback`]): the file, and the range.
pub(crate) type Writeback = (Arc<dyn super::FileSyncer>, u64, u64);

/// How far the write-back of one file was asked for.
#[derive(Debug, Default)]
pub(crate) struct WritebackMark {
    /// The bytes below this were asked for.
    asked: u64,
}

impl WritebackMark {
    /// The whole steps below `end` (bytes handed to `file`, never written
    /// again) not asked for yet, if any, with `file`'s syncer to start them
    /// from another thread; marks them asked for. One comparison while less
    /// than a step was handed to the file since the last.
    pub fn due(&mut self, end: u64, file: &dyn WritableFile) -> Option<Writeback> {
        if end < self.asked + WRITEBACK_STEP {
            return None;
        }
        let to = end / WRITEBACK_STEP * WRITEBACK_STEP;
        let from = std::mem::replace(&mut self.asked, to);
        Some((file.syncer()?, from, to))
    }
}
