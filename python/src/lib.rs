//! `lamina._lamina`: the Rust half of lamina's Python module.
//!
//! The Python package `lamina` (python/lamina/__init__.py) gives it dbm
//! semantics (`lamina.open(path, flag, mode)`); everything that touches the
//! engine is here, and every engine call that may block runs with the GIL
//! released. No Rust panic crosses into Python as anything but an exception:
//! every engine error becomes `lamina.error`, `KeyError`, `TypeError` or
//! `ValueError` (see errors.rs).

mod batch;
mod bounds;
mod convert;
mod cursor;
mod db;
mod errors;
mod iter;
mod keyspace;
mod options;
mod ranges;
mod reader;
mod snapshot;
mod state;
mod stats;
mod table_writer;
mod transaction;
mod value;

use pyo3::prelude::*;

#[pymodule]
fn _lamina(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::install_str(py)?;
    m.add("error", py.get_type::<errors::error>())?;
    m.add("Conflict", py.get_type::<errors::Conflict>())?;
    m.add_class::<transaction::Transaction>()?;
    m.add_class::<ranges::Ranges>()?;
    m.add_class::<keyspace::Keyspace>()?;
    m.add_class::<db::Db>()?;
    m.add_class::<snapshot::Snapshot>()?;
    m.add_class::<batch::Batch>()?;
    m.add_class::<iter::RangeIter>()?;
    m.add_class::<cursor::Cursor>()?;
    m.add_function(wrap_pyfunction!(db::destroy, m)?)?;
    table_writer::register(m)?;
    m.add("OPTIONS", options::NAMES.to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
