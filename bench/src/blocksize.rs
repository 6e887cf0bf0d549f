//! `lamina-bench blocksize`: the block-size question, a sweep of the data block size.
//!
//! At block sizes 4, 8, 16, 32 and 64 KiB (`Options::block_size`): the
//! numbers load of 2^20 records with the built-in generator (as `bench
//! numbers`, timed from open to close), then, on the database reopened, random
//! point reads of the loaded keys (a shuffle of all of them, each read once,
//! as the dbm read_random workload); and the same with the block size left
//! to the engine (`auto`, the default: chosen from the data). Each is run
//! `--repeat` times, the runs interleaved (each round starting one size
//! further on, so that no size always runs first or last), and the medians
//! printed, then the default's distance from the best forced size, in %.

use crate::engine::Db;
use crate::numbers::load_gen;
use crate::progress::{bytes, thousands, Progress, Total};
use crate::Ctx;
use crate::{clear_db, dir_size, options, parse_size, rate, Common, Csv, Workdir, XorShift64Star};
use std::io::Write;
use std::time::Instant;

/// Block sizes swept.
const BLOCK_SIZES: [usize; 5] = [4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10];

/// Arguments of `lamina-bench blocksize`.
#[derive(Debug, Clone, clap::Args)]
pub struct BlocksizeArgs {
    /// Records loaded (keys 0..N-1 of the numbers data set).
    #[arg(long, value_name = "N", default_value_t = 1 << 20)]
    pub records: u64,
    /// Point reads (default: every loaded key once, shuffled).
    #[arg(long, value_name = "N")]
    pub reads: Option<u64>,
    /// Runs of each block size; the median is reported (runs of about a
    /// second differ by several percent on a shared machine).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub repeat: usize,
    /// Block cache in bytes (suffixes K, M, G; default: the engine's).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub cache_size: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

/// One block size's figures: the medians of its runs.
struct Row {
    /// `Options::block_size`; 0: chosen from the data.
    block: usize,
    /// The block size the database used (the chosen one for 0).
    used: usize,
    load_rate: f64,
    read_rate: f64,
}

/// The median of `v` (the mean of the middle two for an even count).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v.get(n / 2).copied().unwrap_or(0.0),
        _ => {
            (v.get(n / 2 - 1).copied().unwrap_or(0.0) + v.get(n / 2).copied().unwrap_or(0.0)) / 2.0
        }
    }
}

fn label(block: usize) -> String {
    if block == 0 {
        "auto".into()
    } else {
        format!("{}K", block >> 10)
    }
}

/// Runs `lamina-bench blocksize`.
pub fn run(args: BlocksizeArgs, ctx: &Ctx) -> Result<(), String> {
    let n = args.records.max(1);
    let reads = args.reads.unwrap_or(n);
    let repeat = args.repeat.max(1);
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
            "run",
            "block_size_used",
        ],
    )?;
    // One shuffle of all keys, the same for every block size.
    let mut order: Vec<u64> = (0..n).collect();
    let mut rng = XorShift64Star::new(1);
    for i in (1..order.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    println!(
        "block sizes on lamina {}: numbers load of {} records (built-in generator), \
         then {} random point reads of loaded keys; the median of {repeat} runs of each \
         (runs interleaved: run 1 of every size, then run 2, ..., each round starting one size on)",
        crate::VERSION,
        thousands(n),
        thousands(reads)
    );
    // Automatic (the default) first, then every size forced.
    let configs: Vec<usize> = std::iter::once(0).chain(BLOCK_SIZES).collect();
    let mut runs: Vec<(Vec<f64>, Vec<f64>, usize, u64)> =
        vec![(Vec::new(), Vec::new(), 0, 0); configs.len()];
    for round in 0..repeat {
        // The order rotates by one each round: a size that always ran first
        // (after a pause) or last read slower than the same tables forced.
        for k in 0..configs.len() {
            let i = (k + round) % configs.len();
            let (Some(&block), Some(run)) = (configs.get(i), runs.get_mut(i)) else {
                continue;
            };
            let path = dir.path().join(format!("block-{}", label(block)));
            let mut opts = options(args.cache_size, None)?;
            opts.block_size = block;
            let load_s = load_gen(&path, opts.clone(), n, ctx)?;
            let size = dir_size(&path);
            let (read_s, used) = read(&path, opts.clone(), &order, reads, ctx)?;
            if dir.temporary() {
                let _ = clear_db(&path, &opts);
            }
            run.0.push(rate(n, load_s));
            run.1.push(rate(reads, read_s));
            run.2 = used;
            run.3 = size;
            csv.row(&[
                "lamina".into(),
                block.to_string(),
                n.to_string(),
                format!("{load_s:.6}"),
                format!("{:.0}", rate(n, load_s)),
                size.to_string(),
                reads.to_string(),
                format!("{read_s:.6}"),
                format!("{:.0}", rate(reads, read_s)),
                args.common.memlimit_note.clone(),
                (round + 1).to_string(),
                used.to_string(),
            ])?;
        }
    }
    println!(
        "{:>6} {:>11} {:>24} {:>11}",
        "block", "records/s", "size on disk", "reads/s"
    );
    let mut rows = Vec::new();
    for (&block, (loads, reads_per_s, used, size)) in configs.iter().zip(runs.iter_mut()) {
        let row = Row {
            block,
            used: *used,
            load_rate: median(loads),
            read_rate: median(reads_per_s),
        };
        println!(
            "{:>6} {:>11} {:>24} {:>11}{}",
            label(block),
            thousands(row.load_rate as u64),
            format!("{} ({size} B)", bytes(*size)),
            thousands(row.read_rate as u64),
            if block == 0 {
                format!("  (chose {})", label(row.used))
            } else {
                String::new()
            }
        );
        rows.push(row);
    }
    let distance = |f: fn(&Row) -> f64| -> Option<String> {
        let forced = rows.iter().filter(|r| r.block != 0);
        let best = forced.max_by(|a, b| f(a).total_cmp(&f(b)))?;
        let auto = rows.iter().find(|r| r.block == 0)?;
        let pct = if f(best) > 0.0 {
            100.0 * (f(best) - f(auto)) / f(best)
        } else {
            0.0
        };
        Some(format!("{pct:.1}% below the best ({})", label(best.block)))
    };
    if let (Some(load), Some(read), Some(auto)) = (
        distance(|r| r.load_rate),
        distance(|r| r.read_rate),
        rows.iter().find(|r| r.block == 0),
    ) {
        println!(
            "default block size (chosen from the data: {}): load {load}, reads {read}",
            label(auto.used)
        );
    }
    Ok(())
}

/// Reads `reads` keys of `order` (wrapping) from the database at `path`;
/// seconds taken, and the block size the database uses. Every key must be
/// found.
fn read(
    path: &std::path::Path,
    opts: lamina::Options,
    order: &[u64],
    reads: u64,
    ctx: &Ctx,
) -> Result<(f64, usize), String> {
    let db = Db::open(path, opts).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut progress = Progress::new(
        "blocksize reads",
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
    let used = db.stats().block_size;
    db.close().map_err(|e| format!("close: {e}"))?;
    if missing > 0 {
        return Err(format!("{missing} loaded keys not found"));
    }
    Ok((secs, used))
}
