//! `lamina backup DB DEST`: a consistent copy of a database into a new
//! directory. The database must be closed or open in no other process (the
//! backup takes its lock).

use crate::cmd::Ctx;
use crate::engine::{self, Mode};
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
    let db = engine::open(&args.db, Mode::Existing)?;
    db.backup(&args.dest)
        .map_err(|e| CliError::from(e).context("backup"))?;
    db.close()?;
    println!("backed up {} to {}", args.db.display(), args.dest.display());
    Ok(Exit::Ok)
}
