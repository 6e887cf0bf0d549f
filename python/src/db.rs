//! `lamina.Db`: an open database. The mapping methods come from its base
//! class `Keyspace` (the database is its default keyspace); this file adds
//! opening, closing and the database-wide operations.

use crate::batch::Batch;
use crate::errors::{strerror, to_py, with_errno};
use crate::keyspace::Keyspace;
use crate::options;
use crate::snapshot::Snapshot;
use crate::state::Shared;
use crate::stats;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::path::PathBuf;
use std::sync::Arc;

/// An open lamina database: an ordered mapping of bytes to bytes, stored in
/// a directory, that behaves like a `dbm.gnu` database.
///
/// Usually obtained from `lamina.open(path, flag)`; `Db(path, **options)`
/// opens with engine options directly (see `lamina.open` for their names).
/// Safe to share between threads; engine work runs with the GIL released.
#[pyclass(module = "lamina", name = "Db", extends = Keyspace, subclass, frozen)]
pub struct Db {
    shared: Arc<Shared>,
    default: lamina::Keyspace,
}

#[pymethods]
impl Db {
    #[new]
    #[pyo3(signature = (path, **options))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let opts = options::from_kwargs(options)?;
        if !opts.create_if_missing && !path.exists() {
            return Err(with_errno(libc::ENOENT, &strerror(libc::ENOENT), &path));
        }
        let read_only = opts.read_only;
        let db = py.detach(|| lamina::Db::open(&path, opts)).map_err(to_py)?;
        let shared = Shared::new(db, path.clone(), read_only);
        let default = shared.engine().default_keyspace();
        let shared = Arc::new(shared);
        Ok(Keyspace::new(shared.clone(), default.clone()).add_subclass(Db { shared, default }))
    }

    /// The database directory, as given when opening it.
    #[getter]
    fn path(&self) -> PathBuf {
        self.shared.path().clone()
    }

    /// True when opened with flag `'r'`.
    #[getter]
    fn read_only(&self) -> bool {
        self.shared.read_only()
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Closes the database, making every write durable and releasing the
    /// lock and every file and mapping it holds (while this object lives
    /// on). Idempotent; every later use raises `lamina.error`.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.shared.close(py)
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Makes every write so far durable (fsync). Does nothing on a read-only database.
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.shared.db()?;
        if self.shared.read_only() {
            return Ok(());
        }
        py.detach(|| db.sync()).map_err(to_py)
    }

    /// Catches a read-only database up with its writer (another process or
    /// another handle of this one): reads after it see what the writer had
    /// written when it began. Snapshots and iterators taken before keep their
    /// view. Does nothing on a writable database, which always reads the newest.
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.shared.db()?;
        py.detach(|| db.refresh()).map_err(to_py)
    }

    /// Writes the memtable out to a table; everything so far becomes durable.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.shared.writable()?;
        py.detach(|| db.flush()).map_err(to_py)
    }

    /// Full compaction: rewrites every table, dropping deleted and
    /// overwritten entries, and so reclaims their space (dbm.gnu's `reorganize`).
    fn reorganize(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.shared.writable()?;
        py.detach(|| db.compact()).map_err(to_py)
    }

    /// Compacts the keys in `[start, stop]` (`None`: open end), or everything.
    #[pyo3(signature = (start=None, stop=None))]
    fn compact(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let start = crate::convert::opt_key(start)?;
        let stop = crate::convert::opt_key(stop)?;
        let db = self.shared.writable()?;
        py.detach(|| db.compact_range(start.as_deref(), stop.as_deref()))
            .map_err(to_py)
    }

    /// A read-only view of the whole database as of now (a context manager).
    fn snapshot(&self, py: Python<'_>) -> PyResult<Py<Snapshot>> {
        let db = self.shared.db()?;
        let snap = py.detach(|| db.snapshot());
        Py::new(
            py,
            Snapshot::new(self.shared.clone(), self.default.clone(), snap),
        )
    }

    /// A batch of writes that commits atomically (a context manager: commits
    /// on exit, discards if the block raises). `durability` (`'sync'`, `'os'`,
    /// `'none'`) overrides the database's default for this commit.
    #[pyo3(signature = (durability=None))]
    fn batch(&self, durability: Option<&Bound<'_, PyAny>>) -> PyResult<Batch> {
        self.shared.writable()?;
        let d = durability
            .filter(|d| !d.is_none())
            .map(options::durability)
            .transpose()?;
        Ok(Batch::new(self.shared.clone(), self.default.clone(), d))
    }

    /// A transaction (a context manager: commits on exit, discards if the
    /// block raises): reads as of now that see its own writes, committed
    /// only if nothing read has changed (`lamina.Conflict` otherwise).
    /// `durability` as for `batch()`.
    #[pyo3(signature = (durability=None))]
    fn transaction(
        &self,
        py: Python<'_>,
        durability: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::transaction::Transaction> {
        let db = self.shared.writable()?;
        let d = durability
            .filter(|d| !d.is_none())
            .map(options::durability)
            .transpose()?;
        let tx = py.detach(|| db.transaction());
        Ok(crate::transaction::Transaction::new(
            self.shared.clone(),
            self.default.clone(),
            d,
            tx,
        ))
    }

    /// Calls `fn(tx)` in a transaction and commits it, calling it again in
    /// a new transaction on conflict, up to `retries` times (backing off,
    /// then running alone among transactions); returns what `fn` returned.
    /// `fn` may run several times: it should have no other effects, and
    /// must not commit another transaction (a run that holds the others
    /// off would wait for itself).
    #[pyo3(signature = (r#fn, retries=100, durability=None))]
    fn transact(
        &self,
        py: Python<'_>,
        r#fn: &Bound<'_, PyAny>,
        retries: usize,
        durability: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let d = durability
            .filter(|d| !d.is_none())
            .map(options::durability)
            .transpose()?;
        crate::transaction::transact(py, &self.shared, &self.default, r#fn, retries, d)
    }

    /// The keyspace `name`, created when missing (unless `create=False`,
    /// which raises `KeyError` instead; a read-only database never creates).
    #[pyo3(signature = (name, create=true))]
    fn keyspace(&self, py: Python<'_>, name: &str, create: bool) -> PyResult<Py<Keyspace>> {
        let db = self.shared.db()?;
        let create = create && !self.shared.read_only();
        let ks = py
            .detach(|| {
                if create {
                    db.keyspace(name)
                } else {
                    db.open_keyspace(name)
                }
            })
            .map_err(to_py)?;
        Py::new(py, Keyspace::new(self.shared.clone(), ks))
    }

    /// The names of the named keyspaces (the default one is not listed).
    fn keyspaces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let db = self.shared.db()?;
        PyList::new(py, db.keyspaces())
    }

    /// Deletes the keyspace `name` and everything in it.
    fn drop_keyspace(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let db = self.shared.writable()?;
        let result = py.detach(|| db.drop_keyspace(name));
        self.shared.wrote(py);
        result.map_err(to_py)
    }

    /// Engine statistics as a dict (levels, tables, bytes, cache, amplification).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let db = self.shared.db()?;
        let s = py.detach(|| db.stats());
        stats::stats_dict(py, &s)
    }

    /// Verifies every checksum and invariant; a dict whose `problems` lists
    /// any damage in words (`ok` is true when there is none).
    fn check<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let db = self.shared.db()?;
        let report = py.detach(|| db.check()).map_err(to_py)?;
        stats::check_dict(py, &report)
    }

    /// Writes a consistent copy of the database into the new directory `dest`.
    fn backup(&self, py: Python<'_>, dest: PathBuf) -> PyResult<()> {
        let db = self.shared.db()?;
        py.detach(|| db.backup(&dest)).map_err(to_py)
    }

    /// Adds tables written by `lamina.TableWriter`, all of them or none
    /// (`move=True` removes the files afterwards); see `lamina.TableWriter`.
    #[pyo3(signature = (paths, r#move = false))]
    fn ingest<'py>(
        &self,
        py: Python<'py>,
        paths: Vec<PathBuf>,
        r#move: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::table_writer::ingest(py, self.shared.writable()?, paths, r#move)
    }

    fn __repr__(&self) -> String {
        let state = match (self.shared.is_closed(), self.shared.read_only()) {
            (true, _) => "closed",
            (false, true) => "read-only",
            (false, false) => "open",
        };
        format!("<lamina.Db {:?} ({state})>", self.shared.path())
    }
}

/// Removes the database at `path` and its directory; `lamina.error` when
/// `path` is not a lamina database (nothing else is ever deleted).
#[pyfunction]
pub fn destroy(py: Python<'_>, path: PathBuf) -> PyResult<()> {
    py.detach(|| lamina::Db::destroy(&path, &lamina::Options::default()))
        .map_err(to_py)
}
