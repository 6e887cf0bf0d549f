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

/// The columns of the CSV, a line per run.
const CSV_HEADER: [&str; 12] = [
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
];

/// What every run shares.
struct Plan {
    /// Records loaded (keys 0..n-1).
    n: u64,
    /// Point reads.
    reads: u64,
    /// Runs of each block size.
    repeat: usize,
    /// The keys in the order they are read: one shuffle of all of them, the
    /// same for every block size.
    order: Vec<u64>,
}

impl Plan {
    fn new(args: &BlocksizeArgs) -> Plan {
        let n = args.records.max(1);
        let mut order: Vec<u64> = (0..n).collect();
        let mut rng = XorShift64Star::new(1);
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        Plan {
            n,
            reads: args.reads.unwrap_or(n),
            repeat: args.repeat.max(1),
            order,
        }
    }
}

/// What one run of one block size measured.
struct Run {
    load_s: f64,
    /// Bytes on disk after the load.
    size: u64,
    read_s: f64,
    /// The block size the database used.
    used: usize,
}

/// One block size's runs so far.
#[derive(Clone, Default)]
struct Runs {
    load_rates: Vec<f64>,
    read_rates: Vec<f64>,
    /// The block size the database used, in the last run.
    used: usize,
    /// Bytes on disk after the last run's load.
    size: u64,
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
    let plan = Plan::new(&args);
    let dir = Workdir::new(&args.common, "blocksize");
    std::fs::create_dir_all(dir.path()).map_err(|e| format!("{}: {e}", dir.path().display()))?;
    let mut csv = Csv::open(args.common.csv.as_deref(), &CSV_HEADER)?;
    println!(
        "block sizes on lamina {}: numbers load of {} records (built-in generator), \
         then {} random point reads of loaded keys; the median of {} runs of each \
         (runs interleaved: run 1 of every size, then run 2, ..., each round starting one size on)",
        crate::VERSION,
        thousands(plan.n),
        thousands(plan.reads),
        plan.repeat
    );
    // Automatic (the default) first, then every size forced.
    let configs: Vec<usize> = std::iter::once(0).chain(BLOCK_SIZES).collect();
    let mut runs = vec![Runs::default(); configs.len()];
    for round in 0..plan.repeat {
        // The order rotates by one each round: a size that always ran first
        // (after a pause) or last read slower than the same tables forced.
        for k in 0..configs.len() {
            let i = (k + round) % configs.len();
            let (Some(&block), Some(runs)) = (configs.get(i), runs.get_mut(i)) else {
                continue;
            };
            let run = run_once(&plan, &args, &dir, block, ctx)?;
            runs.load_rates.push(rate(plan.n, run.load_s));
            runs.read_rates.push(rate(plan.reads, run.read_s));
            runs.used = run.used;
            runs.size = run.size;
            csv.row(&[
                "lamina".into(),
                block.to_string(),
                plan.n.to_string(),
                format!("{:.6}", run.load_s),
                format!("{:.0}", rate(plan.n, run.load_s)),
                run.size.to_string(),
                plan.reads.to_string(),
                format!("{:.6}", run.read_s),
                format!("{:.0}", rate(plan.reads, run.read_s)),
                args.common.memlimit_note.clone(),
                (round + 1).to_string(),
                run.used.to_string(),
            ])?;
        }
    }
    let rows = medians(&configs, &mut runs);
    if let (Some(load), Some(read), Some(auto)) = (
        distance(&rows, |r| r.load_rate),
        distance(&rows, |r| r.read_rate),
        rows.iter().find(|r| r.block == 0),
    ) {
        println!(
            "default block size (chosen from the data: {}): load {load}, reads {read}",
            label(auto.used)
        );
    }
    Ok(())
}

/// Loads the database of block size `block` (0: chosen from the data) and
/// reads it; removed afterwards when the work directory is temporary.
fn run_once(
    plan: &Plan,
    args: &BlocksizeArgs,
    dir: &Workdir,
    block: usize,
    ctx: &Ctx,
) -> Result<Run, String> {
    let path = dir.path().join(format!("block-{}", label(block)));
    let mut opts = options(args.cache_size, None)?;
    opts.block_size = block;
    let load_s = load_gen(&path, opts.clone(), plan.n, ctx)?;
    let size = dir_size(&path);
    let (read_s, used) = read(&path, opts.clone(), &plan.order, plan.reads, ctx)?;
    if dir.temporary() {
        let _ = clear_db(&path, &opts);
    }
    Ok(Run {
        load_s,
        size,
        read_s,
        used,
    })
}

/// Prints the medians of each block size's runs, a line each (`configs[i]`
/// ran `runs[i]`); the rows printed.
fn medians(configs: &[usize], runs: &mut [Runs]) -> Vec<Row> {
    println!(
        "{:>6} {:>11} {:>24} {:>11}",
        "block", "records/s", "size on disk", "reads/s"
    );
    let mut rows = Vec::new();
    for (&block, runs) in configs.iter().zip(runs.iter_mut()) {
        let row = Row {
            block,
            used: runs.used,
            load_rate: median(&mut runs.load_rates),
            read_rate: median(&mut runs.read_rates),
        };
        println!(
            "{:>6} {:>11} {:>24} {:>11}{}",
            label(block),
            thousands(row.load_rate as u64),
            format!("{} ({} B)", bytes(runs.size), runs.size),
            thousands(row.read_rate as u64),
            if block == 0 {
                format!("  (chose {})", label(row.used))
            } else {
                String::new()
            }
        );
        rows.push(row);
    }
    rows
}

/// How far the automatic block size is below the best forced one by the
/// figure `f`, in words.
fn distance(rows: &[Row], f: fn(&Row) -> f64) -> Option<String> {
    let forced = rows.iter().filter(|r| r.block != 0);
    let best = forced.max_by(|a, b| f(a).total_cmp(&f(b)))?;
    let auto = rows.iter().find(|r| r.block == 0)?;
    let pct = if f(best) > 0.0 {
        100.0 * (f(best) - f(auto)) / f(best)
    } else {
        0.0
    };
    Some(format!("{pct:.1}% below the best ({})", label(best.block)))
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
