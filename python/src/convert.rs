//! Keys and values from Python: `bytes` as they are, `str` encoded UTF-8,
//! anything else a `TypeError` (as `dbm.gnu` does).
//!
//! The slices borrow the Python object's own buffer (for `str`, CPython's
//! cached UTF-8 form), so nothing is copied before the engine call.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

/// The bytes of a key or value argument. `what` names it in the `TypeError`.
pub fn bytes_arg<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<&'a [u8]> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return utf8(s);
    }
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned());
    Err(PyTypeError::new_err(format!(
        "lamina {what} must be bytes or str, not {type_name}"
    )))
}

// `PyUnicode_AsUTF8AndSize` is in the stable ABI from Python 3.10; Python
// 3.9 exports it too, with the same signature, but pyo3's `abi3-py39` build
// does not declare it. It borrows the str's cached UTF-8 form, so a `str` key
// costs no copy on any version the abi3 wheel runs on.
extern "C" {
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut pyo3::ffi::PyObject,
        size: *mut pyo3::ffi::Py_ssize_t,
    ) -> *const std::ffi::c_char;
}

/// The UTF-8 bytes of `s`, borrowed from the str object (valid while it lives).
/// `UnicodeEncodeError` for lone surrogates.
fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a [u8]> {
    let mut size: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live str (the GIL is held through `Bound`); the returned
    // buffer belongs to the str object and lives as long as it, which the
    // borrow of `s` guarantees; on failure the function returns null with an
    // exception set.
    unsafe {
        let data = PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size);
        if data.is_null() {
            return Err(PyErr::fetch(s.py()));
        }
        let len = usize::try_from(size).unwrap_or(0);
        Ok(std::slice::from_raw_parts(data.cast::<u8>(), len))
    }
}

/// A key argument.
pub fn key<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    bytes_arg(obj, "keys")
}

/// A value argument.
pub fn value<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    bytes_arg(obj, "values")
}

/// An optional bound (`start`, `stop`, `prefix`): `None` means unbounded.
pub fn opt_key(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    match obj {
        Some(o) if !o.is_none() => Ok(Some(key(o)?.to_vec())),
        _ => Ok(None),
    }
}

/// The 8-byte little-endian operand of the engine's `add` merge operator for
/// `n`, which may be negative (two's complement: the counter wraps like a
/// signed 64-bit integer). `OverflowError` outside `-2**63 <= n < 2**64`.
pub fn counter_operand(n: i128) -> PyResult<[u8; 8]> {
    if n < i128::from(i64::MIN) || n > i128::from(u64::MAX) {
        return Err(pyo3::exceptions::PyOverflowError::new_err(
            "increment must fit in 64 bits (-2**63 <= n < 2**64)",
        ));
    }
    // The low 64 bits: n modulo 2**64.
    Ok((n as u64).to_le_bytes())
}

/// The signed value of a counter written by `increment`, or `None` when the
/// stored value is not 8 bytes long.
pub fn counter_value(bytes: &[u8]) -> Option<i64> {
    <[u8; 8]>::try_from(bytes).ok().map(i64::from_le_bytes)
}

/// The pairs of a mapping (anything with `keys()`) or of an iterable of
/// `(key, value)` pairs, converted to bytes.
pub fn pairs(other: &Bound<'_, PyAny>) -> PyResult<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut push = |k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>| -> PyResult<()> {
        out.push((key(k)?.to_vec(), value(v)?.to_vec()));
        Ok(())
    };
    if let Ok(d) = other.cast::<PyDict>() {
        for (k, v) in d.iter() {
            push(&k, &v)?;
        }
    } else if other.hasattr("keys")? {
        for k in other.call_method0("keys")?.try_iter()? {
            let k = k?;
            let v = other.get_item(&k)?;
            push(&k, &v)?;
        }
    } else {
        for item in other.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(
                    "update() needs a mapping or an iterable of (key, value) pairs",
                )
            })?;
            push(&k, &v)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_wrap_modulo_2_pow_64() {
        assert_eq!(counter_operand(-1).ok(), Some(u64::MAX.to_le_bytes()));
        assert_eq!(
            counter_operand(i128::from(u64::MAX)).ok(),
            Some(u64::MAX.to_le_bytes())
        );
        assert!(counter_operand(i128::from(u64::MAX) + 1).is_err());
        assert!(counter_operand(i128::from(i64::MIN) - 1).is_err());
    }

    #[test]
    fn counters_are_signed_little_endian() {
        assert_eq!(counter_value(&5i64.to_le_bytes()), Some(5));
        assert_eq!(counter_value(&(-3i64).to_le_bytes()), Some(-3));
        assert_eq!(counter_value(&u64::MAX.to_le_bytes()), Some(-1));
        assert_eq!(counter_value(b"1234567"), None);
    }
}
