//! `lamina-bench commit`: durable commits against the disk's limit.
//!
//! testfile is the hardware's limit: per op `write(fd, 256 zero bytes)`,
//! `lseek(fd, 0)`, `fsync(fd)`, in a file beside the database directory
//! (same disk), for as long as each thread count runs (`--seconds`; 1000
//! ops with `--ops`, or `--testfile-ops`): a virtual disk can sync a burst
//! of 1000 faster than a run of seconds, so a short
//! testfile beside a long row compares two different loads. For each thread
//! count (1, 2, 4, 8, 16, 32), every
//! thread writes one 256-byte value per `Durability::Sync` commit under its
//! own keys, for a fixed time (`--seconds`) or number of commits (`--ops`).
//! testfile runs right before each thread count and once after the last, so
//! that each is compared with the disk as it was around it (this disk's
//! fsync rate moves within minutes). Printed: commits/s, WAL fsyncs issued
//! (`Stats::wal_syncs`), commits per fsync, testfile's ops/s before and
//! after, commits/s as a multiple of their mean, and the share of commits
//! whose wait began by yielding the CPU (`Stats::commit_waits_yielded`).

use crate::engine::{Batch, Db, Durability};
use crate::progress::{thousands, Progress, Total};
use crate::Ctx;
use crate::{fresh_db, options, rate, Common, Csv, Workdir};
use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bytes per commit (testfile's `-b256`).
const VALUE_BYTES: usize = 256;

/// Arguments of `lamina-bench commit`.
#[derive(Debug, Clone, clap::Args)]
pub struct CommitArgs {
    /// Thread counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4, 8, 16, 32])]
    pub threads: Vec<usize>,
    /// Seconds per thread count.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Commits per thread count (shared among its threads) instead of --seconds.
    #[arg(long)]
    pub ops: Option<u64>,
    /// testfile's operations (default: testfile runs for --seconds, or
    /// 1000 operations with --ops).
    #[arg(long, value_name = "OPS")]
    pub testfile_ops: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

/// The columns of the CSV, a line per thread count.
const CSV_HEADER: [&str; 14] = [
    "engine",
    "threads",
    "commits",
    "seconds",
    "commits_per_s",
    "fsyncs",
    "commits_per_fsync",
    "testfile_ops_per_s",
    "ratio_to_testfile",
    "memlimit",
    "testfile_before_ops_per_s",
    "testfile_after_ops_per_s",
    "waits_yielded",
    "waits_slept",
];

/// Runs `lamina-bench commit`.
pub fn run(args: CommitArgs, ctx: &Ctx) -> Result<(), String> {
    let dir = Workdir::new(&args.common, "commit");
    let mut csv = Csv::open(args.common.csv.as_deref(), &CSV_HEADER)?;
    let tf_path = testfile_path(dir.path());
    let length = match (args.testfile_ops, args.ops) {
        (Some(ops), _) => Length::Ops(ops.max(1)),
        (None, Some(_)) => Length::Ops(1000),
        (None, None) => Length::Seconds(args.seconds.max(0.001)),
    };
    let described = match length {
        Length::Ops(ops) => format!("{ops} ops of"),
        Length::Seconds(s) => format!("{s} s of"),
    };
    println!(
        "testfile: {described} write({VALUE_BYTES} B) + lseek + fsync right before each thread count \
         and after the last [{}]",
        tf_path.display()
    );
    let mut before = testfile_rate(&tf_path, length)?;
    let db = fresh_db(dir.path(), options(None, None)?)?;
    println!(
        "lamina {} Sync commits of one {VALUE_BYTES}-byte value each, {}",
        crate::VERSION,
        match args.ops {
            Some(n) => format!("{n} commits per thread count"),
            None => format!("{} s per thread count", args.seconds),
        }
    );
    Row::print_columns();
    for (round, &threads) in args.threads.iter().enumerate() {
        let threads = threads.max(1);
        let was = db.stats();
        let (commits, secs) = commits(&db, round as u32, threads, &args, ctx)?;
        let now = db.stats();
        let after = testfile_rate(&tf_path, length)?;
        let row = Row {
            threads,
            commits,
            secs,
            fsyncs: now.wal_syncs.saturating_sub(was.wal_syncs),
            yielded: now
                .commit_waits_yielded
                .saturating_sub(was.commit_waits_yielded),
            slept: now
                .commit_waits_slept
                .saturating_sub(was.commit_waits_slept),
            before,
            after,
        };
        row.print();
        csv.row(&row.csv(&args.common.memlimit_note))?;
        // The run after this thread count is the one before the next.
        before = after;
    }
    db.close().map_err(|e| format!("close: {e}"))?;
    Ok(())
}

/// What one thread count measured.
struct Row {
    threads: usize,
    commits: u64,
    secs: f64,
    /// WAL fsyncs issued (`Stats::wal_syncs`).
    fsyncs: u64,
    /// Commits whose wait began by yielding the CPU.
    yielded: u64,
    /// Commits whose wait slept.
    slept: u64,
    /// testfile's ops/s right before the thread count.
    before: f64,
    /// testfile's ops/s right after it.
    after: f64,
}

impl Row {
    fn per_s(&self) -> f64 {
        rate(self.commits, self.secs)
    }

    fn per_fsync(&self) -> f64 {
        if self.fsyncs > 0 {
            self.commits as f64 / self.fsyncs as f64
        } else {
            0.0
        }
    }

    /// testfile's ops/s around the thread count: the mean of the runs
    /// before and after it.
    fn testfile(&self) -> f64 {
        (self.before + self.after) / 2.0
    }

    /// Commits a second as a multiple of testfile's ops a second.
    fn ratio(&self) -> f64 {
        let tf_rate = self.testfile();
        if tf_rate > 0.0 {
            self.per_s() / tf_rate
        } else {
            0.0
        }
    }

    /// The share of commits whose wait began by yielding the CPU.
    fn yielding(&self) -> f64 {
        if self.commits > 0 {
            self.yielded as f64 / self.commits as f64
        } else {
            0.0
        }
    }

    /// The table's header line.
    fn print_columns() {
        println!(
            "{:>7} {:>10} {:>9} {:>11} {:>10} {:>13} {:>9} {:>9} {:>10} {:>9}",
            "threads",
            "commits",
            "seconds",
            "commits/s",
            "fsyncs",
            "commits/fsync",
            "tf before",
            "tf after",
            "x testfile",
            "yielding"
        );
    }

    /// The table's line.
    fn print(&self) {
        println!(
            "{:>7} {:>10} {:>9.3} {:>11} {:>10} {:>13.2} {:>9} {:>9} {:>10.2} {:>9.2}",
            self.threads,
            thousands(self.commits),
            self.secs,
            thousands(self.per_s() as u64),
            thousands(self.fsyncs),
            self.per_fsync(),
            thousands(self.before as u64),
            thousands(self.after as u64),
            self.ratio(),
            self.yielding()
        );
    }

    /// The CSV's line (`memlimit`: the memory cap the run was under).
    fn csv(&self, memlimit: &str) -> Vec<String> {
        vec![
            "lamina".into(),
            self.threads.to_string(),
            self.commits.to_string(),
            format!("{:.6}", self.secs),
            format!("{:.0}", self.per_s()),
            self.fsyncs.to_string(),
            format!("{:.3}", self.per_fsync()),
            format!("{:.0}", self.testfile()),
            format!("{:.3}", self.ratio()),
            memlimit.to_string(),
            format!("{:.0}", self.before),
            format!("{:.0}", self.after),
            self.yielded.to_string(),
            self.slept.to_string(),
        ]
    }
}

/// `DIR.testfile` beside the database directory: on its disk, outside it.
fn testfile_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".testfile");
    db.with_file_name(name)
}

/// How long testfile runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Length {
    /// This many operations.
    Ops(u64),
    /// Operations until this many seconds have passed.
    Seconds(f64),
}

/// testfile's ops/s at `path`, the file removed after.
pub(crate) fn testfile_rate(path: &Path, length: Length) -> Result<f64, String> {
    let done = testfile(path, length);
    let _ = std::fs::remove_file(path);
    let (ops, secs) = done.map_err(|e| format!("testfile {}: {e}", path.display()))?;
    Ok(rate(ops, secs))
}

/// testfile: write 256 zero bytes, seek to 0, fsync, for `length`.
/// Operations done and seconds taken.
fn testfile(path: &Path, length: Length) -> std::io::Result<(u64, f64)> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let buf = [0u8; VALUE_BYTES];
    let t0 = Instant::now();
    let mut ops = 0;
    loop {
        let enough = match length {
            Length::Ops(n) => ops >= n,
            Length::Seconds(s) => t0.elapsed().as_secs_f64() >= s,
        };
        if enough {
            break;
        }
        f.write_all(&buf)?;
        f.seek(SeekFrom::Start(0))?;
        f.sync_all()?;
        ops += 1;
    }
    Ok((ops, t0.elapsed().as_secs_f64()))
}

/// Runs `threads` committers; returns the commits made and the seconds taken.
fn commits(
    db: &Db,
    round: u32,
    threads: usize,
    args: &CommitArgs,
    ctx: &Ctx,
) -> Result<(u64, f64), String> {
    let done = AtomicU64::new(0);
    let per_thread = args.ops.map(|n| n.div_ceil(threads as u64));
    let limit = Duration::try_from_secs_f64(args.seconds.max(0.0)).unwrap_or(Duration::ZERO);
    let total = match args.ops {
        Some(n) => Total::Records(n),
        None => Total::Unknown,
    };
    let progress = Progress::new(
        format!("commit {threads} threads"),
        total,
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let start = Instant::now();
    let secs: f64 = crate::progress::while_running(
        progress,
        || {
            let n = done.load(Ordering::Relaxed);
            (n, n * VALUE_BYTES as u64)
        },
        || {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let done = &done;
                        s.spawn(move || -> Result<(), String> {
                            let value = [t as u8; VALUE_BYTES];
                            let mut i = 0u64;
                            loop {
                                match per_thread {
                                    Some(n) if i >= n => break,
                                    None if start.elapsed() >= limit => break,
                                    _ => {}
                                }
                                let key =
                                    (u128::from(round) << 96 | (t as u128) << 64 | u128::from(i))
                                        .to_be_bytes();
                                let mut b = Batch::new();
                                b.put(&key, &value);
                                db.write_with(b, Durability::Sync)
                                    .map_err(|e| format!("commit: {e}"))?;
                                done.fetch_add(1, Ordering::Relaxed);
                                i += 1;
                            }
                            Ok(())
                        })
                    })
                    .collect();
                handles.into_iter().try_for_each(|h| {
                    h.join().unwrap_or_else(|_| Err("a thread panicked".into()))
                })?;
                Ok::<_, String>(start.elapsed().as_secs_f64())
            })
        },
    )?;
    Ok((done.load(Ordering::Relaxed), secs))
}
