//! `lamina check DB`: reads every table, WAL record and manifest edit,
//! verifies every checksum and invariant, and says what is wrong in words.
//! Exit code 6 if anything is.

use crate::cmd::Ctx;
use crate::engine::{self, Mode};
use crate::error::{CliError, CliResult, Exit};
use crate::progress::{bytes, thousands, while_running, Progress, Total};
use std::path::PathBuf;

/// Arguments of `lamina check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The database directory.
    pub db: PathBuf,
    /// Print the result as one JSON object on standard output (fields in
    /// docs/cli.md); the exit code is the same.
    #[arg(long)]
    pub json: bool,
}

/// Runs `lamina check`.
pub fn run(args: CheckArgs, ctx: &Ctx) -> CliResult<Exit> {
    let db = match engine::open(&args.db, Mode::ReadOnly) {
        Ok(db) => db,
        Err(e) if args.json => {
            // Still one JSON object: the database could not be read at all.
            let value = serde_json::json!({
                "path": args.db.display().to_string(),
                "ok": false,
                "opened": false,
                "tables": 0,
                "entries": 0,
                "bytes": 0,
                "wal_records": 0,
                "problems": [e.message],
                "notes": [],
            });
            println!("{value}");
            return Err(CliError::new(e.exit, String::new()));
        }
        Err(e) => return Err(e),
    };
    let total = Total::Bytes(db.stats().total_table_bytes);
    let progress = Progress::new("check", total, ctx.progress.mode(true), &ctx.progress);
    let report = while_running(progress, || (0, 0), || db.check());
    let report = report?;
    if args.json {
        let value = serde_json::json!({
            "path": args.db.display().to_string(),
            "ok": report.is_ok(),
            "opened": true,
            "tables": report.tables,
            "entries": report.entries,
            "bytes": report.bytes,
            "wal_records": report.wal_records,
            "problems": report.problems,
            "notes": report.notes,
        });
        println!("{value}");
        if !report.is_ok() {
            return Err(CliError::new(Exit::Damage, String::new()));
        }
        return Ok(Exit::Ok);
    }
    let summary = format!(
        "{} tables, {} entries, {}, {} WAL records",
        thousands(report.tables),
        thousands(report.entries),
        bytes(report.bytes),
        thousands(report.wal_records)
    );
    for n in &report.notes {
        eprintln!("lamina: note: {n}");
    }
    if report.is_ok() {
        println!("{}: OK ({summary})", args.db.display());
        return Ok(Exit::Ok);
    }
    for p in &report.problems {
        eprintln!("lamina: damage: {p}");
    }
    Err(CliError::new(
        Exit::Damage,
        format!(
            "{}: {} problem{} found (checked {summary})",
            args.db.display(),
            report.problems.len(),
            if report.problems.len() == 1 { "" } else { "s" }
        ),
    ))
}
