//! Values into Python `bytes`: a value kept in a blob file is read straight
//! into the new `bytes` object's buffer (one copy, from the file, with no
//! zeroing before it), with the GIL released during the read; a value in
//! memory is copied with the GIL held; a large value read again is the
//! `bytes` object read before, kept by the engine (no copy).

use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::any::Any;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// The `bytes` of `v`, built in place. A value read from a blob file is
/// offered, as this very object, to the values kept in memory: read again,
/// it is handed out again ([`kept_bytes`]) rather than copied.
pub fn to_bytes<'py>(py: Python<'py>, v: &lamina::LazyValue) -> PyResult<Bound<'py, PyBytes>> {
    // Bytes in memory are copied with the GIL held: only a read of a file
    // can block.
    if let Some(kept) = v.kept() {
        return Ok(kept_bytes(py, kept));
    }
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
    let bytes = unsafe {
        let raw = pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), size);
        let bytes = Bound::from_owned_ptr_or_err(py, raw)?.cast_into_unchecked::<PyBytes>();
        let data = pyo3::ffi::PyBytes_AsString(raw).cast::<MaybeUninit<u8>>();
        let buf = std::slice::from_raw_parts_mut(data, len);
        py.detach(|| v.read_into_uninit_unkept(buf).map(|_| ()))
            .map_err(to_py)?;
        bytes
    };
    v.keep(|| Arc::new(KeptObject::new(&bytes)));
    Ok(bytes)
}

/// The `bytes` of a value kept in memory: the object itself if the binding
/// kept it (a `bytes` object is immutable, so handing it out again is
/// handing out the value), a new copy if the engine kept its own.
fn kept_bytes<'py>(py: Python<'py>, kept: &lamina::Kept) -> Bound<'py, PyBytes> {
    let any: &dyn Any = &**kept;
    match any.downcast_ref::<KeptObject>() {
        Some(k) => k.bytes.bind(py).clone(),
        None => PyBytes::new(py, kept.bytes()),
    }
}

/// A `bytes` object kept by the engine as the value it holds.
struct KeptObject {
    bytes: Py<PyBytes>,
    /// Its buffer: read by the engine without the GIL.
    data: *const u8,
    len: usize,
}

impl KeptObject {
    fn new(bytes: &Bound<'_, PyBytes>) -> KeptObject {
        let b = bytes.as_bytes();
        KeptObject {
            data: b.as_ptr(),
            len: b.len(),
            bytes: bytes.clone().unbind(),
        }
    }
}

// SAFETY: `data` points into the buffer of the `bytes` object `bytes` holds
// a reference to: the buffer lives, unmoved and unchanged (a `bytes` object
// is immutable), as long as the object, and reading it needs no GIL.
#[allow(unsafe_code)]
unsafe impl Send for KeptObject {}
#[allow(unsafe_code)]
unsafe impl Sync for KeptObject {}

impl lamina::KeptBytes for KeptObject {
    fn bytes(&self) -> &[u8] {
        // SAFETY: as above: `len` bytes at `data`, alive while `self` is.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.data, self.len)
        }
    }
}
