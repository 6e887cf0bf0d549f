//! The state one open database shares with its keyspaces, snapshots, batches
//! and iterators: the engine handle, whether it is read-only or closed, and a
//! write counter that tells cached lengths when they went stale.

use crate::errors::{closed, read_only, to_py};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub struct Shared {
    db: lamina::Db,
    path: PathBuf,
    read_only: bool,
    closed: AtomicBool,
    /// Bumped after every write made through this handle (see `Keyspace.__len__`).
    writes: AtomicU64,
}

impl Shared {
    pub fn new(db: lamina::Db, path: PathBuf, read_only: bool) -> Shared {
        Shared {
            db,
            path,
            read_only,
            closed: AtomicBool::new(false),
            writes: AtomicU64::new(0),
        }
    }

    /// The engine handle, closed or not (for work already checked by `db()`).
    pub fn engine(&self) -> &lamina::Db {
        &self.db
    }

    /// The engine handle, or `lamina.error` once closed.
    pub fn db(&self) -> PyResult<&lamina::Db> {
        if self.is_closed() {
            return Err(closed("database"));
        }
        Ok(&self.db)
    }

    /// The engine handle for a write, or `lamina.error` when closed or read-only.
    pub fn writable(&self) -> PyResult<&lamina::Db> {
        let db = self.db()?;
        if self.read_only {
            return Err(read_only());
        }
        Ok(db)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub fn read_only(&self) -> bool {
        self.read_only
    }

    pub fn path(&self) -> &PathBuf {
        &self.path
    }

    /// Records that a write happened (call after it, whether or not it
    /// succeeded). The interpreter lock, which `_py` says is held, orders
    /// every call: a load and a store, no locked instruction.
    pub fn wrote(&self, _py: Python<'_>) {
        let n = self.writes.load(Ordering::Relaxed);
        self.writes.store(n.wrapping_add(1), Ordering::Release);
    }

    /// The write counter: a cached length is valid while this is unchanged.
    pub fn write_count(&self) -> u64 {
        self.writes.load(Ordering::Acquire)
    }

    /// Closes the engine handle (idempotent). Everything written becomes durable.
    pub fn close(&self, py: Python<'_>) -> PyResult<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        py.detach(|| self.db.close()).map_err(to_py)
    }
}

impl Drop for Shared {
    /// A database dropped without `close()` is closed here, so its lock is
    /// released and its writes made durable; errors have nowhere to go.
    fn drop(&mut self) {
        if !self.closed.swap(true, Ordering::AcqRel) {
            let _ = self.db.close();
        }
    }
}
