//! `lamina bench blocksize`: seed 003's sweep of the data block size.
//!
//! At block sizes 4, 8, 16, 32 and 64 KiB (`Options::block_size`): the
//! numbers load of 2^20 records with the built-in generator (as `bench
//! numbers`, timed from open to close), then, on the database reopened, random
//! point reads of the loaded keys (a shuffle of all of them, each read once,
//! as the dbm read_random workload). Printed per block size, then the
//! default's (16 KiB) distance from the best, in %.

use super::numbers::load_gen;
use super::{clear_db, dir_size, options, parse_size, rate, Common, Csv, Workdir, XorShift64Star};
use crate::cmd::Ctx;
use crate::engine::Db;
use crate::progress::{bytes, thousands, Progress, Total};
use std::io::Write;
use std::time::Instant;

/// Block sizes swept.
const BLOCK_SIZES: [usize; 5] = [4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10];

/// Arguments of `lamina bench blocksize`.
#[derive(Debug, Clone, clap::Args)]
pub struct BlocksizeArgs {
    /// Records loaded (keys 0..N-1 of the numbers data set).
    #[arg(long, value_name = "N", default_value_t = 1 << 20)]
    pub records: u64,
    /// Point reads (default: every loaded key once, shuffled).
    #[arg(long, value_name = "N")]
    pub reads: Option<u64>,
    /// Block cache in bytes (suffixes K, M, G; default: the engine's).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub cache_size: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

/// One block size's figures.
struct Row {
    block: usize,
    load_rate: f64,
    read_rate: f64,
}

/// Runs `lamina bench blocksize`.
pub fn run(args: BlocksizeArgs, ctx: &Ctx) -> Result<(), String> {
    let n = args.records.max(1);
    let reads = args.reads.unwrap_or(n);
    let dir = Workdir::new(&args.common, "blocksize");
    std::fs::create_dir_all(dir.path()).map_err(|e| format!("{}: {e}", dir.path().display()))?;
    let mut csv = Csv::open(
        args.common.csv.as_deref(),
        &[
            "engine",
            "block_size",
            "records",
            "load_s",
            "load_per_s",
            "bytes",
            "reads",
            "read_s",
            "reads_per_s",
            "memlimit",
        ],
    )?;
    // One shuffle of all keys, the same for every block size.
    let mut order: Vec<u64> = (0..n).collect();
    let mut rng = XorShift64Star::new(1);
    for i in (1..order.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let default_block = lamina::Options::default().block_size;
    println!(
        "seed 003 block sizes on lamina {}: numbers load of {} records (built-in generator), \
         then {} random point reads of loaded keys",
        super::VERSION,
        thousands(n),
        thousands(reads)
    );
    println!(
        "{:>6} {:>9} {:>11} {:>24} {:>9} {:>11}",
        "block", "load s", "records/s", "size on disk", "read s", "reads/s"
    );
    let mut rows = Vec::new();
    for &block in &BLOCK_SIZES {
        let path = dir.path().join(format!("block-{}K", block >> 10));
        let mut opts = options(args.cache_size, None)?;
        opts.block_size = block;
        let load_s = load_gen(&path, opts.clone(), n, ctx)?;
        let size = dir_size(&path);
        let read_s = read(&path, opts.clone(), &order, reads, ctx)?;
        if dir.temporary() {
            let _ = clear_db(&path, &opts);
        }
        let row = Row {
            block,
            load_rate: rate(n, load_s),
            read_rate: rate(reads, read_s),
        };
        println!(
            "{:>5}K {load_s:>9.3} {:>11} {:>24} {read_s:>9.3} {:>11}",
            block >> 10,
            thousands(row.load_rate as u64),
            format!("{} ({size} B)", bytes(size)),
            thousands(row.read_rate as u64)
        );
        csv.row(&[
            "lamina".into(),
            block.to_string(),
            n.to_string(),
            format!("{load_s:.6}"),
            format!("{:.0}", row.load_rate),
            size.to_string(),
            reads.to_string(),
            format!("{read_s:.6}"),
            format!("{:.0}", row.read_rate),
            args.common.memlimit_note.clone(),
        ])?;
        rows.push(row);
    }
    let distance = |f: fn(&Row) -> f64| -> Option<String> {
        let best = rows.iter().max_by(|a, b| f(a).total_cmp(&f(b)))?;
        let default = rows.iter().find(|r| r.block == default_block)?;
        let pct = if f(best) > 0.0 {
            100.0 * (f(best) - f(default)) / f(best)
        } else {
            0.0
        };
        Some(format!("{pct:.1}% below the best ({}K)", best.block >> 10))
    };
    if let (Some(load), Some(read)) = (distance(|r| r.load_rate), distance(|r| r.read_rate)) {
        println!(
            "default block size {}K: load {load}, reads {read}",
            default_block >> 10
        );
    }
    Ok(())
}

/// Reads `reads` keys of `order` (wrapping) from the database at `path`;
/// seconds taken. Every key must be found.
fn read(
    path: &std::path::Path,
    opts: lamina::Options,
    order: &[u64],
    reads: u64,
    ctx: &Ctx,
) -> Result<f64, String> {
    let db = Db::open(path, opts).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut progress = Progress::new(
        "bench blocksize reads",
        Total::Records(reads),
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let mut key = Vec::with_capacity(24);
    let mut missing = 0u64;
    let t0 = Instant::now();
    for &k in order.iter().cycle().take(reads as usize) {
        key.clear();
        let _ = write!(key, "{k}");
        match db.get(&key) {
            Ok(Some(v)) => progress.add(1, (key.len() + v.len()) as u64),
            Ok(None) => missing += 1,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    progress.finish();
    db.close().map_err(|e| format!("close: {e}"))?;
    if missing > 0 {
        return Err(format!("{missing} loaded keys not found"));
    }
    Ok(secs)
}
