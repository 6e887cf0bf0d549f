//! The one error type of lamina.

use std::path::PathBuf;

/// Every error lamina returns.
///
/// Reading bytes from disk never panics: damaged bytes become
/// [`Error::Corruption`] naming the file, the offset and what was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error, with the path it concerned when known.
    #[error("I/O error{}: {source}", path_suffix(.path))]
    Io {
        /// The file or directory the operation touched, if known.
        path: Option<PathBuf>,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Bytes on disk are not what the format allows.
    #[error("corruption in {} at offset {offset}: {reason}", .file.display())]
    Corruption {
        /// The damaged file.
        file: PathBuf,
        /// Byte offset in the file where the damage was found.
        offset: u64,
        /// What was wrong, in words.
        reason: String,
    },
    /// Another handle (in this process or another) holds the database's lock.
    #[error("database {} is locked by another process or handle", .0.display())]
    Locked(PathBuf),
    /// The caller passed something lamina cannot accept.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The path does not hold a lamina database (and `create_if_missing` is off,
    /// or the path is something other than a directory).
    #[error("{} is not a lamina database: {reason}", .path.display())]
    NotADatabase {
        /// The path that was opened.
        path: PathBuf,
        /// Why it was refused.
        reason: String,
    },
    /// A database already exists where `error_if_exists` asked for none.
    #[error("database {} already exists", .0.display())]
    AlreadyExists(PathBuf),
    /// A file already exists where a new one was to be written (a
    /// [`crate::TableWriter`]'s output); it is left as it was.
    #[error("file {} already exists; a table is written only to a new file", .0.display())]
    FileExists(PathBuf),
    /// An earlier write or sync failed; the handle refuses writes until it is reopened.
    #[error("database is poisoned by an earlier failure ({0}); reopen it")]
    Poisoned(String),
    /// The handle was closed.
    #[error("database handle is closed")]
    Closed,
    /// A write was attempted on a read-only handle.
    #[error("database is open read-only")]
    ReadOnly,
    /// A named keyspace does not exist.
    #[error("no keyspace named {0:?}")]
    NoSuchKeyspace(String),
    /// A keyspace handle (or a batch naming its id) was used after the
    /// keyspace was dropped. Holds the keyspace's name, or its id where
    /// only that is known.
    #[error("keyspace {0} was dropped; its handles no longer read or write")]
    KeyspaceDropped(String),
    /// The handle was opened in another process: this one is a child forked
    /// after the open. The child must not use (or close) its parent's handle;
    /// it opens the database itself once the parent has closed it.
    #[error(
        "database handle belongs to the process that opened it, and this process was forked \
         from it; open the database in this process instead (after the parent closes it)"
    )]
    WrongProcess,
    /// The merge operator could not fold the stored value and operands of
    /// one key; the message names the key and its keyspace. Other keys are
    /// unaffected, and an iterator can go on past it.
    #[error("merge failed for {0}")]
    Merge(String),
    /// A transaction did not commit: something it read changed after its
    /// snapshot (the message names the key or range, in words), or the
    /// engine could no longer tell. Nothing of it was written; run it
    /// again ([`crate::Db::transact`] does).
    #[error("transaction conflict: {0}")]
    Conflict(String),
}

fn path_suffix(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!(" on {}", p.display()),
        None => String::new(),
    }
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: Some(path.into()),
            source,
        }
    }

    /// A corruption error in `file` at `offset`.
    pub fn corruption(file: impl Into<PathBuf>, offset: u64, reason: impl Into<String>) -> Error {
        Error::Corruption {
            file: file.into(),
            offset,
            reason: reason.into(),
        }
    }

    /// The refusal of `file`, whose layout (`what`, such as "WAL header
    /// version 3") only a pre-release build of lamina wrote: corruption at
    /// offset 0, in the words every file kind uses
    /// (docs/format.md#format-1--the-first-release).
    pub(crate) fn pre_release(file: impl Into<PathBuf>, what: &str) -> Error {
        Error::corruption(file, 0, pre_release_reason(what))
    }

    /// True for [`Error::Corruption`].
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }
}

/// Why a file of a pre-release layout (`what`) is refused.
pub(crate) fn pre_release_reason(what: &str) -> String {
    format!("written by a pre-release build of lamina ({what}); this build reads format 1 only")
}

impl From<std::io::Error> for Error {
    fn from(source: std::io::Error) -> Error {
        Error::Io { path: None, source }
    }
}

/// lamina's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Clone for Error {
    /// Errors are cloned so that one failure can be reported to every waiter
    /// (a commit group, an iterator's later calls). An I/O error keeps its
    /// kind and message.
    fn clone(&self) -> Error {
        match self {
            Error::Io { path, source } => Error::Io {
                path: path.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            Error::Corruption {
                file,
                offset,
                reason,
            } => Error::Corruption {
                file: file.clone(),
                offset: *offset,
                reason: reason.clone(),
            },
            Error::Locked(p) => Error::Locked(p.clone()),
            Error::InvalidArgument(s) => Error::InvalidArgument(s.clone()),
            Error::NotADatabase { path, reason } => Error::NotADatabase {
                path: path.clone(),
                reason: reason.clone(),
            },
            Error::AlreadyExists(p) => Error::AlreadyExists(p.clone()),
            Error::FileExists(p) => Error::FileExists(p.clone()),
            Error::Poisoned(s) => Error::Poisoned(s.clone()),
            Error::Closed => Error::Closed,
            Error::ReadOnly => Error::ReadOnly,
            Error::NoSuchKeyspace(s) => Error::NoSuchKeyspace(s.clone()),
            Error::KeyspaceDropped(s) => Error::KeyspaceDropped(s.clone()),
            Error::Merge(s) => Error::Merge(s.clone()),
            Error::Conflict(s) => Error::Conflict(s.clone()),
            Error::WrongProcess => Error::WrongProcess,
        }
    }
}
