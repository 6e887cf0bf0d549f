//! `lamina backup DB DEST`: a consistent copy of a database into a new
//! directory, taken while other processes may be writing to it.
//!
//! If no process holds the database, the backup opens it read-write (a
//! flush, then the files). If a writer holds it, the backup opens it
//! read-only beside the writer and copies that view: the state the writer
//! had reached when the backup opened (a prefix of what it acknowledged).
//! Tables and blob files are hard-linked where the file system allows.

use crate::cmd::Ctx;
use crate::engine;
use crate::error::{CliError, CliResult, Exit};
use std::path::PathBuf;

/// Arguments of `lamina backup`.
#[derive(Debug, clap::Args)]
pub struct BackupArgs {
    /// The database directory.
    pub db: PathBuf,
    /// The new directory to copy it to (must not exist).
    pub dest: PathBuf,
}

/// Runs `lamina backup`.
pub fn run(args: BackupArgs, _ctx: &Ctx) -> CliResult<Exit> {
    if args.dest.exists() {
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "{} already exists; a backup goes into a new directory",
                args.dest.display()
            ),
        ));
    }
    crate::cmd::refuse_inside_database(&args.db, &args.dest)?;
    let (db, beside_writer) = engine::open_beside_writer(&args.db)?;
    db.backup(&args.dest)
        .map_err(|e| CliError::from(e).context("backup"))?;
    db.close()?;
    let how = if beside_writer {
        " (as of now; another process is writing to it)"
    } else {
        ""
    };
    println!(
        "backed up {} to {}{how}",
        args.db.display(),
        args.dest.display()
    );
    Ok(Exit::Ok)
}
