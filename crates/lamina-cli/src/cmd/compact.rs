//! `lamina compact DB`: a full compaction; reclaims the space of deleted and
//! overwritten records.

use crate::cmd::Ctx;
use crate::engine::{self, Mode};
use crate::error::{CliResult, Exit};
use crate::progress::{bytes, while_running, Progress, Total};
use std::path::PathBuf;

/// Arguments of `lamina compact`.
#[derive(Debug, clap::Args)]
pub struct CompactArgs {
    /// The database directory.
    pub db: PathBuf,
}

/// Runs `lamina compact`, showing bytes rewritten as it goes.
pub fn run(args: CompactArgs, ctx: &Ctx) -> CliResult<Exit> {
    let db = engine::open(&args.db, Mode::Existing)?;
    let before = db.stats();
    let total = Total::Bytes(before.total_table_bytes);
    let progress = Progress::new("compact", total, ctx.progress.mode(true), &ctx.progress);
    let sample = || {
        let s = db.stats();
        let entries = s.levels.iter().map(|l| l.entries).sum::<u64>();
        (
            entries,
            s.compaction_bytes_written
                .saturating_sub(before.compaction_bytes_written),
        )
    };
    let result = while_running(progress, sample, || db.compact());
    result?;
    let after = db.stats();
    db.close()?;
    println!(
        "compacted {}: {} -> {} in tables",
        args.db.display(),
        bytes(before.total_table_bytes),
        bytes(after.total_table_bytes)
    );
    Ok(Exit::Ok)
}
