//! `lamina ingest DB FILE...`: adds tables written by a table writer to a
//! database, all of them or none.

use crate::cmd::Ctx;
use crate::engine::{self, Mode};
use crate::error::{CliResult, Exit};
use std::path::PathBuf;

/// Arguments of `lamina ingest`.
#[derive(Debug, clap::Args)]
pub struct IngestArgs {
    /// The database directory (created if missing).
    pub db: PathBuf,
    /// Tables written by a table writer (lamina.TableWriter); a later file's
    /// value of a key wins over an earlier file's.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Remove the files once they are ingested.
    #[arg(long = "move")]
    pub move_files: bool,
}

/// Runs `lamina ingest`, printing where each table went.
pub fn run(args: IngestArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let db = engine::open(&args.db, Mode::Create)?;
    let opts = lamina::IngestOptions {
        move_files: args.move_files,
    };
    let done = db.ingest(&args.files, opts)?;
    db.close()?;
    let entries: u64 = done.iter().map(|t| t.entries).sum();
    for t in &done {
        println!(
            "{}: {} records into level {} ({})",
            t.source.display(),
            t.entries,
            t.level,
            if t.linked { "linked" } else { "rewritten" }
        );
    }
    println!(
        "ingested {} files, {entries} records, into {}",
        done.len(),
        args.db.display()
    );
    Ok(Exit::Ok)
}
