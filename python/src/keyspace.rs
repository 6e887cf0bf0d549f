//! `lamina.Keyspace`: a named, ordered mapping of bytes to bytes inside a
//! database. `lamina.Db` extends it (a database is its default keyspace plus
//! the database-wide operations), so everything here is also the dbm API.

use crate::bounds::Bounds;
use crate::convert;
use crate::errors::{plain, to_py};
use crate::iter::{RangeIter, Yield};
use crate::ranges::{Ranges, View};
use crate::reader::{self, Live, Reader};
use crate::state::Shared;
use lamina::binding::{Cached, NonBlocking};
use parking_lot::Mutex;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::sync::Arc;

/// Keys deleted per engine batch by `clear()`.
const CLEAR_BATCH: usize = 10_000;

/// A named, ordered mapping of bytes keys to bytes values inside a database.
///
/// Obtained from `Db.keyspace(name)`. It has the same mapping methods as the
/// database itself (which is its own default keyspace); writes to several
/// keyspaces commit atomically together through `Db.batch()`.
#[pyclass(module = "lamina", name = "Keyspace", extends = Ranges, subclass, frozen)]
pub struct Keyspace {
    pub(crate) shared: Arc<Shared>,
    pub(crate) ks: lamina::Keyspace,
    /// `(write_count, length)` of the last count, valid while the count is unchanged.
    len_cache: Mutex<Option<(u64, usize)>>,
}

impl Keyspace {
    /// The Python object's initializer: its `Ranges` base reads `ks` live.
    pub fn new(shared: Arc<Shared>, ks: lamina::Keyspace) -> PyClassInitializer<Keyspace> {
        let ranges = Ranges::new(shared.clone(), View::Live(ks.clone()));
        PyClassInitializer::from(ranges).add_subclass(Keyspace {
            shared,
            ks,
            len_cache: Mutex::new(None),
        })
    }

    /// A reader of the live keyspace, or `lamina.error` once closed.
    fn reader(&self) -> PyResult<Live<'_>> {
        self.shared.db()?;
        Ok(Live { ks: &self.ks })
    }

    /// Runs a write of `key` without the GIL, then records it.
    fn write<T: Send>(
        &self,
        py: Python<'_>,
        key: &[u8],
        f: impl FnOnce(&lamina::Keyspace, &[u8]) -> lamina::Result<T> + Send,
    ) -> PyResult<T> {
        self.shared.writable()?;
        let result = py.detach(|| f(&self.ks, key));
        self.shared.wrote(py);
        result.map_err(to_py)
    }

    fn iter_over(
        &self,
        py: Python<'_>,
        bounds: Bounds,
        reverse: bool,
        what: Yield,
    ) -> PyResult<RangeIter> {
        let r = self.reader()?;
        let iter = if bounds.is_empty() {
            None
        } else {
            Some(py.detach(|| what.apply(r.range(&bounds))))
        };
        Ok(RangeIter::new(self.shared.clone(), iter, reverse, what))
    }
}

#[pymethods]
impl Keyspace {
    /// The keyspace's name (`''` for a database's default keyspace).
    #[getter]
    fn name(&self) -> &str {
        self.ks.name()
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        reader::get_item(py, &self.reader()?, key)
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let k = convert::key(key)?;
        let v = convert::value(value)?;
        // A commit that cannot block keeps the interpreter lock: releasing
        // and taking it back would cost more than the commit.
        self.shared.writable()?;
        if self.ks.try_put(k, v).map_err(to_py)? {
            self.shared.wrote(py);
            return Ok(());
        }
        self.write(py, k, |ks, k| ks.put(k, v))
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = convert::key(key)?;
        // A key found in memory, and a tombstone committed without
        // blocking, keep the interpreter lock (see `__setitem__`).
        self.shared.writable()?;
        if !k.is_empty() {
            match self.ks.try_contains_key(k).map_err(to_py)? {
                Cached::Answered(false) => return Err(PyKeyError::new_err(key.clone().unbind())),
                Cached::Answered(true) if self.ks.try_delete(k).map_err(to_py)? => {
                    self.shared.wrote(py);
                    return Ok(());
                }
                _ => {}
            }
        }
        // One engine call: the existence check (which stops at the key's
        // newest entry) and the delete, with the GIL released once.
        if self.write(py, k, |ks, k| ks.delete_existing(k))? {
            Ok(())
        } else {
            Err(PyKeyError::new_err(key.clone().unbind()))
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        reader::contains(py, &self.reader()?, key)
    }

    /// The exact number of keys. Counted by a scan (O(n)) and cached until the
    /// next write through this database handle.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let r = self.reader()?;
        let before = self.shared.write_count();
        if let Some((at, n)) = *self.len_cache.lock() {
            if at == before {
                return Ok(n);
            }
        }
        let n = reader::count(py, &r, &Bounds::all())?;
        if self.shared.write_count() == before {
            *self.len_cache.lock() = Some((before, n));
        }
        Ok(n)
    }

    /// True when the keyspace holds a key (O(1), unlike `len()`).
    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(reader::first_key(py, &self.reader()?, &Bounds::all(), false)?.is_some())
    }

    /// Iterates over the keys in ascending order, as of the call.
    fn __iter__(&self, py: Python<'_>) -> PyResult<RangeIter> {
        self.iter_over(py, Bounds::all(), false, Yield::Keys)
    }

    /// `get(key, default=None)`: the value of `key` as bytes, or `default`.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        reader::get(py, &self.reader()?, key, default)
    }

    /// `setdefault(key, default=None)`: the value of `key`; when missing, stores
    /// `default` (which must then be bytes or str) and returns it. Not atomic
    /// with respect to other threads writing the same key.
    #[pyo3(signature = (key, default=None))]
    fn setdefault<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let k = convert::key(key)?;
        if let Some(b) = reader::value_of(py, &self.reader()?, k)? {
            return Ok(b.into_any());
        }
        self.shared.writable()?;
        let default = default.unwrap_or_else(|| py.None().into_bound(py));
        let v = convert::value(&default)?;
        self.write(py, k, |ks, k| ks.put(k, v))?;
        Ok(default)
    }

    /// Stores `value` under `key` (same as `db[key] = value`).
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.__setitem__(py, key, value)
    }

    /// Deletes `key` without reading it first: no `KeyError` when it is
    /// missing (cheaper than `del db[key]`).
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = convert::key(key)?;
        self.write(py, k, |ks, k| ks.delete(k))
    }

    /// Adds `n` to the 64-bit counter stored under `key` without reading it
    /// (the engine's blind merge); a missing key counts as 0. Read the counter
    /// back with `counter(key)`.
    #[pyo3(signature = (key, n=1))]
    fn increment(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: i128) -> PyResult<()> {
        let k = convert::key(key)?;
        let operand = convert::counter_operand(n)?;
        self.write(py, k, |ks, k| ks.merge(k, &operand))
    }

    /// The counter under `key` as a signed 64-bit int (0 when missing);
    /// `ValueError` when the stored value is not an 8-byte counter.
    fn counter(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<i64> {
        let k = convert::key(key)?;
        let r = self.reader()?;
        match py.detach(|| r.get(k)).map_err(to_py)? {
            None => Ok(0),
            Some(v) => convert::counter_value(&v).ok_or_else(|| {
                PyValueError::new_err(format!("value is {} bytes, not an 8-byte counter", v.len()))
            }),
        }
    }

    /// The values of `keys` (an iterable), `None` where missing, in one call.
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        reader::get_many(py, &self.reader()?, keys)
    }

    /// `update(other=(), **kw)`: stores every pair of a mapping or an iterable
    /// of pairs, and the keyword arguments, in one atomic batch.
    #[pyo3(signature = (other=None, **kwargs))]
    fn update(
        &self,
        py: Python<'_>,
        other: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let db = self.shared.writable()?;
        let mut batch = lamina::Batch::new();
        for source in [other, kwargs.map(|kw| kw.as_any())].into_iter().flatten() {
            for (k, v) in convert::pairs(source)? {
                batch.put_in(&self.ks, &k, &v);
            }
        }
        if batch.is_empty() {
            return Ok(());
        }
        let result = py.detach(|| db.write(batch));
        self.shared.wrote(py);
        result.map_err(to_py)
    }

    /// Deletes every key of this keyspace, in batches of 10,000 (not atomic:
    /// a crash in the middle leaves some keys).
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.shared.writable()?;
        let result = py.detach(|| {
            let mut batch = lamina::Batch::new();
            for item in self.ks.iter() {
                let (k, _) = item?;
                batch.delete_in(&self.ks, &k);
                if batch.len() >= CLEAR_BATCH {
                    db.write(std::mem::take(&mut batch))?;
                }
            }
            if !batch.is_empty() {
                db.write(batch)?;
            }
            Ok(())
        });
        self.shared.wrote(py);
        result.map_err(to_py)
    }

    /// The smallest key, or `None` when empty (dbm.gnu's `firstkey`).
    fn firstkey<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let k = reader::first_key(py, &self.reader()?, &Bounds::all(), false)?;
        Ok(k.map(|k| PyBytes::new(py, &k)))
    }

    /// The smallest key greater than `key` (which need not exist), or `None`
    /// at the end (dbm.gnu's `nextkey`).
    fn nextkey<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let k = convert::key(key)?;
        let next = reader::first_key(py, &self.reader()?, &Bounds::after(k), false)?;
        Ok(next.map(|k| PyBytes::new(py, &k)))
    }

    /// `pop(key[, default])`: deletes `key` and returns its value; when it is
    /// missing, returns `default`, or raises `KeyError` without one. A read
    /// then a delete: not atomic with respect to other threads writing `key`.
    #[pyo3(signature = (key, *default))]
    fn pop<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if default.len() > 1 {
            return Err(PyTypeError::new_err(format!(
                "pop expected at most 2 arguments, got {}",
                1 + default.len()
            )));
        }
        let k = convert::key(key)?;
        self.shared.writable()?;
        let r = self.reader()?;
        match py.detach(|| r.get(k)).map_err(to_py)? {
            Some(v) => {
                self.write(py, k, |ks, k| ks.delete(k))?;
                Ok(PyBytes::new(py, &v).into_any())
            }
            None => default
                .get_item(0)
                .map_err(|_| PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// Deletes the smallest key and returns its `(key, value)`; `KeyError`
    /// when the keyspace is empty. Not atomic with respect to other writers.
    fn popitem<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.shared.writable()?;
        let r = self.reader()?;
        let first = py
            .detach(|| r.range(&Bounds::all()).next().transpose())
            .map_err(to_py)?;
        let Some((k, v)) = first else {
            return Err(PyKeyError::new_err("popitem(): the database is empty"));
        };
        self.write(py, &k, |ks, k| ks.delete(k))?;
        crate::iter::pair(py, &k, &v)
    }

    fn __repr__(&self) -> String {
        let state = if self.shared.is_closed() {
            "closed"
        } else {
            "open"
        };
        format!(
            "<lamina.Keyspace {:?} of {:?} ({state})>",
            self.ks.name(),
            self.shared.path()
        )
    }
}

/// The engine keyspace of a `Keyspace` argument, checked to belong to `shared`'s database.
pub fn same_db<'a>(
    shared: &Arc<Shared>,
    ks: &'a Bound<'_, Keyspace>,
) -> PyResult<&'a lamina::Keyspace> {
    let k = ks.get();
    if !Arc::ptr_eq(&k.shared, shared) {
        return Err(plain("the keyspace belongs to another database handle"));
    }
    Ok(&k.ks)
}
