//! `lamina.Transaction`: reads from a snapshot that see the transaction's
//! own writes, committed atomically only if nothing read has changed
//! (`lamina.Conflict` otherwise); and `Db.transact(fn)`, which calls `fn`
//! again on conflict.
//!
//! ```python
//! with db.transaction() as tx:   # commits on exit; discards if the block raises
//!     a, b = int(tx["alice"]), int(tx["bob"])
//!     tx["alice"], tx["bob"] = str(a - 10), str(b + 10)
//! ```

use crate::bounds::Bounds;
use crate::convert;
use crate::errors::{conflict_message, plain, to_py};
use crate::keyspace::{same_db, Keyspace};
use crate::state::Shared;
use parking_lot::Mutex;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use std::sync::Arc;

/// A transaction: it reads the database as of its start, sees its own
/// writes, and commits them atomically only if nothing it read (keys, found
/// or missing, and ranges listed) has changed since; otherwise
/// `lamina.Conflict` and nothing is written. Use it as a context manager
/// (commits on a normal exit, discards if the block raises), or call
/// `commit()` / `rollback()`. Methods take `keyspace=` to act on a named
/// keyspace of the same database.
#[pyclass(module = "lamina", name = "Transaction", frozen)]
pub struct Transaction {
    shared: Arc<Shared>,
    default: lamina::Keyspace,
    durability: Option<lamina::Durability>,
    /// `None` once committed or rolled back.
    tx: Mutex<Option<lamina::Transaction>>,
}

impl Transaction {
    pub fn new(
        shared: Arc<Shared>,
        default: lamina::Keyspace,
        durability: Option<lamina::Durability>,
        tx: lamina::Transaction,
    ) -> Transaction {
        Transaction {
            shared,
            default,
            durability,
            tx: Mutex::new(Some(tx)),
        }
    }

    /// Runs `f` on the open transaction (no GIL needed), or fails once it ended.
    fn with_tx<T>(
        &self,
        f: impl FnOnce(&mut lamina::Transaction) -> lamina::Result<T>,
    ) -> PyResult<T> {
        self.shared.db()?;
        let mut guard = self.tx.lock();
        let tx = guard
            .as_mut()
            .ok_or_else(|| plain("the transaction has already been committed or rolled back"))?;
        f(tx).map_err(to_py)
    }

    /// [`Transaction::with_tx`] with the GIL released.
    fn detached<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut lamina::Transaction) -> lamina::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| self.with_tx(f))
    }

    /// The keyspace `keyspace` names (default: the database's own).
    fn target<'a>(
        &'a self,
        keyspace: Option<&'a Bound<'_, Keyspace>>,
    ) -> PyResult<&'a lamina::Keyspace> {
        match keyspace {
            Some(ks) => same_db(&self.shared, ks),
            None => Ok(&self.default),
        }
    }

    /// Commits (with `durability`, else the transaction's own, else the
    /// database's default) if still open; the engine's error if it fails.
    pub fn finish(
        &self,
        py: Python<'_>,
        durability: Option<lamina::Durability>,
    ) -> PyResult<lamina::Result<()>> {
        let Some(tx) = self.tx.lock().take() else {
            return Ok(Ok(()));
        };
        let writes = !tx.is_read_only();
        if writes {
            self.shared.writable()?;
        }
        let d = durability.or(self.durability);
        let result = py.detach(|| match d {
            Some(d) => tx.commit_with(d),
            None => tx.commit(),
        });
        if writes {
            self.shared.wrote(py);
        }
        Ok(result)
    }

    /// Discards the transaction (idempotent).
    pub fn discard(&self) {
        self.tx.lock().take();
    }
}

#[pymethods]
impl Transaction {
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let k = convert::key(key)?;
        let ks = &self.default;
        match self.detached(py, |tx| tx.get_in(ks, k))? {
            Some(v) => Ok(PyBytes::new(py, &v)),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// The value of `key` as bytes, or `default`; the transaction's own
    /// writes included.
    #[pyo3(signature = (key, default=None, *, keyspace=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
        keyspace: Option<&Bound<'py, Keyspace>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let k = convert::key(key)?;
        let ks = self.target(keyspace)?;
        match self.detached(py, |tx| tx.get_in(ks, k))? {
            Some(v) => Ok(PyBytes::new(py, &v).into_any()),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = convert::key(key)?;
        let ks = &self.default;
        self.detached(py, |tx| tx.contains_key_in(ks, k))
    }

    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(key, value, None)
    }

    /// Deletes `key`; `KeyError` when it has no value (as in dbm). The check
    /// reads the key, so a later write of it by another writer conflicts.
    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = convert::key(key)?;
        let ks = &self.default;
        let had = self.detached(py, |tx| {
            let had = tx.contains_key_in(ks, k)?;
            if had {
                tx.delete_in(ks, k)?;
            }
            Ok(had)
        })?;
        if had {
            Ok(())
        } else {
            Err(PyKeyError::new_err(key.clone().unbind()))
        }
    }

    /// Stores `value` under `key` when the transaction commits.
    #[pyo3(signature = (key, value, *, keyspace=None))]
    fn put(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let (k, v) = (convert::key(key)?, convert::value(value)?);
        let ks = self.target(keyspace)?;
        self.with_tx(|tx| tx.put_in(ks, k, v))
    }

    /// Deletes `key` when the transaction commits (blind: no error when it
    /// is missing, and nothing read).
    #[pyo3(signature = (key, *, keyspace=None))]
    fn delete(
        &self,
        key: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let k = convert::key(key)?;
        let ks = self.target(keyspace)?;
        self.with_tx(|tx| tx.delete_in(ks, k))
    }

    /// Adds `n` to the counter under `key` (see `Db.increment`): a merge
    /// operand, folded when the transaction reads the key. Reads nothing,
    /// so it never conflicts by itself.
    #[pyo3(signature = (key, n=1, *, keyspace=None))]
    fn increment(
        &self,
        key: &Bound<'_, PyAny>,
        n: i128,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let operand = convert::counter_operand(n)?;
        let (ks, k) = (self.target(keyspace)?, convert::key(key)?);
        self.with_tx(|tx| tx.merge_in(ks, k, &operand))
    }

    /// Deletes the smallest key (the largest with `last=True`) the
    /// transaction sees and returns its `(key, value)`; `KeyError` when
    /// there is none. The keys up to it count as read. Pops in a row take
    /// from one open cursor: draining a queue in one transaction costs the
    /// same for each pop, however many came before.
    #[pyo3(signature = (*, last=false, keyspace=None))]
    fn popitem<'py>(
        &self,
        py: Python<'py>,
        last: bool,
        keyspace: Option<&Bound<'py, Keyspace>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ks = self.target(keyspace)?;
        let popped = self.detached(py, |tx| {
            if last {
                tx.pop_last_in(ks)
            } else {
                tx.pop_first_in(ks)
            }
        })?;
        let Some((k, v)) = popped else {
            return Err(PyKeyError::new_err("popitem(): the keyspace is empty"));
        };
        crate::iter::pair(py, &k, &v)
    }

    /// The `(key, value)` pairs with `start <= key < stop` beginning with
    /// `prefix`, ascending (descending with `reverse=True`), the
    /// transaction's own writes included; the whole range counts as read
    /// (a key another writer adds to it before the commit conflicts).
    #[pyo3(signature = (start=None, stop=None, *, prefix=None, reverse=false, keyspace=None))]
    fn items<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
        prefix: Option<&Bound<'py, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'py, Keyspace>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let bounds = Bounds::from_py(start, stop, prefix)?;
        let ks = self.target(keyspace)?;
        let pairs = self.detached(py, |tx| {
            if bounds.is_empty() {
                return Ok(Vec::new());
            }
            let iter = tx.range_in::<&[u8], _>(ks, bounds.as_range());
            if reverse {
                iter.rev().collect::<lamina::Result<Vec<_>>>()
            } else {
                iter.collect::<lamina::Result<Vec<_>>>()
            }
        })?;
        let list = PyList::empty(py);
        for (k, v) in &pairs {
            list.append(crate::iter::pair(py, k, v)?)?;
        }
        Ok(list)
    }

    /// Commits: its writes are applied atomically if nothing it read has
    /// changed, else `lamina.Conflict` and nothing is written. `durability`
    /// (`'sync'`, `'os'`, `'none'`) overrides the one it was begun with.
    #[pyo3(signature = (durability=None))]
    fn commit(&self, py: Python<'_>, durability: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let d = durability
            .filter(|d| !d.is_none())
            .map(crate::options::durability)
            .transpose()?;
        if self.tx.lock().is_none() {
            return Err(plain(
                "the transaction has already been committed or rolled back",
            ));
        }
        self.finish(py, d)?.map_err(to_py)
    }

    /// Discards its writes (idempotent).
    fn rollback(&self) {
        self.discard();
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Commits on a normal exit (unless already ended), discards when the
    /// block raised; never swallows the block's exception.
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
            self.discard();
            return Ok(false);
        }
        self.finish(py, None)?.map_err(to_py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match self.tx.lock().as_ref() {
            Some(tx) => format!("<lamina.Transaction at seqno {}>", tx.seqno()),
            None => "<lamina.Transaction (ended)>".to_owned(),
        }
    }
}

/// `Db.transact(fn, retries, durability)`: calls `fn(tx)` in a transaction
/// and commits it, calling it again in a new one on conflict (with the
/// engine's back-off and exclusive runs, `lamina::binding::Attempts`);
/// returns what `fn` returned.
pub fn transact(
    py: Python<'_>,
    shared: &Arc<Shared>,
    default: &lamina::Keyspace,
    f: &Bound<'_, PyAny>,
    retries: usize,
    durability: Option<lamina::Durability>,
) -> PyResult<Py<PyAny>> {
    let db = shared.writable()?.clone();
    let mut attempts = lamina::binding::Attempts::new(retries);
    loop {
        let tx = py.detach(|| attempts.begin(&db));
        let tx = Bound::new(
            py,
            Transaction::new(shared.clone(), default.clone(), durability, tx),
        )?;
        let why = match f.call1((tx.clone(),)) {
            Ok(value) => match tx.get().finish(py, None)? {
                Ok(()) => return Ok(value.unbind()),
                Err(lamina::Error::Conflict(why)) => why,
                Err(e) => return Err(to_py(e)),
            },
            // `fn` committed itself and met a conflict: run it again too.
            Err(e) => {
                tx.get().discard();
                match conflict_message(py, &e) {
                    Some(why) => why,
                    None => return Err(e),
                }
            }
        };
        py.detach(|| attempts.conflicted(why)).map_err(to_py)?;
    }
}
