//! `lamina-bench update`: TokuDB's db-update.
//!
//! Key = two 4-byte big-endian ints, each `random() % 1,000,000` (glibc's
//! `random()` after `srandom(seed)`, as the C program draws them); each op is
//! a blind `merge` of 1 (a little-endian u64, the built-in `Add` operator's
//! operand) into the key's 8-byte counter; 100 ops per durable
//! (`Durability::Sync`) batch. The rate is measured every 100,000 ops (one
//! CSV row each); a line is printed every 2,000,000 ops (`--every`): ops done,
//! seconds and rate since the previous line, overall rate.

use crate::engine::{Batch, Durability};
use crate::meter::Meter;
use crate::progress::{Progress, Total};
use crate::Ctx;
use crate::{files_line, fresh_db, options, parse_size, Common, Csv, GlibcRandom, Workdir};

/// The columns of the CSV (those of `bench/tokudb_bdb.py update`).
pub const CSV_HEADER: [&str; 6] = [
    "engine",
    "ops",
    "interval_s",
    "interval_per_s",
    "overall_per_s",
    "memlimit",
];

/// Arguments of `lamina-bench update`.
#[derive(Debug, Clone, clap::Args)]
pub struct UpdateArgs {
    /// Operations.
    #[arg(long, default_value_t = 1_000_000_000)]
    pub ops: u64,
    /// Stop at the first measurement past this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub max_seconds: Option<f64>,
    /// Operations per measurement (and CSV row).
    #[arg(long, value_name = "OPS", default_value_t = 100_000)]
    pub report: u64,
    /// Operations per printed line.
    #[arg(long, value_name = "OPS", default_value_t = 2_000_000)]
    pub every: u64,
    /// Operations per durable commit.
    #[arg(long, value_name = "OPS", default_value_t = 100)]
    pub ops_per_commit: usize,
    /// Block cache in bytes (suffixes K, M, G). Default: derived from the
    /// memory budget (`--memory-budget`), memtables charged to it.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub cache_size: Option<u64>,
    /// Memtable size in bytes (default: the engine's).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub memtable_size: Option<u64>,
    /// `srandom` seed of the keys.
    #[arg(long, default_value_t = 1)]
    pub seed: u32,
    #[command(flatten)]
    pub common: Common,
}

/// Runs `lamina-bench update`.
pub fn run(args: UpdateArgs, ctx: &Ctx) -> Result<(), String> {
    let dir = Workdir::new(&args.common, "update");
    let mut csv = Csv::open(args.common.csv.as_deref(), &CSV_HEADER)?;
    let db = fresh_db(dir.path(), options(args.cache_size, args.memtable_size)?)?;
    let per_commit = args.ops_per_commit.max(1);
    println!(
        "db-update: lamina {} in Rust, blind merge (add), {per_commit} ops per durable commit, \
         {}",
        crate::VERSION,
        crate::cache_note(args.cache_size)
    );
    let mut progress = Progress::new(
        "update",
        Total::Records(args.ops),
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let note = &args.common.memlimit_note;
    let one = 1u64.to_le_bytes();
    let mut rng = GlibcRandom::new(args.seed);
    let mut batch = Batch::new();
    let mut meter = Meter::new(args.report, args.every, args.max_seconds, note);
    let mut done = args.ops;
    for i in 0..args.ops {
        let a = rng.next_u31() % 1_000_000;
        let b = rng.next_u31() % 1_000_000;
        let key = (u64::from(a) << 32 | u64::from(b)).to_be_bytes();
        batch.merge(&key, &one);
        if batch.len() >= per_commit {
            let full = std::mem::take(&mut batch);
            db.write_with(full, Durability::Sync)
                .map_err(|e| format!("commit: {e}"))?;
        }
        progress.add(1, 16);
        let n = i + 1;
        if meter.tick(n, &mut csv, &progress)? {
            done = n;
            break;
        }
    }
    if !batch.is_empty() {
        db.write_with(batch, Durability::Sync)
            .map_err(|e| format!("commit: {e}"))?;
    }
    progress.finish();
    meter.finish(done, &mut csv)?;
    db.close().map_err(|e| format!("close: {e}"))?;
    println!("{}", files_line(dir.path()));
    Ok(())
}
