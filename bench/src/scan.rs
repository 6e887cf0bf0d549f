//! `lamina-bench scan`: TokuDB's db-scan.
//!
//! Reads every row of the default keyspace in key order with one iterator
//! inside one snapshot, twice; per pass prints bytes (key + value lengths),
//! rows, seconds and decimal MB/s. Runs on the database at `--db` when there
//! is one, else first loads one with `insert` (its lines printed too).

use crate::engine::Db;
use crate::insert::{self, InsertArgs};
use crate::progress::{Progress, Total};
use crate::Ctx;
use crate::{options, parse_size, rate, Common, Csv, Workdir};
use std::time::Instant;

/// Arguments of `lamina-bench scan`.
#[derive(Debug, Clone, clap::Args)]
pub struct ScanArgs {
    /// Batches of the insert run that makes the database when --db holds none.
    #[arg(short = 'n', value_name = "BATCHES", default_value_t = 4)]
    pub batches: u64,
    /// Block cache in bytes (suffixes K, M, G). Default: derived from the
    /// memory budget (`--memory-budget`), memtables charged to it.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub cache_size: Option<u64>,
    /// Inserts per phase of the loading insert run (for tests).
    #[arg(long, hide = true, default_value_t = 1 << 20)]
    pub records_per_batch: u64,
    #[command(flatten)]
    pub common: Common,
}

/// Runs `lamina-bench scan`.
pub fn run(args: ScanArgs, ctx: &Ctx) -> Result<(), String> {
    let dir = Workdir::new(&args.common, "scan");
    let mut opts = options(args.cache_size, None)?;
    opts.create_if_missing = false;
    let existing = dir.path().exists()
        && Db::open(dir.path(), opts.clone())
            .map(|db| db.close())
            .is_ok();
    if !existing {
        let load = InsertArgs {
            batches: args.batches,
            transactions: false,
            cache_size: args.cache_size,
            memtable_size: None,
            seed: 1,
            records_per_batch: args.records_per_batch,
            common: Common {
                csv: None,
                ..args.common.clone()
            },
        };
        insert::insert(&load, dir.path(), ctx)?;
    }
    let db = Db::open(dir.path(), opts).map_err(|e| format!("{}: {e}", dir.path().display()))?;
    let mut csv = Csv::open(
        args.common.csv.as_deref(),
        &[
            "engine", "pass", "rows", "bytes", "seconds", "mb_per_s", "memlimit",
        ],
    )?;
    let snapshot = db.snapshot();
    for pass in 1..=2 {
        let mut progress = Progress::new(
            format!("scan {pass}"),
            Total::Unknown,
            ctx.progress.mode(true),
            &ctx.progress,
        );
        let t0 = Instant::now();
        let (mut rows, mut nbytes) = (0u64, 0u64);
        for item in snapshot.iter() {
            let (k, v) = item.map_err(|e| format!("scan: {e}"))?;
            rows += 1;
            let b = (k.len() + v.len()) as u64;
            nbytes += b;
            progress.add(1, b);
        }
        let secs = t0.elapsed().as_secs_f64();
        progress.finish();
        let mb = rate(nbytes, secs) / 1e6;
        println!("Scan    {nbytes} bytes ({rows} rows) in {secs:9.6}s at {mb:9.6}MB/s");
        csv.row(&[
            "lamina".into(),
            pass.to_string(),
            rows.to_string(),
            nbytes.to_string(),
            format!("{secs:.6}"),
            format!("{mb:.6}"),
            args.common.memlimit_note.clone(),
        ])?;
    }
    drop(snapshot);
    db.close().map_err(|e| format!("close: {e}"))?;
    Ok(())
}
