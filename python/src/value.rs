//! Values into Python `bytes`: a value kept in a blob file is read straight
//! into the new `bytes` object's buffer (one copy, from the file), with the
//! GIL released during the read.

use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The `bytes` of `v`, built in place.
pub fn to_bytes<'py>(py: Python<'py>, v: &lamina::LazyValue) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, v.len(), |buf| {
        // The new object is not yet visible to any other Python code, so its
        // buffer may be filled without the GIL.
        py.detach(|| v.read_into(buf)).map_err(to_py)
    })
}
