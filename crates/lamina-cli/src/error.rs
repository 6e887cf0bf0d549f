//! The CLI's error: a message for stderr and the exit code it maps to.
//!
//! Exit codes are part of the interface (documented in `lamina --help` and
//! `docs/cli.md`); never renumber them.

use std::fmt;
use std::io;

/// What the process exit code says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Everything asked for was done.
    Ok = 0,
    /// Some of the work failed and the rest was done: a shell command failed,
    /// `get` found no such key.
    Failed = 1,
    /// The command line was wrong.
    Usage = 2,
    /// The input (a dump, a command stream) is malformed; the load stopped
    /// there, keeping what came before.
    BadInput = 3,
    /// The database could not be opened: missing, locked, not a database.
    CannotOpen = 4,
    /// An I/O error (a full disk, a permission) stopped the work.
    Io = 5,
    /// The database is damaged (`check` found a problem, or a read met one).
    Damage = 6,
}

/// Text for `lamina --help`.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  success
  1  some of the work failed (a shell command, a missing key for get); the rest was done
  2  usage error on the command line
  3  malformed input (dump file, command stream); records before the error are kept
  4  the database cannot be opened (missing, locked, not a lamina database)
  5  I/O error (disk full, permissions); records acknowledged before it are kept
  6  the database is damaged (check found a problem, or a read hit one)";

/// A failure to report on stderr, with its exit code.
#[derive(Debug)]
pub struct CliError {
    /// The exit code.
    pub exit: Exit,
    /// One line, without the `lamina: ` prefix.
    pub message: String,
}

impl CliError {
    /// An error with an explicit exit code.
    pub fn new(exit: Exit, message: impl Into<String>) -> CliError {
        CliError {
            exit,
            message: message.into(),
        }
    }

    /// Malformed input.
    pub fn bad_input(message: impl Into<String>) -> CliError {
        CliError::new(Exit::BadInput, message)
    }

    /// An I/O error on a file that is not the database.
    pub fn io(what: impl fmt::Display, err: io::Error) -> CliError {
        CliError::new(Exit::Io, format!("{what}: {err}"))
    }

    /// An engine error while opening the database at `path`.
    pub fn open(path: &std::path::Path, err: lamina::Error) -> CliError {
        let exit = match exit_of(&err) {
            Exit::Io | Exit::Damage => exit_of(&err),
            _ => Exit::CannotOpen,
        };
        CliError::new(
            exit,
            format!("cannot open database {}: {err}", path.display()),
        )
    }

    /// Appends more words to the message.
    pub fn context_after(mut self, what: impl fmt::Display) -> CliError {
        self.message = format!("{}; {what}", self.message);
        self
    }

    /// Prefixes the message with some context.
    pub fn context(mut self, what: impl fmt::Display) -> CliError {
        self.message = format!("{what}: {}", self.message);
        self
    }
}

/// The exit code an engine error maps to.
pub fn exit_of(err: &lamina::Error) -> Exit {
    use lamina::Error as E;
    match err {
        E::Io { .. } | E::Poisoned(_) => Exit::Io,
        E::Corruption { .. } => Exit::Damage,
        E::Locked(_) | E::NotADatabase { .. } | E::AlreadyExists(_) => Exit::CannotOpen,
        E::InvalidArgument(_) => Exit::BadInput,
        _ => Exit::Failed,
    }
}

impl From<lamina::Error> for CliError {
    fn from(err: lamina::Error) -> CliError {
        CliError::new(exit_of(&err), err.to_string())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The CLI's result type.
pub type CliResult<T = ()> = Result<T, CliError>;
