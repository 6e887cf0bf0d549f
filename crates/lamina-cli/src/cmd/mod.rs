//! One module per subcommand, and what they share.

pub mod backup;
pub mod check;
pub mod compact;
pub mod completions;
pub mod count;
pub mod delete;
pub mod dump;
pub mod gen;
pub mod get;
pub mod ingest;
pub mod inspect;
pub mod load;
pub mod load_bulk;
pub mod man;
pub mod put;
pub mod salvage;
pub mod scan;
pub mod shell;
pub mod stat;

use crate::error::{CliError, CliResult, Exit};
use crate::progress::Settings;
use std::ffi::OsStr;
use std::io::{self, BufRead, Write};
use std::path::Path;

/// What every command gets from the global options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ctx {
    /// How to show progress.
    pub progress: Settings,
}

/// A key or value given on the command line: its bytes, or decoded from hex
/// with `--hex`.
pub fn arg_bytes(arg: &OsStr, hex: bool) -> CliResult<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let raw = arg.as_bytes();
    if !hex {
        return Ok(raw.to_vec());
    }
    let bad = || CliError::new(Exit::Usage, format!("not hex: {}", arg.to_string_lossy()));
    if !raw.len().is_multiple_of(2) {
        return Err(bad());
    }
    raw.chunks_exact(2)
        .map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}

/// Appends `bytes` as lowercase hex.
pub fn push_hex(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        out.push(HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'));
        out.push(HEX.get(usize::from(b & 15)).copied().unwrap_or(b'0'));
    }
}

/// Standard output, or a new file (`-` is standard output).
pub fn output(path: Option<&Path>) -> CliResult<Box<dyn Write>> {
    match path {
        None => Ok(Box::new(io::BufWriter::with_capacity(
            1 << 20,
            io::stdout(),
        ))),
        Some(p) if p == Path::new("-") => Ok(Box::new(io::BufWriter::with_capacity(
            1 << 20,
            io::stdout(),
        ))),
        Some(p) => {
            let f = std::fs::File::create(p).map_err(|e| CliError::io(p.display(), e))?;
            Ok(Box::new(io::BufWriter::with_capacity(1 << 20, f)))
        }
    }
}

/// Refuses `out`, a file a command is to write, if it is inside the
/// database directory `db`: lamina would take it for one of the database's
/// files (a dump named `000088.wal` is read as a log segment, and the
/// database reports corruption) or it would overwrite one.
pub fn refuse_inside_database(db: &Path, out: &Path) -> CliResult<()> {
    let Ok(db_dir) = db.canonicalize() else {
        return Ok(());
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // Where the file goes: its directory, or where it leads if it is a link.
    let dir = out
        .canonicalize()
        .ok()
        .and_then(|t| t.parent().map(Path::to_path_buf))
        .or_else(|| parent.canonicalize().ok());
    match dir {
        Some(dir) if dir.starts_with(&db_dir) => Err(CliError::new(
            Exit::Usage,
            format!(
                "{} is inside the database directory {}: lamina would take a file written \
                 there for one of the database's; write it elsewhere",
                out.display(),
                db.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// Standard input or a file (`-` is standard input), and its size when known.
pub fn input(path: Option<&Path>) -> CliResult<(Box<dyn BufRead>, Option<u64>)> {
    match path {
        Some(p) if p != Path::new("-") => {
            let f = std::fs::File::open(p).map_err(|e| CliError::io(p.display(), e))?;
            let size = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
            Ok((Box::new(io::BufReader::with_capacity(1 << 20, f)), size))
        }
        _ => Ok((
            Box::new(io::BufReader::with_capacity(1 << 20, io::stdin())),
            None,
        )),
    }
}

/// Maps a write error on the output: a closed pipe ends the command quietly.
pub fn output_error(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::new(Exit::Ok, String::new())
    } else {
        CliError::io("writing output", e)
    }
}
