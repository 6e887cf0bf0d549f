//! The background subsystem: the work a database does on its own threads —
//! flushing full memtables to level-0 tables (`flush`), choosing and running
//! compactions (`compact`, over the policy in `crate::compaction`), and
//! collecting blob files whose values are mostly dead (`blobs`).

mod blobs;
mod compact;
mod flush;

use crate::db::Inner;
use crate::error::{Error, Result};
use crate::fs::Writeback;
use crate::tuning::DataShape;
use parking_lot::Mutex;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The background subsystem's state.
#[derive(Default)]
pub(crate) struct Background {
    /// Held by whoever runs a compaction (and by backup and ingest, so that
    /// none runs meanwhile).
    compaction_lock: Mutex<()>,
    /// The flush and compaction threads, joined by `close`.
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// What the entries flushed since open look like: the block size is
    /// chosen from it (`crate::tuning`).
    shape: Mutex<DataShape>,
    /// Ranges of WAL segments and of blob files written at commit whose
    /// write-back the flush thread starts (a leaf lock).
    writeback: Mutex<Vec<Writeback>>,
    /// Held while tables and blob files that left the version are
    /// removed, so that a caller who then holds it finds the removal
    /// others began finished (`compact` returns with its inputs gone).
    /// Taken with none of the engine's locks held; `state` is taken under it.
    removing: Mutex<()>,
}

impl Background {
    /// Held while no compaction may run (backup, ingest); waits for one
    /// running.
    pub(crate) fn hold_compactions(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.compaction_lock.lock()
    }

    /// [`Background::hold_compactions`] if no compaction runs now.
    pub(crate) fn try_hold_compactions(&self) -> Option<parking_lot::MutexGuard<'_, ()>> {
        self.compaction_lock.try_lock()
    }

    /// Adds what bulk-built tables looked like to the shape block sizes are
    /// chosen from.
    pub(crate) fn observe_shape(&self, seen: &DataShape) {
        self.shape.lock().merge(seen);
    }

    /// Held while files that left the version are removed (see `removing`).
    pub(crate) fn hold_removals(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.removing.lock()
    }

    /// Takes the flush and compaction threads, to be joined.
    pub(crate) fn take_threads(&self) -> Vec<JoinHandle<()>> {
        std::mem::take(&mut *self.threads.lock())
    }
}

impl Inner {
    /// Starts the flush and compaction threads of a read-write handle.
    pub(crate) fn start_threads(self: &Arc<Self>) -> Result<()> {
        let mut threads = self.background().threads.lock();
        let a = Arc::clone(self);
        threads.push(
            std::thread::Builder::new()
                .name("lamina-flush".into())
                .spawn(move || a.flush_loop())
                .map_err(Error::from)?,
        );
        let b = Arc::clone(self);
        threads.push(
            std::thread::Builder::new()
                .name("lamina-compact".into())
                .spawn(move || b.compaction_loop())
                .map_err(Error::from)?,
        );
        Ok(())
    }
}
