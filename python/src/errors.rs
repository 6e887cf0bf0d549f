//! `lamina.error` and the mapping of every engine error to a Python exception.
//!
//! The mapping follows what `dbm.gnu` raises for the same situation:
//! - `lamina.error` (a subclass of `OSError`, like `dbm.gnu.error`) for
//!   anything about the database or its files. When the operating system gave
//!   an errno, the exception carries `errno`, `strerror` and `filename`, so it
//!   prints as `[Errno 2] No such file or directory: 'path'`; otherwise it
//!   carries the message (which names the file) and, when a file is
//!   concerned, `filename`, and prints as the message
//!   (`old.gdbm is not a lamina database: it is a file, not a directory`).
//! - `ValueError` for an argument lamina cannot accept (a key over 64 KiB, a
//!   value over the size limit, a bad option), `KeyError` for a missing
//!   keyspace.

use lamina::Error;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use std::path::Path;

#[allow(non_camel_case_types)]
mod class {
    pyo3::create_exception!(
        lamina,
        error,
        pyo3::exceptions::PyOSError,
        "lamina's exception class: a subclass of OSError, as dbm.gnu.error is.\n\n\
         Raised for anything about the database or its files: opening a path that\n\
         is missing or is not a lamina database, a database locked by another\n\
         process, writing to a database opened read-only, using a closed\n\
         database, damaged files, failed I/O. `errno`, `strerror` and `filename`\n\
         are set where they apply."
    );
}

pub use class::error;

pyo3::create_exception!(
    lamina,
    Conflict,
    error,
    "A transaction did not commit because something it read changed after\n\
     it began (the message names the key), or the engine could no longer\n\
     tell; nothing of it was written. Run it again: `Db.transact(fn)` does."
);

/// The message of `e` if it is a `Conflict`: `Db.transact` runs again.
pub fn conflict_message(py: Python<'_>, e: &PyErr) -> Option<String> {
    e.is_instance_of::<Conflict>(py)
        .then(|| e.value(py).to_string())
}

/// An `error` with a message only.
pub fn plain(msg: impl Into<String>) -> PyErr {
    error::new_err(msg.into())
}

/// An `error` raised when the database (or a snapshot or batch) was closed.
pub fn closed(what: &str) -> PyErr {
    plain(format!("{what} has already been closed"))
}

/// An `error` with an errno, its text and the file concerned, like the
/// `OSError(errno, strerror, filename)` that `dbm.gnu` raises.
pub fn with_errno(errno: i32, strerror: &str, path: &Path) -> PyErr {
    error::new_err((errno, strerror.to_owned(), path.as_os_str().to_owned()))
}

/// `lamina.error.__str__`: OSError's own form when there is an errno, the
/// message otherwise. (OSError alone prints an error that has a `filename`
/// but no errno as `[Errno None] None: 'path'`, hiding the message.)
const STR_SOURCE: &std::ffi::CStr = c"def __str__(self):
    if self.errno is None and self.strerror is None and len(self.args) == 1:
        return str(self.args[0])
    return OSError.__str__(self)
";

/// Gives `lamina.error` its `__str__` (see `STR_SOURCE`). Called once, when
/// the module is initialised.
pub fn install_str(py: Python<'_>) -> PyResult<()> {
    let ns = pyo3::types::PyDict::new(py);
    py.run(STR_SOURCE, Some(&ns), Some(&ns))?;
    let f = ns
        .get_item("__str__")?
        .ok_or_else(|| plain("lamina.error.__str__ was not defined"))?;
    py.get_type::<error>().setattr("__str__", f)
}

/// An `error` with a message (which names `path`) whose `filename` attribute is `path`.
fn with_filename(py: Python<'_>, msg: String, path: &Path) -> PyErr {
    let err = error::new_err(msg);
    // Setting an attribute on a fresh OSError cannot fail short of memory
    // exhaustion; if it does, the error still says what went wrong.
    let _ = err.value(py).setattr("filename", path.as_os_str());
    err
}

/// The operating system's text for `errno`, without Rust's "(os error N)" suffix.
pub fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.rfind(" (os error") {
        Some(cut) => text.get(..cut).unwrap_or(&text).to_owned(),
        None => text,
    }
}

/// Converts an engine error into the Python exception described in the module docs.
pub fn to_py(err: Error) -> PyErr {
    Python::attach(|py| convert(py, err))
}

fn convert(py: Python<'_>, err: Error) -> PyErr {
    match err {
        Error::Io { path, source } => match (source.raw_os_error(), path) {
            (Some(errno), Some(path)) => with_errno(errno, &strerror(errno), &path),
            (Some(errno), None) => error::new_err((errno, strerror(errno))),
            (None, Some(path)) => with_filename(
                py,
                format!("I/O error on {}: {source}", path.display()),
                &path,
            ),
            (None, None) => plain(format!("I/O error: {source}")),
        },
        Error::Locked(ref path) => with_errno(
            libc::EAGAIN,
            "database is locked by another process or handle",
            path,
        ),
        Error::AlreadyExists(ref path) => with_errno(libc::EEXIST, "database already exists", path),
        Error::FileExists(ref path) => with_errno(
            libc::EEXIST,
            "file already exists (a table is written only to a new file)",
            path,
        ),
        Error::NotADatabase { ref path, .. } => with_filename(py, err.to_string(), &path.clone()),
        Error::Corruption { ref file, .. } => with_filename(py, err.to_string(), &file.clone()),
        Error::InvalidArgument(msg) => PyValueError::new_err(msg),
        Error::NoSuchKeyspace(name) => PyKeyError::new_err(name),
        Error::Merge(msg) => PyValueError::new_err(msg),
        Error::Conflict(msg) => Conflict::new_err(msg),
        Error::KeyspaceDropped(_) => plain(err.to_string()),
        Error::Closed => closed("database"),
        Error::WrongProcess => plain(Error::WrongProcess.to_string()),
        Error::ReadOnly => read_only(),
        other => plain(other.to_string()),
    }
}

/// The `error` for a write on a read-only database (dbm.gnu says "Reader can't store").
pub fn read_only() -> PyErr {
    plain("database is open read-only (flag 'r'): it cannot be changed")
}
