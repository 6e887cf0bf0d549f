//! The driver of `lamina-bench tpcb`: its options; one child process per
//! engine (this program again with `--child ENGINE`, or Berkeley DB's C
//! program), testfile before the first and after each, and the rows the
//! children print; in the child, the engine's database opened, loaded and
//! worked by each thread count in turn.

use super::report::{render, save};
use super::{bdb, key, record, Draws, Engine, Row, Scale, LOAD_BATCH};
use crate::engines::peers::title;
use crate::scale_reads::device::BlockDevice;
use crate::Ctx;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Every engine, in the default order.
pub const ALL: [&str; 5] = ["lamina", "rocksdb", "lmdb", "sqlite", "bdb"];

/// Arguments of `lamina-bench tpcb`.
#[derive(Debug, Clone, clap::Args)]
pub struct TpcbArgs {
    /// Engines, in the order they run: lamina, rocksdb, lmdb, sqlite, bdb.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        default_value = "lamina,rocksdb,lmdb,sqlite,bdb"
    )]
    pub engines: Vec<String>,
    /// Thread counts, comma-separated, each run for --seconds.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4, 8, 16])]
    pub threads: Vec<usize>,
    /// Seconds per thread count.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Branches (the scale: 10 tellers and --accounts-per-branch accounts
    /// each; ex_tpcb's default, 10).
    #[arg(long, default_value_t = 10)]
    pub branches: u32,
    /// Accounts per branch (ex_tpcb's default, 10,000: 100,000 in all;
    /// TPC-B's scaling rule is 100,000).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub accounts_per_branch: u32,
    /// Seed of the random draws (each thread of each round its own stream).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip testfile (the write + fsync loop beside the engines).
    #[arg(long)]
    pub no_testfile: bool,
    /// Where the table (tpcb.md) and the CSV (tpcb.csv) go.
    #[arg(long, value_name = "DIR", default_value = "target/bench-results/tpcb")]
    pub out: PathBuf,
    /// Where the databases go: a directory per engine, removed after it ran
    /// unless --keep. Default: under the temporary directory.
    #[arg(long, visible_alias = "dir", value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Keep each engine's database.
    #[arg(long)]
    pub keep: bool,
    /// Where the Berkeley DB program is compiled (default: beside this program).
    #[arg(long, value_name = "DIR")]
    pub build_dir: Option<PathBuf>,
    /// Run one engine in this process and print its rows.
    #[arg(long, value_name = "ENGINE", hide = true)]
    pub child: Option<String>,
}

/// Whether `engine` is in this build.
// With every feature on, clippy sees a `matches!`; the arms differ by build.
#[allow(clippy::match_like_matches_macro)]
fn built(engine: &str) -> bool {
    match engine {
        "lamina" | "bdb" => true,
        "rocksdb" => cfg!(feature = "rocksdb"),
        "lmdb" => cfg!(feature = "lmdb"),
        "sqlite" => cfg!(feature = "sqlite"),
        _ => false,
    }
}

/// The directory `engine`'s database goes in.
pub fn db_dir(args: &TpcbArgs, engine: &str) -> PathBuf {
    let base = args.db.clone().unwrap_or_else(std::env::temp_dir);
    base.join(format!("lamina-bench-tpcb-{engine}.{}", std::process::id()))
}

/// Runs `lamina-bench tpcb`.
pub fn run(args: TpcbArgs, ctx: &Ctx) -> Result<(), String> {
    let scale = Scale::of(&args)?;
    if let Some(engine) = &args.child {
        return child(engine, &args, scale, ctx);
    }
    for e in &args.engines {
        if !ALL.contains(&e.as_str()) {
            return Err(format!("unknown engine {e}; these are: {}", ALL.join(", ")));
        }
    }
    let exe = std::env::current_exe().map_err(|e| format!("finding this program: {e}"))?;
    let tf_base = args.db.clone().unwrap_or_else(std::env::temp_dir);
    let tf_path = tf_base.join(format!("lamina-bench-tpcb.{}.testfile", std::process::id()));
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut testfile: Vec<(String, f64)> = Vec::new();
    let mut before = testfile_run(&args, &tf_path, &mut notes);
    for engine in &args.engines {
        if !built(engine) {
            let msg =
                format!("{engine}: skipped, not in this build (cargo feature `{engine}` off)");
            note(&mut notes, msg);
            continue;
        }
        eprintln!("lamina-bench tpcb: {}", title(engine));
        let Some(cmd) = engine_command(engine, &args, &exe, scale, &mut notes) else {
            continue;
        };
        rows.extend(run_engine(engine, cmd, &mut notes)?);
        let after = testfile_run(&args, &tf_path, &mut notes);
        if let (Some(b), Some(a)) = (before, after) {
            testfile.push((engine.clone(), (a + b) / 2.0));
        }
        before = after;
    }
    let table = render(&args, scale, &rows, &testfile, &notes);
    print!("{table}");
    save(&args.out, &rows, &testfile, &table)?;
    if rows.iter().any(|r| r.invariant != "ok") {
        return Err("an invariant failed (see the table)".into());
    }
    Ok(())
}

/// Prints `msg` now and keeps it for the notes under the table.
fn note(notes: &mut Vec<String>, msg: String) {
    eprintln!("lamina-bench tpcb: {msg}");
    notes.push(msg);
}

/// testfile's operations a second at `path`, for `--seconds`; `None` with
/// `--no-testfile`, or when it fails (a note says why).
fn testfile_run(args: &TpcbArgs, path: &Path, notes: &mut Vec<String>) -> Option<f64> {
    if args.no_testfile {
        return None;
    }
    let len = crate::commit::Length::Seconds(args.seconds.max(0.1));
    match crate::commit::testfile_rate(path, len) {
        Ok(r) => Some(r),
        Err(e) => {
            notes.push(format!("testfile: {e}"));
            None
        }
    }
}

/// The process that runs `engine`: this program again with `--child
/// ENGINE`, or Berkeley DB's C program; `None` (and a note) when that
/// program cannot be had.
fn engine_command(
    engine: &str,
    args: &TpcbArgs,
    exe: &Path,
    scale: Scale,
    notes: &mut Vec<String>,
) -> Option<Command> {
    if engine != "bdb" {
        let mut cmd = Command::new(exe);
        cmd.args(std::env::args_os().skip(1))
            .args(["--child", engine]);
        return Some(cmd);
    }
    match bdb::command(args, exe, scale) {
        Ok(cmd) => Some(cmd),
        Err(why) => {
            note(notes, format!("bdb: skipped, {why}"));
            None
        }
    }
}

/// Runs `cmd`, `engine`'s process, and reads the rows it prints; a note
/// when it fails and for every invariant that does not hold.
fn run_engine(engine: &str, mut cmd: Command, notes: &mut Vec<String>) -> Result<Vec<Row>, String> {
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{engine}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let got: Vec<Row> = text.lines().filter_map(Row::from_line).collect();
    if !out.status.success() {
        let msg = format!(
            "{engine}: failed ({}) after {} row(s); see its message above",
            out.status,
            got.len()
        );
        note(notes, msg);
    }
    for r in &got {
        if r.invariant != "ok" {
            let msg = format!(
                "{engine} at {} threads: INVARIANT {}",
                r.threads, r.invariant
            );
            note(notes, msg);
        }
    }
    Ok(got)
}

/// Runs `engine` in this process: load, each thread count, a `row,` line each.
fn child(engine: &str, args: &TpcbArgs, scale: Scale, ctx: &Ctx) -> Result<(), String> {
    let _ = ctx;
    let dir = db_dir(args, engine);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = (|| {
        let db = open(engine, &dir, scale)?;
        let t0 = Instant::now();
        load(&*db, scale)?;
        eprintln!(
            "lamina-bench tpcb: {engine}: loaded {} rows in {:.2} s",
            scale.accounts + scale.tellers + scale.branches,
            t0.elapsed().as_secs_f64()
        );
        let mut committed = 0u64;
        let device = BlockDevice::of(&dir);
        for (round, &threads) in args.threads.iter().enumerate() {
            let at = (round as u32, threads.max(1));
            let mut row = measure_round(&*db, engine, args, scale, at, device.as_ref())?;
            committed += row.txns;
            row.invariant = db.sums()?.verdict(committed);
            println!("{}", row.to_line());
        }
        db.close()
    })();
    if !args.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn open(engine: &str, dir: &Path, scale: Scale) -> Result<Box<dyn Engine>, String> {
    let _ = scale;
    match engine {
        "lamina" => Ok(Box::new(super::lamina_engine::Lamina::open(dir)?)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Box::new(super::rocksdb_engine::Rocks::open(dir)?)),
        #[cfg(feature = "lmdb")]
        "lmdb" => Ok(Box::new(super::lmdb_engine::Lmdb::open(dir, scale)?)),
        #[cfg(feature = "sqlite")]
        "sqlite" => Ok(Box::new(super::sqlite_engine::Sqlite::open(dir)?)),
        other => Err(format!("{other}: not in this build")),
    }
}

/// Loads every account, teller and branch, balance 0, in durable
/// transactions of `LOAD_BATCH` rows.
fn load(db: &dyn Engine, scale: Scale) -> Result<(), String> {
    let kinds = [
        (b'a', scale.accounts),
        (b't', scale.tellers),
        (b'b', scale.branches),
    ];
    let mut rows = Vec::with_capacity(LOAD_BATCH);
    for (kind, n) in kinds {
        for id in 0..n {
            rows.push((key(kind, id).to_vec(), record(0)));
            if rows.len() == LOAD_BATCH {
                db.load(&rows)?;
                rows.clear();
            }
        }
    }
    if !rows.is_empty() {
        db.load(&rows)?;
    }
    Ok(())
}

/// Runs `threads` threads of transactions for `--seconds` (`at`: the
/// round and `threads`); the bytes written are those `device`, the
/// database's block device, wrote meanwhile (every process's: the run is
/// alone), not the process's `write_bytes`, which counts a whole large
/// page-cache folio for each small write into one.
fn measure_round(
    db: &dyn Engine,
    engine: &str,
    args: &TpcbArgs,
    scale: Scale,
    at: (u32, usize),
    device: Option<&BlockDevice>,
) -> Result<Row, String> {
    let (round, threads) = at;
    let limit = Duration::try_from_secs_f64(args.seconds.max(0.0)).unwrap_or(Duration::ZERO);
    let txns = AtomicU64::new(0);
    let conflicts = AtomicU64::new(0);
    let retried = AtomicU64::new(0);
    let fsyncs0 = db.fsyncs();
    let written0 = device.and_then(BlockDevice::written_bytes);
    let start = Instant::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (txns, conflicts, retried) = (&txns, &conflicts, &retried);
                s.spawn(move || -> Result<(), String> {
                    let mut w = db.worker()?;
                    let mut draws = Draws::new(args.seed, scale, round, t as u32);
                    while start.elapsed() < limit {
                        let txn = draws.next_txn();
                        let c = w.run(&txn)?;
                        txns.fetch_add(1, Ordering::Relaxed);
                        if c > 0 {
                            conflicts.fetch_add(c, Ordering::Relaxed);
                            retried.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|_| Err("a thread panicked".into())))
    })?;
    let secs = start.elapsed().as_secs_f64();
    let fsyncs = match (fsyncs0, db.fsyncs()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    let written = match (written0, device.and_then(BlockDevice::written_bytes)) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    Ok(Row {
        engine: engine.to_string(),
        threads,
        txns: txns.load(Ordering::Relaxed),
        secs,
        conflicts: conflicts.load(Ordering::Relaxed),
        retried: retried.load(Ordering::Relaxed),
        fsyncs,
        written,
        invariant: String::new(),
    })
}
