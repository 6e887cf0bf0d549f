//! `lamina inspect wal|table|manifest|blob FILE`: prints one file of a database,
//! one record or entry per line, for debugging. Reads the file only; it
//! does not open the database.

use crate::cmd::{output_error, Ctx};
use crate::error::{CliError, CliResult, Exit};
use lamina::inspect;
use std::io::Write;
use std::path::PathBuf;

/// The kinds of file `inspect` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// A write-ahead log segment (`NNNNNN.wal`).
    Wal,
    /// A sorted table (`NNNNNN.sst`).
    Table,
    /// The manifest (`MANIFEST-NNNNNN`).
    Manifest,
    /// A blob file of large values (`NNNNNN.blob`).
    Blob,
}

/// Arguments of `lamina inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// What kind of file it is.
    #[arg(value_enum)]
    pub kind: Kind,
    /// The file.
    pub file: PathBuf,
}

/// Runs `lamina inspect`.
pub fn run(args: InspectArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let fs = lamina::fs::RealFs;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let result = match args.kind {
        Kind::Wal => inspect::dump_wal(&fs, &args.file, &mut out),
        Kind::Table => inspect::dump_table(&fs, &args.file, &mut out),
        Kind::Manifest => inspect::dump_manifest(&fs, &args.file, &mut out),
        Kind::Blob => inspect::dump_blob(&fs, &args.file, &mut out),
    };
    match result {
        Err(lamina::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            return Ok(Exit::Ok)
        }
        other => other.map_err(|e| CliError::from(e).context(args.file.display()))?,
    }
    out.flush().map_err(output_error)?;
    Ok(Exit::Ok)
}
