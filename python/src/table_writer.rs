//! Building tables outside a database and adding them whole:
//! `lamina.TableWriter`, `Db.ingest` (its body, `ingest`), `lamina.bulk_load`
//! and `lamina._lamina._table_ranges` (for `lamina.dask.read_lamina`).

use crate::convert;
use crate::errors::{plain, to_py};
use crate::options;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::path::PathBuf;
use std::sync::Mutex;

/// Pairs taken from a Python iterable before the GIL is released to add them.
const CHUNK: usize = 4096;

/// The module's classes and functions (one line in lib.rs).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TableWriter>()?;
    m.add_function(wrap_pyfunction!(bulk_load, m)?)?;
    m.add_function(wrap_pyfunction!(table_ranges, m)?)?;
    Ok(())
}

/// An engine error as Python sees it; a refused argument (a key out of
/// order, a file that is not a writer's table) is `lamina.error` with the
/// engine's words.
fn to_error(e: lamina::Error) -> PyErr {
    match e {
        lamina::Error::InvalidArgument(msg) => plain(msg),
        e => to_py(e),
    }
}

/// Writes one table of keys in strictly increasing order, to be added to a
/// database with `Db.ingest` (on this machine or another, once the file is
/// copied there).
///
/// `TableWriter(path, keyspace=None, **options)`: `path` must not exist;
/// `keyspace` names the keyspace the entries go to (created at ingest if
/// missing); `options` are `block_size`, `compression` and
/// `bloom_bits_per_key` as for `lamina.open`. A key out of order or repeated
/// raises `lamina.error` naming it, and nothing is written. As a context
/// manager it finishes the table on exit, or removes the file if the block
/// raised.
#[pyclass(module = "lamina", name = "TableWriter", frozen)]
pub struct TableWriter {
    inner: Mutex<Option<lamina::TableWriter>>,
    path: PathBuf,
}

impl TableWriter {
    fn take(&self) -> PyResult<lamina::TableWriter> {
        self.lock()?
            .take()
            .ok_or_else(|| plain("table writer is already finished"))
    }

    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, Option<lamina::TableWriter>>> {
        self.inner
            .lock()
            .map_err(|_| plain("table writer failed in another thread"))
    }
}

fn info_dict<'py>(py: Python<'py>, info: &lamina::TableInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("path", info.path.clone())?;
    d.set_item("smallest", PyBytes::new(py, &info.smallest))?;
    d.set_item("largest", PyBytes::new(py, &info.largest))?;
    d.set_item("entries", info.entries)?;
    d.set_item("file_size", info.file_size)?;
    Ok(d)
}

#[pymethods]
impl TableWriter {
    #[new]
    #[pyo3(signature = (path, keyspace=None, **options))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        keyspace: Option<String>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<TableWriter> {
        let o = options::from_kwargs(options)?;
        let opts = lamina::TableWriterOptions {
            compression: o.compression,
            block_size: o.block_size,
            bloom_bits_per_key: o.bloom_bits_per_key,
            keyspace,
            fs: o.fs,
        };
        let w = py
            .detach(|| lamina::TableWriter::create(&path, opts))
            .map_err(to_error)?;
        Ok(TableWriter {
            inner: Mutex::new(Some(w)),
            path,
        })
    }

    /// Adds `key` with `value` (bytes or str, stored UTF-8). `key` must sort
    /// after every key added before.
    fn put(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let (k, v) = (convert::key(key)?, convert::value(value)?);
        let mut guard = self.lock()?;
        let w = guard
            .as_mut()
            .ok_or_else(|| plain("table writer is already finished"))?;
        w.put(k, v).map_err(to_error)
    }

    /// Entries written so far.
    #[getter]
    fn entries(&self) -> PyResult<u64> {
        Ok(self
            .lock()?
            .as_ref()
            .map_or(0, lamina::TableWriter::entries))
    }

    /// The table's path.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Writes the rest of the table and syncs it. Returns a dict: `path`,
    /// `smallest` and `largest` key, `entries`, `file_size`. A table needs
    /// at least one entry.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let w = self.take()?;
        let info = py.detach(|| w.finish()).map_err(to_error)?;
        info_dict(py, &info)
    }

    /// Stops writing and removes the file.
    fn abandon(&self) -> PyResult<()> {
        if let Some(w) = self.lock()?.take() {
            w.abandon();
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type=None, _exc=None, _tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let raised = exc_type.is_some_and(|t| !t.is_none());
        let Some(w) = self.lock()?.take() else {
            return Ok(false);
        };
        if raised {
            w.abandon();
        } else {
            py.detach(|| w.finish()).map_err(to_error)?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("<lamina.TableWriter {:?}>", self.path)
    }
}

/// The body of `Db.ingest(paths, move=False)`: a list of dicts, one per file
/// (`source`, `level`, `seqno`, `entries`, and `linked`: true if the file
/// was linked in as it is rather than rewritten).
pub fn ingest<'py>(
    py: Python<'py>,
    db: &lamina::Db,
    paths: Vec<PathBuf>,
    move_files: bool,
) -> PyResult<Bound<'py, PyList>> {
    let opts = lamina::IngestOptions { move_files };
    let done = py.detach(|| db.ingest(&paths, opts)).map_err(to_error)?;
    let out = PyList::empty(py);
    for t in &done {
        let d = PyDict::new(py);
        d.set_item("source", t.source.clone())?;
        d.set_item("level", t.level)?;
        d.set_item("seqno", t.seqno)?;
        d.set_item("entries", t.entries)?;
        d.set_item("linked", t.linked)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Loads `(key, value)` pairs, in any order, into the database at `path`
/// (created if missing) without the WAL: pairs are sorted in memory in runs
/// of at most `memory` bytes, written to tables and ingested at once. Of
/// several pairs with one key the last wins. Returns the number of pairs
/// read. `options` are as for `lamina.open`; the database must not be open
/// read-write elsewhere. On an error nothing is loaded, and a database the
/// call created is removed.
#[pyfunction]
#[pyo3(signature = (path, pairs, *, memory=64 << 20, keyspace=None, **options))]
fn bulk_load(
    py: Python<'_>,
    path: PathBuf,
    pairs: &Bound<'_, PyAny>,
    memory: usize,
    keyspace: Option<String>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<u64> {
    let o = options::from_kwargs(options)?;
    let table_size = o.target_table_size.max(1 << 20);
    // A database this call creates is removed again if the load fails: the
    // ingest is all or nothing, and nothing is left behind either.
    let existed = path.join("CURRENT").exists();
    let dir_existed = path.is_dir();
    std::fs::create_dir_all(&path).map_err(|e| to_py(lamina::Error::io(&path, e)))?;
    let db = py.detach(|| lamina::Db::open(&path, o)).map_err(to_error)?;
    let opts = lamina::BulkLoadOptions {
        memory_bytes: memory.max(1),
        table_size,
        keyspace,
    };
    match load_pairs(py, &db, opts, pairs) {
        Ok(count) => {
            py.detach(|| db.close()).map_err(to_error)?;
            Ok(count)
        }
        Err(e) => {
            py.detach(|| {
                let _ = db.close();
                if !existed {
                    // `destroy` removes the directory once empty: one the
                    // caller made stays.
                    let _ = lamina::Db::destroy(&path, &lamina::Options::default());
                    if dir_existed {
                        let _ = std::fs::create_dir_all(&path);
                    }
                }
            });
            Err(e)
        }
    }
}

/// Feeds `pairs` to a bulk loader of `db` and ingests what it built.
fn load_pairs(
    py: Python<'_>,
    db: &lamina::Db,
    opts: lamina::BulkLoadOptions,
    pairs: &Bound<'_, PyAny>,
) -> PyResult<u64> {
    let mut loader = lamina::BulkLoader::new(db, opts);
    let mut chunk: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(CHUNK);
    let mut count = 0u64;
    let feed = |chunk: &mut Vec<(Vec<u8>, Vec<u8>)>, loader: &mut lamina::BulkLoader| {
        py.detach(|| chunk.drain(..).try_for_each(|(k, v)| loader.add(&k, &v)))
            .map_err(to_error)
    };
    for item in pairs.try_iter()? {
        let item = item?;
        let pair = item.cast::<PyTuple>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("bulk_load takes (key, value) pairs")
        })?;
        if pair.len() != 2 {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "bulk_load takes (key, value) pairs",
            ));
        }
        let (k, v) = (pair.get_item(0)?, pair.get_item(1)?);
        chunk.push((convert::key(&k)?.to_vec(), convert::value(&v)?.to_vec()));
        count += 1;
        if chunk.len() >= CHUNK {
            feed(&mut chunk, &mut loader)?;
        }
    }
    feed(&mut chunk, &mut loader)?;
    py.detach(|| loader.finish()).map_err(to_error)?;
    Ok(count)
}

/// `[(smallest, entries)]` of the live tables of the keyspace
/// `keyspace` (None: the default) of the database at `path`, opened
/// read-only, ordered by smallest key: where `lamina.dask.read_lamina`
/// splits partitions.
#[pyfunction]
#[pyo3(name = "_table_ranges", signature = (path, keyspace=None))]
fn table_ranges<'py>(
    py: Python<'py>,
    path: PathBuf,
    keyspace: Option<String>,
) -> PyResult<Bound<'py, PyList>> {
    let opts = lamina::Options {
        read_only: true,
        create_if_missing: false,
        ..lamina::Options::default()
    };
    let ranges = py
        .detach(|| {
            let db = lamina::Db::open(&path, opts)?;
            let r = db.table_ranges(keyspace.as_deref());
            db.close()?;
            r
        })
        .map_err(to_error)?;
    let out = PyList::empty(py);
    for (lo, n) in ranges {
        out.append((PyBytes::new(py, &lo), n))?;
    }
    Ok(out)
}
