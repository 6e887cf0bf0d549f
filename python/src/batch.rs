//! `lamina.Batch`: writes gathered in memory and committed atomically.
//!
//! ```python
//! with db.batch() as b:      # commits on exit; discards if the block raises
//!     b[b"k"] = b"v"
//!     b.put(b"i", b"k", keyspace=index)
//! ```

use crate::convert;
use crate::errors::{plain, to_py};
use crate::keyspace::{same_db, Keyspace};
use crate::state::Shared;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// A group of puts, deletes and increments, across keyspaces, that commits
/// atomically: after a crash either all of it is there or none.
///
/// Reads do not see a batch's writes before it commits. Deletes in a batch
/// are blind (no `KeyError` for a missing key). Use it as a context manager,
/// which commits on a normal exit and discards everything if the block
/// raises, or call `commit()` / `discard()` yourself.
#[pyclass(module = "lamina", name = "Batch", frozen)]
pub struct Batch {
    shared: Arc<Shared>,
    default: lamina::Keyspace,
    durability: Option<lamina::Durability>,
    /// `None` once the `with` block has ended.
    ops: Mutex<Option<lamina::Batch>>,
}

impl Batch {
    pub fn new(
        shared: Arc<Shared>,
        default: lamina::Keyspace,
        durability: Option<lamina::Durability>,
    ) -> Batch {
        Batch {
            shared,
            default,
            durability,
            ops: Mutex::new(Some(lamina::Batch::new())),
        }
    }

    /// Runs `f` on the open batch, or fails once it has ended.
    fn with_ops<T>(&self, f: impl FnOnce(&mut lamina::Batch) -> T) -> PyResult<T> {
        let mut guard = self.ops.lock();
        let ops = guard
            .as_mut()
            .ok_or_else(|| plain("the batch has already been committed or discarded"))?;
        Ok(f(ops))
    }

    /// The keyspace a write into `keyspace` (default: the database's own) goes to.
    fn target<'a>(
        &'a self,
        keyspace: Option<&'a Bound<'_, Keyspace>>,
    ) -> PyResult<&'a lamina::Keyspace> {
        match keyspace {
            Some(ks) => same_db(&self.shared, ks),
            None => Ok(&self.default),
        }
    }

    /// Writes the gathered operations; the batch stays usable, empty, when `keep_open`.
    fn write_out(&self, py: Python<'_>, keep_open: bool) -> PyResult<()> {
        let ops = {
            let mut guard = self.ops.lock();
            let ops = guard
                .take()
                .ok_or_else(|| plain("the batch has already been committed or discarded"))?;
            if keep_open {
                *guard = Some(lamina::Batch::new());
            }
            ops
        };
        if ops.is_empty() {
            return Ok(());
        }
        let db = self.shared.writable()?;
        let result = py.detach(|| match self.durability {
            Some(d) => db.write_with(ops, d),
            None => db.write(ops),
        });
        self.shared.wrote(py);
        result.map_err(to_py)
    }
}

#[pymethods]
impl Batch {
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(key, value, None)
    }

    fn __delitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(key, None)
    }

    /// Number of operations gathered so far.
    fn __len__(&self) -> PyResult<usize> {
        self.with_ops(|ops| ops.len())
    }

    /// Stores `value` under `key` (in `keyspace`, default: the database's own).
    #[pyo3(signature = (key, value, *, keyspace=None))]
    fn put(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let (k, v) = (convert::key(key)?, convert::value(value)?);
        let ks = self.target(keyspace)?;
        self.with_ops(|ops| ops.put_in(ks, k, v))
    }

    /// Deletes `key` (blind: no error when it is missing).
    #[pyo3(signature = (key, *, keyspace=None))]
    fn delete(
        &self,
        key: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let (ks, k) = (self.target(keyspace)?, convert::key(key)?);
        self.with_ops(|ops| ops.delete_in(ks, k))
    }

    /// Adds `n` to the counter under `key` (see `Db.increment`).
    #[pyo3(signature = (key, n=1, *, keyspace=None))]
    fn increment(
        &self,
        key: &Bound<'_, PyAny>,
        n: i128,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let operand = convert::counter_operand(n)?;
        let (ks, k) = (self.target(keyspace)?, convert::key(key)?);
        self.with_ops(|ops| ops.merge_in(ks, k, &operand))
    }

    /// Stores every pair of a mapping or iterable of pairs, and the keyword arguments.
    #[pyo3(signature = (other=None, *, keyspace=None, **kwargs))]
    fn update(
        &self,
        other: Option<&Bound<'_, PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        // Converted first, so a bad pair leaves the batch as it was.
        let mut staged = Vec::new();
        if let Some(o) = other {
            staged.extend(convert::pairs(o)?);
        }
        if let Some(kw) = kwargs {
            staged.extend(convert::pairs(kw.as_any())?);
        }
        let ks = self.target(keyspace)?;
        self.with_ops(|ops| {
            for (k, v) in &staged {
                ops.put_in(ks, k, v);
            }
        })
    }

    /// Commits what was gathered (atomically) and leaves the batch open, empty.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.write_out(py, true)
    }

    /// Drops what was gathered; the batch stays open, empty.
    fn discard(&self) -> PyResult<()> {
        self.with_ops(|ops| ops.clear())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Commits on a normal exit, discards when the block raised; never
    /// swallows the block's exception.
    #[pyo3(signature = (exc_type=None, exc_value=None, traceback=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        exc_value: Option<&Bound<'_, PyAny>>,
        traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let _ = (exc_value, traceback);
        if exc_type.is_some_and(|t| !t.is_none()) {
            *self.ops.lock() = None;
            return Ok(false);
        }
        self.write_out(py, false)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match self.ops.lock().as_ref() {
            Some(ops) => format!("<lamina.Batch of {} operations>", ops.len()),
            None => "<lamina.Batch (ended)>".to_owned(),
        }
    }
}
