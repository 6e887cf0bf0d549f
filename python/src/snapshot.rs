//! `lamina.Snapshot`: a read-only view of the database as of one moment.

use crate::bounds::Bounds;
use crate::errors::closed;
use crate::iter::{RangeIter, Yield};
use crate::keyspace::{same_db, Keyspace};
use crate::ranges::{Ranges, View};
use crate::reader::{self, Reader, SnapshotIn};
use crate::state::Shared;
use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::sync::Arc;

/// A consistent, read-only view of every keyspace as of `Db.snapshot()`.
///
/// Later writes are not seen. Use it as a context manager, or call
/// `close()`, to release the pinned data early (dropping it does too).
/// Methods take `keyspace=` to read a named keyspace instead of the default.
#[pyclass(module = "lamina", name = "Snapshot", extends = Ranges, frozen)]
pub struct Snapshot {
    shared: Arc<Shared>,
    default: lamina::Keyspace,
    /// `None` once released (shared with the `Ranges` base).
    snap: Arc<RwLock<Option<lamina::Snapshot>>>,
}

impl Snapshot {
    /// The Python object's initializer: its `Ranges` base reads `snap` too.
    pub fn new(
        shared: Arc<Shared>,
        default: lamina::Keyspace,
        snap: lamina::Snapshot,
    ) -> PyClassInitializer<Snapshot> {
        let snap = Arc::new(RwLock::new(Some(snap)));
        let view = View::Snapshot {
            default: default.clone(),
            snap: snap.clone(),
        };
        PyClassInitializer::from(Ranges::new(shared.clone(), view)).add_subclass(Snapshot {
            shared,
            default,
            snap,
        })
    }

    /// A reader of `keyspace` (default: the database's own) in this snapshot.
    fn reader(&self, keyspace: Option<&Bound<'_, Keyspace>>) -> PyResult<SnapshotIn> {
        self.shared.db()?;
        let ks = match keyspace {
            Some(k) => same_db(&self.shared, k)?.clone(),
            None => self.default.clone(),
        };
        let snap = self.snap.read().clone().ok_or_else(|| closed("snapshot"))?;
        Ok(SnapshotIn { snap, ks })
    }
}

#[pymethods]
impl Snapshot {
    /// The sequence number the snapshot reads at.
    #[getter]
    fn seqno(&self) -> PyResult<u64> {
        Ok(self
            .snap
            .read()
            .as_ref()
            .ok_or_else(|| closed("snapshot"))?
            .seqno())
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        reader::get_item(py, &self.reader(None)?, key)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        reader::contains(py, &self.reader(None)?, key)
    }

    /// The number of keys in the default keyspace (a scan).
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        reader::count(py, &self.reader(None)?, &Bounds::all())
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<RangeIter> {
        let r = self.reader(None)?;
        let iter = py.detach(|| r.range(&Bounds::all()).keys_only());
        Ok(RangeIter::new(
            self.shared.clone(),
            Some(iter),
            false,
            Yield::Keys,
        ))
    }

    /// The value of `key` as bytes, or `default`.
    #[pyo3(signature = (key, default=None, *, keyspace=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
        keyspace: Option<&Bound<'py, Keyspace>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        reader::get(py, &self.reader(keyspace)?, key, default)
    }

    /// The values of `keys`, `None` where missing.
    #[pyo3(signature = (keys, *, keyspace=None))]
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        keyspace: Option<&Bound<'py, Keyspace>>,
    ) -> PyResult<Bound<'py, PyList>> {
        reader::get_many(py, &self.reader(keyspace)?, keys)
    }

    /// Releases the snapshot (idempotent); later reads raise `lamina.error`.
    fn close(&self) {
        self.snap.write().take();
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        match self.snap.read().as_ref() {
            Some(s) => format!(
                "<lamina.Snapshot of {:?} at seqno {}>",
                self.shared.path(),
                s.seqno()
            ),
            None => format!("<lamina.Snapshot of {:?} (closed)>", self.shared.path()),
        }
    }
}
