//! `lamina.Cursor`: a position in a keyspace that seeks and moves both ways.

use crate::convert;
use crate::errors::{closed, to_py};
use crate::state::Shared;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::sync::Arc;

/// A cursor over one keyspace, as rocksdict's and py-lmdb's are: `seek(key)`
/// (first key `>= key`), `seek_for_prev(key)` (last key `<= key`),
/// `first()`, `last()`, `next()`, `prev()`, then `key()`, `value()`,
/// `item()` and `valid()` for the entry it is on.
///
/// Every move returns `valid()`. A cursor starts on no entry; moving past
/// either end leaves it on none, and `next()`/`prev()` there do nothing. It
/// reads the data as of its creation (or its snapshot's), never blocks
/// writers, and raises `lamina.error` once the database is closed.
#[pyclass(module = "lamina", name = "Cursor", frozen)]
pub struct Cursor {
    shared: Arc<Shared>,
    inner: Mutex<lamina::SeekCursor>,
}

impl Cursor {
    pub fn new(shared: Arc<Shared>, cursor: lamina::SeekCursor) -> Cursor {
        Cursor {
            shared,
            inner: Mutex::new(cursor),
        }
    }

    /// Runs a move without the GIL; returns whether the cursor is on an entry.
    fn go(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut lamina::SeekCursor) -> lamina::Result<()> + Send,
    ) -> PyResult<bool> {
        if self.shared.is_closed() {
            return Err(closed("database"));
        }
        py.detach(|| {
            let mut c = self.inner.lock();
            f(&mut c).map(|()| c.valid())
        })
        .map_err(to_py)
    }
}

#[pymethods]
impl Cursor {
    /// Moves to the first key `>= key`.
    fn seek(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = convert::key(key)?;
        self.go(py, |c| c.seek(k))
    }

    /// Moves to the last key `<= key`.
    fn seek_for_prev(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = convert::key(key)?;
        self.go(py, |c| c.seek_for_prev(k))
    }

    /// Moves to the smallest key.
    fn first(&self, py: Python<'_>) -> PyResult<bool> {
        self.go(py, |c| c.seek_to_first())
    }

    /// Moves to the largest key.
    fn last(&self, py: Python<'_>) -> PyResult<bool> {
        self.go(py, |c| c.seek_to_last())
    }

    /// Moves to the next key.
    fn next(&self, py: Python<'_>) -> PyResult<bool> {
        self.go(py, |c| c.move_next())
    }

    /// Moves to the previous key.
    fn prev(&self, py: Python<'_>) -> PyResult<bool> {
        self.go(py, |c| c.move_prev())
    }

    /// True when the cursor is on an entry.
    fn valid(&self) -> bool {
        self.inner.lock().valid()
    }

    /// The key of the entry, or `None` when on none.
    fn key<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.inner.lock().key().map(|k| PyBytes::new(py, k))
    }

    /// The value of the entry, or `None` when on none.
    fn value<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.inner.lock().value().map(|v| PyBytes::new(py, v))
    }

    /// `(key, value)` of the entry, or `None` when on none.
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let c = self.inner.lock();
        match (c.key(), c.value()) {
            (Some(k), Some(v)) => crate::iter::pair(py, k, v).map(Some),
            _ => Ok(None),
        }
    }

    fn __repr__(&self) -> String {
        match self.inner.lock().key() {
            Some(k) => format!("<lamina.Cursor at {:?}>", String::from_utf8_lossy(k)),
            None => "<lamina.Cursor (on no entry)>".to_owned(),
        }
    }
}
