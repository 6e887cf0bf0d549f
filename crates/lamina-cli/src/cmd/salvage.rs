//! `lamina salvage DAMAGED NEW`: every readable record of a damaged
//! database into a new one, each file read on its own; every part skipped
//! is reported with its file and offset (`lamina::salvage`).

use crate::cmd::Ctx;
use crate::engine;
use crate::error::{CliError, CliResult, Exit};
use crate::progress::thousands;
use std::path::PathBuf;

/// Arguments of `lamina salvage`.
#[derive(Debug, clap::Args)]
pub struct SalvageArgs {
    /// The damaged database directory (only read).
    pub damaged: PathBuf,
    /// The new database to write (must not exist, or be an empty directory).
    pub new: PathBuf,
}

/// Runs `lamina salvage`.
pub fn run(args: SalvageArgs, _ctx: &Ctx) -> CliResult<Exit> {
    crate::cmd::refuse_inside_database(&args.damaged, &args.new)?;
    let exists =
        args.new.exists() && std::fs::read_dir(&args.new).map_or(true, |mut d| d.next().is_some());
    if exists {
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "{} already exists; salvage writes a new database",
                args.new.display()
            ),
        ));
    }
    let report = lamina::salvage::salvage(&args.damaged, &args.new, engine::options()?)
        .map_err(|e| CliError::from(e).context("salvage"))?;
    for s in &report.skipped {
        eprintln!(
            "lamina: skipped {} at offset {}: {}",
            s.file.display(),
            s.offset,
            s.what
        );
    }
    let keyspaces = match report.keyspaces.len() {
        0 => String::new(),
        n => format!(" (and {n} named keyspace{})", if n == 1 { "" } else { "s" }),
    };
    println!(
        "salvaged {} records{keyspaces} from {} files of {} into {}; {} damaged part{} skipped",
        thousands(report.records),
        report.files,
        args.damaged.display(),
        args.new.display(),
        report.skipped.len(),
        if report.skipped.len() == 1 { "" } else { "s" },
    );
    Ok(if report.skipped.is_empty() {
        Exit::Ok
    } else {
        Exit::Failed
    })
}
