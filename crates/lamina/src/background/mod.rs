//! The background subsystem: the work a database does on its own threads —
//! flushing full memtables to level-0 tables (`flush`), choosing and running
//! compactions (`compact`, over the policy in `crate::compaction`), and
//! collecting blob files whose values are mostly dead (`blobs`).

mod blobs;
mod compact;
mod flush;

use crate::db::Inner;
use crate::error::Error;
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
    /// The flush and compaction threads, started when work first comes
    /// ([`Inner::wake_background`]), joined by `close`.
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
    /// Wakes the background threads for work just made (a memtable sealed,
    /// a write-back asked for, a version installed that may want a
    /// compaction), starting them first if the handle has none yet: a
    /// handle opened to write a key or two and closed (`shelve`) starts
    /// none, where two threads made and joined were a third of the time of
    /// such a round besides its sync. Once `close` has begun it only wakes.
    pub(crate) fn wake_background(&self) {
        self.start_background();
        self.bg_cv().notify_all();
    }

    /// At open: starts the background threads if work waits already (a
    /// version that wants a compaction or a blob collection).
    pub(crate) fn start_background_if_due(&self) {
        let version = Arc::clone(&self.state().lock().version);
        if self.background_task_due(&version) {
            self.start_background();
        }
    }

    /// Starts the flush and compaction threads of a read-write handle,
    /// unless they run, the handle is closing or read-only, or this is a
    /// process forked after the open. A thread that cannot be started
    /// poisons the handle: nothing would flush its memtables.
    fn start_background(&self) {
        let mut threads = self.background().threads.lock();
        if !threads.is_empty() || self.is_closed() || self.opts().read_only {
            return;
        }
        let Some(me) = self.shared() else {
            return;
        };
        let a = Arc::clone(&me);
        let flush = std::thread::Builder::new()
            .name("lamina-flush".into())
            .spawn(move || a.flush_loop());
        let compact = flush.and_then(|f| {
            threads.push(f);
            std::thread::Builder::new()
                .name("lamina-compact".into())
                .spawn(move || me.compaction_loop())
        });
        match compact {
            Ok(c) => threads.push(c),
            Err(e) => self.poison(&Error::from(e)),
        }
    }
}
