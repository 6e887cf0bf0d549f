//! `lamina.Ranges`: the ordered reads of a keyspace and of a snapshot, written
//! once. `lamina.Keyspace` (and so `lamina.Db`) and `lamina.Snapshot` extend
//! it; what differs is only where they read (`View`).

use crate::bounds::Bounds;
use crate::cursor::Cursor;
use crate::errors::{closed, plain};
use crate::iter::{RangeIter, Yield};
use crate::reader::{self, Live, Reader, SnapshotIn};
use crate::state::Shared;
use parking_lot::RwLock;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::Arc;

/// Where a `Ranges` reads: one keyspace as it is now, or a snapshot.
pub enum View {
    Live(lamina::Keyspace),
    Snapshot {
        /// The keyspace read when no `keyspace=` is given.
        default: lamina::Keyspace,
        /// `None` once the snapshot is released (shared with `lamina.Snapshot`).
        snap: Arc<RwLock<Option<lamina::Snapshot>>>,
    },
}

/// A reader made for one call: live or from a snapshot.
enum Source<'a> {
    Live(Live<'a>),
    Snapshot(SnapshotIn),
}

impl Reader for Source<'_> {
    fn get(&self, key: &[u8]) -> lamina::Result<Option<Vec<u8>>> {
        match self {
            Source::Live(r) => r.get(key),
            Source::Snapshot(r) => r.get(key),
        }
    }
    fn contains(&self, key: &[u8]) -> lamina::Result<bool> {
        match self {
            Source::Live(r) => r.contains(key),
            Source::Snapshot(r) => r.contains(key),
        }
    }
    fn get_many(&self, keys: &[&[u8]]) -> lamina::Result<Vec<Option<Vec<u8>>>> {
        match self {
            Source::Live(r) => r.get_many(keys),
            Source::Snapshot(r) => r.get_many(keys),
        }
    }
    fn range(&self, bounds: &Bounds) -> lamina::Iter {
        match self {
            Source::Live(r) => r.range(bounds),
            Source::Snapshot(r) => r.range(bounds),
        }
    }
}

/// Ordered reads over a key range: `keys`, `values`, `items`, `iterator`,
/// `count` and `cursor`, shared by `Keyspace` (and `Db`) and `Snapshot`.
///
/// Each takes `keyspace=` to read another keyspace of the same database
/// (default: this one; for a snapshot, the database's default keyspace).
#[pyclass(module = "lamina", name = "Ranges", subclass, frozen)]
pub struct Ranges {
    shared: Arc<Shared>,
    view: View,
}

impl Ranges {
    pub fn new(shared: Arc<Shared>, view: View) -> Ranges {
        Ranges { shared, view }
    }

    /// The engine keyspace of a `keyspace=` argument: a `Keyspace` (or `Db`,
    /// both of which are `Ranges` over a live keyspace) of this database.
    fn keyspace_arg<'a>(&self, arg: &'a Bound<'_, Ranges>) -> PyResult<&'a lamina::Keyspace> {
        let other = arg.get();
        if !Arc::ptr_eq(&other.shared, &self.shared) {
            return Err(plain("the keyspace belongs to another database handle"));
        }
        match &other.view {
            View::Live(ks) => Ok(ks),
            View::Snapshot { .. } => Err(PyTypeError::new_err(
                "keyspace= takes a Keyspace or a Db, not a Snapshot",
            )),
        }
    }

    /// The reader of `keyspace` (default: this view's own).
    fn source<'a>(&'a self, keyspace: Option<&'a Bound<'_, Ranges>>) -> PyResult<Source<'a>> {
        self.shared.db()?;
        let ks = keyspace.map(|k| self.keyspace_arg(k)).transpose()?;
        match &self.view {
            View::Live(own) => Ok(Source::Live(Live {
                ks: ks.unwrap_or(own),
            })),
            View::Snapshot { default, snap } => {
                let snap = snap.read().clone().ok_or_else(|| closed("snapshot"))?;
                let ks = ks.unwrap_or(default).clone();
                Ok(Source::Snapshot(SnapshotIn { snap, ks }))
            }
        }
    }
}

#[pymethods]
impl Ranges {
    /// The keys `start <= k < stop` beginning with `prefix`, ascending (or
    /// descending with `reverse=True`), as a list of bytes.
    #[pyo3(signature = (start=None, stop=None, *, prefix=None, reverse=false, keyspace=None))]
    fn keys<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
        prefix: Option<&Bound<'py, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'py, Ranges>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let b = Bounds::from_py(start, stop, prefix)?;
        reader::list(py, &self.source(keyspace)?, &b, reverse, Yield::Keys)
    }

    /// Like `keys()`, the values in key order.
    #[pyo3(signature = (start=None, stop=None, *, prefix=None, reverse=false, keyspace=None))]
    fn values<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
        prefix: Option<&Bound<'py, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'py, Ranges>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let b = Bounds::from_py(start, stop, prefix)?;
        reader::list(py, &self.source(keyspace)?, &b, reverse, Yield::Values)
    }

    /// Like `keys()`, the `(key, value)` pairs in key order.
    #[pyo3(signature = (start=None, stop=None, *, prefix=None, reverse=false, keyspace=None))]
    fn items<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
        prefix: Option<&Bound<'py, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'py, Ranges>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let b = Bounds::from_py(start, stop, prefix)?;
        reader::list(py, &self.source(keyspace)?, &b, reverse, Yield::Items)
    }

    /// A lazy iterator over the same range as `items()`: `(key, value)` pairs,
    /// or keys only (`values=False`), or values only (`keys=False`). It sees
    /// the data as of the call and never blocks writers.
    #[pyo3(signature = (start=None, stop=None, *, prefix=None, reverse=false, keys=true, values=true, keyspace=None))]
    #[allow(clippy::too_many_arguments)]
    fn iterator(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keys: bool,
        values: bool,
        keyspace: Option<&Bound<'_, Ranges>>,
    ) -> PyResult<RangeIter> {
        let what = Yield::from_flags(keys, values)?;
        let b = Bounds::from_py(start, stop, prefix)?;
        let r = self.source(keyspace)?;
        let iter = if b.is_empty() {
            None
        } else {
            Some(py.detach(|| what.apply(r.range(&b))))
        };
        Ok(RangeIter::new(self.shared.clone(), iter, reverse, what))
    }

    /// The number of keys in a range (a scan; O(keys in range)).
    #[pyo3(signature = (start=None, stop=None, *, prefix=None, keyspace=None))]
    fn count(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        keyspace: Option<&Bound<'_, Ranges>>,
    ) -> PyResult<usize> {
        let b = Bounds::from_py(start, stop, prefix)?;
        reader::count(py, &self.source(keyspace)?, &b)
    }

    /// A `Cursor` that seeks and moves both ways, positioned on no entry.
    /// Over a keyspace it reads the data as of this call (it takes a
    /// snapshot); over a snapshot, the snapshot's.
    #[pyo3(signature = (*, keyspace=None))]
    fn cursor(&self, py: Python<'_>, keyspace: Option<&Bound<'_, Ranges>>) -> PyResult<Cursor> {
        let c = match self.source(keyspace)? {
            Source::Live(r) => py.detach(|| r.ks.cursor()),
            Source::Snapshot(r) => r.snap.cursor_in(&r.ks),
        };
        Ok(Cursor::new(self.shared.clone(), c))
    }
}
