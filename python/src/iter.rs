//! `lamina.Iterator`: a lazy, ordered walk over a key range.
//!
//! The engine iterator pins the version it was created on, so the walk sees
//! the data as of its creation and never blocks writers. Entries are fetched
//! in small batches with the GIL released, then handed out one by one.

use crate::errors::{closed, to_py};
use crate::state::Shared;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::collections::VecDeque;
use std::sync::Arc;

/// What an iterator or list yields for each entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Yield {
    Keys,
    Values,
    Items,
}

impl Yield {
    /// `iter` as this yield needs it: when only keys are wanted it folds no
    /// merge operand, so a key whose operands cannot be folded is listed
    /// like any other.
    pub fn apply(self, iter: lamina::Iter) -> lamina::Iter {
        if self == Yield::Keys {
            iter.keys_only()
        } else {
            iter
        }
    }

    /// The flags `keys=`, `values=` of `iterator()`; both false is refused.
    pub fn from_flags(keys: bool, values: bool) -> PyResult<Yield> {
        match (keys, values) {
            (true, true) => Ok(Yield::Items),
            (true, false) => Ok(Yield::Keys),
            (false, true) => Ok(Yield::Values),
            (false, false) => Err(pyo3::exceptions::PyValueError::new_err(
                "iterator() needs keys=True or values=True",
            )),
        }
    }

    /// The Python object for one entry.
    pub fn object<'py>(self, py: Python<'py>, k: &[u8], v: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Yield::Keys => PyBytes::new(py, k).into_any(),
            Yield::Values => PyBytes::new(py, v).into_any(),
            Yield::Items => pair(py, k, v)?.into_any(),
        })
    }
}

/// A `(key, value)` tuple of bytes.
pub fn pair<'py>(py: Python<'py>, k: &[u8], v: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, [PyBytes::new(py, k), PyBytes::new(py, v)])
}

/// Entries fetched per engine round, and the byte budget of one round.
const BATCH_ENTRIES: usize = 256;
const BATCH_BYTES: usize = 1 << 20;

struct Cursor {
    /// `None` once the walk has ended or failed (the pinned version is released).
    iter: Option<lamina::Iter>,
    reverse: bool,
    buf: VecDeque<(Vec<u8>, Vec<u8>)>,
    failed: Option<lamina::Error>,
}

impl Cursor {
    /// Fetches the next batch. Runs without the GIL.
    fn fill(&mut self) {
        let Some(iter) = self.iter.as_mut() else {
            return;
        };
        let mut bytes = 0usize;
        while self.buf.len() < BATCH_ENTRIES && bytes < BATCH_BYTES {
            let next = if self.reverse {
                iter.next_back()
            } else {
                iter.next()
            };
            match next {
                Some(Ok((k, v))) => {
                    bytes += k.len() + v.len();
                    self.buf.push_back((k, v));
                }
                Some(Err(e)) => {
                    self.failed = Some(e);
                    self.iter = None;
                    return;
                }
                None => {
                    self.iter = None;
                    return;
                }
            }
        }
    }
}

/// An ordered iterator over keys, values or `(key, value)` pairs.
///
/// It sees the database as of its creation (later writes are not seen) and
/// never blocks writers. Not meant to be advanced by several threads at once
/// (that is safe, but which thread gets which entry is unspecified).
#[pyclass(module = "lamina", name = "Iterator", frozen)]
pub struct RangeIter {
    shared: Arc<Shared>,
    what: Yield,
    cursor: Mutex<Cursor>,
}

impl RangeIter {
    /// Wraps an engine iterator. REQUIRES: `iter` was made from `shared`'s database.
    pub fn new(
        shared: Arc<Shared>,
        iter: Option<lamina::Iter>,
        reverse: bool,
        what: Yield,
    ) -> RangeIter {
        RangeIter {
            shared,
            what,
            cursor: Mutex::new(Cursor {
                iter,
                reverse,
                buf: VecDeque::new(),
                failed: None,
            }),
        }
    }
}

#[pymethods]
impl RangeIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        loop {
            {
                // Locked with the GIL held only briefly: `fill` never waits for the GIL.
                let mut c = self.cursor.lock();
                if let Some((k, v)) = c.buf.pop_front() {
                    return self.what.object(py, &k, &v).map(Some);
                }
                if let Some(e) = c.failed.take() {
                    return Err(to_py(e));
                }
                if c.iter.is_none() {
                    return Ok(None);
                }
            }
            if self.shared.is_closed() {
                self.cursor.lock().iter = None;
                return Err(closed("database"));
            }
            py.detach(|| self.cursor.lock().fill());
        }
    }

    fn __repr__(&self) -> String {
        let what = match self.what {
            Yield::Keys => "keys",
            Yield::Values => "values",
            Yield::Items => "items",
        };
        format!("<lamina.Iterator over {what}>")
    }
}
