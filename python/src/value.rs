//! Values into Python `bytes`: a value kept in a blob file is read straight
//! into the new `bytes` object's buffer (one copy, from the file, with no
//! zeroing before it), with the GIL released during the read; a value in
//! memory is copied with the GIL held.

use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::mem::MaybeUninit;

/// The `bytes` of `v`, built in place.
pub fn to_bytes<'py>(py: Python<'py>, v: &lamina::LazyValue) -> PyResult<Bound<'py, PyBytes>> {
    // Bytes in memory are copied with the GIL held: only a read of a file
    // can block.
    if let Some(b) = v.in_memory() {
        return Ok(PyBytes::new(py, b));
    }
    let len = v.len();
    let size = pyo3::ffi::Py_ssize_t::try_from(len)
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("value too large"))?;
    // SAFETY: `PyBytes_FromStringAndSize(NULL, size)` returns a new bytes
    // object owning `size` bytes not yet initialised, or null with an
    // exception set (`assume_owned_or_err`). Its buffer (`PyBytes_AsString`)
    // is viewed as `MaybeUninit<u8>`, which is sound for uninitialised
    // memory, and only while `bytes` is alive and not yet visible to any
    // other Python code, so it may be filled without the GIL. If the read
    // fails, dropping `bytes` frees the object.
    #[allow(unsafe_code)]
    unsafe {
        let raw = pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), size);
        let bytes = Bound::from_owned_ptr_or_err(py, raw)?.cast_into_unchecked::<PyBytes>();
        let data = pyo3::ffi::PyBytes_AsString(raw).cast::<MaybeUninit<u8>>();
        let buf = std::slice::from_raw_parts_mut(data, len);
        py.detach(|| v.read_into_uninit(buf).map(|_| ()))
            .map_err(to_py)?;
        Ok(bytes)
    }
}
