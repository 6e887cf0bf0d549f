//! `lamina-bench multi`: TokuDB's db-insert-multiple.
//!
//! Row r: primary key r (8 bytes big-endian) in the default keyspace, value
//! three random values in 0..100,000 (`random() % 100000`, 8 bytes
//! big-endian each: 24 bytes); keyspaces `secondary1` to `secondary3` get
//! key value_i ‖ primary key with an empty value. All four writes of 1000
//! rows go in one atomic batch, durable (`Durability::Sync`). The rate is
//! measured every 100,000 rows (one CSV row each) and printed every
//! 1,000,000 (`--every`).

use crate::engine::{Batch, Durability};
use crate::meter::Meter;
use crate::progress::{Progress, Total};
use crate::Ctx;
use crate::{files_line, fresh_db, options, parse_size, Common, Csv, GlibcRandom, Workdir};

/// Arguments of `lamina-bench multi`.
#[derive(Debug, Clone, clap::Args)]
pub struct MultiArgs {
    /// Rows.
    #[arg(long, default_value_t = 100_000_000)]
    pub rows: u64,
    /// Rows per durable batch.
    #[arg(long, value_name = "ROWS", default_value_t = 1000)]
    pub rows_per_commit: u64,
    /// Rows per measurement (and CSV row).
    #[arg(long, value_name = "ROWS", default_value_t = 100_000)]
    pub report: u64,
    /// Rows per printed line.
    #[arg(long, value_name = "ROWS", default_value_t = 1_000_000)]
    pub every: u64,
    /// Stop at the first measurement past this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub max_seconds: Option<f64>,
    /// Block cache in bytes (suffixes K, M, G). Default: derived from the
    /// memory budget (`--memory-budget`), memtables charged to it.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub cache_size: Option<u64>,
    /// Memtable size in bytes (default: the engine's).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub memtable_size: Option<u64>,
    /// `srandom` seed of the values.
    #[arg(long, default_value_t = 1)]
    pub seed: u32,
    #[command(flatten)]
    pub common: Common,
}

/// Runs `lamina-bench multi`.
pub fn run(args: MultiArgs, ctx: &Ctx) -> Result<(), String> {
    let dir = Workdir::new(&args.common, "multi");
    let mut csv = Csv::open(
        args.common.csv.as_deref(),
        &[
            "engine",
            "rows",
            "interval_s",
            "interval_per_s",
            "overall_per_s",
            "memlimit",
        ],
    )?;
    let db = fresh_db(dir.path(), options(args.cache_size, args.memtable_size)?)?;
    let ks_err = |e: lamina::Error| format!("keyspace: {e}");
    let secondary = [
        db.keyspace("secondary1").map_err(ks_err)?,
        db.keyspace("secondary2").map_err(ks_err)?,
        db.keyspace("secondary3").map_err(ks_err)?,
    ];
    let per_commit = args.rows_per_commit.max(1);
    println!(
        "db-insert-multiple: lamina {} in Rust, 1 primary + 3 secondary keyspaces, \
         {per_commit} rows per durable batch",
        crate::VERSION
    );
    let mut progress = Progress::new(
        "multi",
        Total::Records(args.rows),
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let note = &args.common.memlimit_note;
    let mut rng = GlibcRandom::new(args.seed);
    let mut batch = Batch::new();
    let mut in_batch = 0;
    let mut meter = Meter::new(args.report, args.every, args.max_seconds, note);
    let mut done = args.rows;
    for row in 0..args.rows {
        let pk = row.to_be_bytes();
        let vals = [
            u64::from(rng.next_u31() % 100_000),
            u64::from(rng.next_u31() % 100_000),
            u64::from(rng.next_u31() % 100_000),
        ];
        let mut value = [0u8; 24];
        for (chunk, v) in value.chunks_exact_mut(8).zip(vals) {
            chunk.copy_from_slice(&v.to_be_bytes());
        }
        batch.put(&pk, &value);
        for (ks, v) in secondary.iter().zip(vals) {
            let key = (u128::from(v) << 64 | u128::from(row)).to_be_bytes();
            batch.put_in(ks, &key, b"");
        }
        in_batch += 1;
        if in_batch >= per_commit {
            let full = std::mem::take(&mut batch);
            db.write_with(full, Durability::Sync)
                .map_err(|e| format!("commit: {e}"))?;
            in_batch = 0;
        }
        progress.add(1, 8 + 24 + 3 * 16);
        let n = row + 1;
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
    drop(secondary);
    db.close().map_err(|e| format!("close: {e}"))?;
    println!("{}", files_line(dir.path()));
    Ok(())
}
