//! Reads shared by a keyspace (the live database) and a snapshot: point
//! lookups, counts, ordered lists. Every engine call that may wait for the
//! disk runs with the GIL released; a point lookup first tries to answer
//! from memory with the GIL held (`try_value`, `try_contains`).

use crate::bounds::Bounds;
use crate::convert;
use crate::errors::to_py;
use crate::iter::Yield;
use lamina::binding::{Cached, NonBlocking, NonBlockingSnapshot};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// Something keys can be read from.
pub trait Reader: Send + Sync {
    /// The value of `key`, if any.
    fn get(&self, key: &[u8]) -> lamina::Result<Option<Vec<u8>>>;
    /// The value of `key`, a value in a blob file not yet read.
    fn get_lazy(&self, key: &[u8]) -> lamina::Result<Option<lamina::LazyValue>> {
        Ok(self.get(key)?.map(lamina::LazyValue::inline))
    }
    /// True when `key` has a value.
    fn contains(&self, key: &[u8]) -> lamina::Result<bool> {
        Ok(self.get(key)?.is_some())
    }
    /// The values of `keys`, in their order, `None` where a key has none.
    fn get_many(&self, keys: &[&[u8]]) -> lamina::Result<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|k| self.get(k)).collect()
    }
    /// The value of `key` as a `bytes` object, when it can be had without
    /// waiting for the disk: a value in memory straight from where it is
    /// stored, a large value read again as the `bytes` object read before,
    /// one in a blob file already open read by `to_bytes` (which releases
    /// the GIL for the read); else [`Cached::NeedsIo`].
    fn try_value<'py>(&self, _py: Python<'py>, _key: &[u8]) -> lamina::Result<TryValue<'py>> {
        Ok(Cached::NeedsIo)
    }
    /// Whether `key` has a value, when it can be known without waiting for
    /// the disk.
    fn try_contains(&self, _key: &[u8]) -> lamina::Result<Cached<bool>> {
        Ok(Cached::NeedsIo)
    }
    /// An ascending walk over `bounds` (reverse it with `next_back`).
    fn range(&self, bounds: &Bounds) -> lamina::Iter;
}

fn engine_range(ks: &lamina::Keyspace, bounds: &Bounds) -> lamina::Iter {
    if *bounds == Bounds::all() {
        ks.iter()
    } else {
        ks.range::<&[u8], _>(bounds.as_range())
    }
}

fn snapshot_range(snap: &lamina::Snapshot, ks: &lamina::Keyspace, bounds: &Bounds) -> lamina::Iter {
    if *bounds == Bounds::all() {
        snap.iter_in(ks)
    } else {
        snap.range_in::<&[u8], _>(ks, bounds.as_range())
    }
}

/// What [`Reader::try_value`] gives: the value (or the error making its
/// `bytes` object), none, or that the disk is needed.
pub type TryValue<'py> = Cached<Option<PyResult<Bound<'py, PyBytes>>>>;

/// The live data of one keyspace.
pub struct Live<'a> {
    pub ks: &'a lamina::Keyspace,
}

impl Reader for Live<'_> {
    fn get(&self, key: &[u8]) -> lamina::Result<Option<Vec<u8>>> {
        self.ks.get(key)
    }
    fn get_lazy(&self, key: &[u8]) -> lamina::Result<Option<lamina::LazyValue>> {
        self.ks.get_lazy(key)
    }
    fn contains(&self, key: &[u8]) -> lamina::Result<bool> {
        self.ks.contains_key(key)
    }
    fn get_many(&self, keys: &[&[u8]]) -> lamina::Result<Vec<Option<Vec<u8>>>> {
        self.ks.get_many(keys)
    }
    fn try_value<'py>(&self, py: Python<'py>, key: &[u8]) -> lamina::Result<TryValue<'py>> {
        self.ks.try_get_with_lazy(
            key,
            |v| Ok(PyBytes::new(py, v)),
            |v| crate::value::to_bytes(py, &v),
        )
    }
    fn try_contains(&self, key: &[u8]) -> lamina::Result<Cached<bool>> {
        self.ks.try_contains_key(key)
    }
    fn range(&self, bounds: &Bounds) -> lamina::Iter {
        engine_range(self.ks, bounds)
    }
}

/// A snapshot read of one keyspace.
pub struct SnapshotIn {
    pub snap: lamina::Snapshot,
    pub ks: lamina::Keyspace,
}

impl Reader for SnapshotIn {
    fn get(&self, key: &[u8]) -> lamina::Result<Option<Vec<u8>>> {
        self.snap.get_in(&self.ks, key)
    }
    fn get_lazy(&self, key: &[u8]) -> lamina::Result<Option<lamina::LazyValue>> {
        self.snap.get_lazy_in(&self.ks, key)
    }
    fn contains(&self, key: &[u8]) -> lamina::Result<bool> {
        self.snap.contains_key_in(&self.ks, key)
    }
    fn get_many(&self, keys: &[&[u8]]) -> lamina::Result<Vec<Option<Vec<u8>>>> {
        self.snap.get_many_in(&self.ks, keys)
    }
    fn try_value<'py>(&self, py: Python<'py>, key: &[u8]) -> lamina::Result<TryValue<'py>> {
        self.snap.try_get_with_lazy_in(
            &self.ks,
            key,
            |v| Ok(PyBytes::new(py, v)),
            |v| crate::value::to_bytes(py, &v),
        )
    }
    fn try_contains(&self, key: &[u8]) -> lamina::Result<Cached<bool>> {
        self.snap.try_contains_key_in(&self.ks, key)
    }
    fn range(&self, bounds: &Bounds) -> lamina::Iter {
        snapshot_range(&self.snap, &self.ks, bounds)
    }
}

/// `r[key]`: the value as bytes, `KeyError(key)` when missing.
#[inline]
pub fn get_item<'py, R: Reader + ?Sized>(
    py: Python<'py>,
    r: &R,
    key: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    value_of(py, r, convert::key(key)?)?.ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
}

/// `r.get(key, default)`.
pub fn get<'py, R: Reader + ?Sized>(
    py: Python<'py>,
    r: &R,
    key: &Bound<'py, PyAny>,
    default: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value_of(py, r, convert::key(key)?)? {
        Some(b) => b.into_any(),
        None => default.unwrap_or_else(|| py.None().into_bound(py)),
    })
}

/// The value of key `k` as a `bytes` object, or `None`: from memory with
/// the GIL held where it can be (see [`Reader::try_value`]), else read with
/// the GIL released.
#[inline(always)]
pub fn value_of<'py, R: Reader + ?Sized>(
    py: Python<'py>,
    r: &R,
    k: &[u8],
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    // An empty key's error comes from the read below.
    if !k.is_empty() {
        match r.try_value(py, k).map_err(to_py)? {
            Cached::Answered(v) => return v.transpose(),
            Cached::NeedsIo => {}
        }
    }
    match py.detach(|| r.get_lazy(k)).map_err(to_py)? {
        Some(v) => crate::value::to_bytes(py, &v).map(Some),
        None => Ok(None),
    }
}

/// `key in r`: from memory with the GIL held where it can be.
pub fn contains<R: Reader + ?Sized>(
    py: Python<'_>,
    r: &R,
    key: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let k = convert::key(key)?;
    if !k.is_empty() {
        if let Cached::Answered(present) = r.try_contains(k).map_err(to_py)? {
            return Ok(present);
        }
    }
    py.detach(|| r.contains(k)).map_err(to_py)
}

/// The values of `keys`, `None` where missing: one engine call
/// ([`Reader::get_many`]: one view, the keys looked up in key order) with
/// the GIL released once for the batch.
pub fn get_many<'py>(
    py: Python<'py>,
    r: &dyn Reader,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let objs: Vec<Bound<'py, PyAny>> = keys.try_iter()?.collect::<PyResult<_>>()?;
    let slices: Vec<&[u8]> = objs.iter().map(convert::key).collect::<PyResult<_>>()?;
    let values = py.detach(|| r.get_many(&slices)).map_err(to_py)?;
    let out = PyList::empty(py);
    for v in values {
        match v {
            Some(v) => out.append(PyBytes::new(py, &v))?,
            None => out.append(py.None())?,
        }
    }
    Ok(out)
}

/// The number of keys in `bounds`, counted by a scan (O(n)).
pub fn count(py: Python<'_>, r: &dyn Reader, bounds: &Bounds) -> PyResult<usize> {
    if bounds.is_empty() {
        return Ok(0);
    }
    py.detach(|| {
        let n = r.range(bounds).count_keys()?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    })
    .map_err(to_py)
}

/// The first key in `bounds` (the last when `reverse`).
pub fn first_key(
    py: Python<'_>,
    r: &dyn Reader,
    bounds: &Bounds,
    reverse: bool,
) -> PyResult<Option<Vec<u8>>> {
    if bounds.is_empty() {
        return Ok(None);
    }
    py.detach(|| {
        let mut it = r.range(bounds).keys_only();
        let item = if reverse { it.next_back() } else { it.next() };
        item.transpose().map(|kv| kv.map(|(k, _)| k))
    })
    .map_err(to_py)
}

/// Everything in `bounds` as a list of keys, values or `(key, value)` tuples.
pub fn list<'py>(
    py: Python<'py>,
    r: &dyn Reader,
    bounds: &Bounds,
    reverse: bool,
    what: Yield,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    if bounds.is_empty() {
        return Ok(out);
    }
    let items = py
        .detach(|| {
            let it = what.apply(r.range(bounds));
            if reverse {
                it.rev().collect::<lamina::Result<Vec<_>>>()
            } else {
                it.collect::<lamina::Result<Vec<_>>>()
            }
        })
        .map_err(to_py)?;
    for (k, v) in items {
        out.append(what.object(py, &k, &v)?)?;
    }
    Ok(out)
}
