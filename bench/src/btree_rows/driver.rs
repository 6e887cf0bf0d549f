//! The driver of `lamina-bench btree-rows`: its options, one child process
//! per engine (this program again with `--child ENGINE`, so that no
//! engine's page cache use, threads or memory carry into the next one's
//! process; nothing is dropped between engines, as the harness drops
//! nothing), the `row,` lines a child prints and the parent reads, and the
//! comparison of what the engines read.

use super::{report, run_rows, unit, Engine, Measured, Selection, Sizes, BULK_ELEMENTS, ROWS};
use crate::engines::peers;
use crate::Ctx;
use std::path::{Path, PathBuf};

/// Every engine, in the default order.
pub const ALL: [&str; 4] = ["lamina", "rocksdb", "lmdb", "redb"];

/// Arguments of `lamina-bench btree-rows`.
#[derive(Debug, Clone, clap::Args)]
pub struct BtreeRowsArgs {
    /// Engines, in the order they run: lamina, rocksdb, lmdb, redb.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        default_value = "lamina,rocksdb,lmdb,redb"
    )]
    pub engines: Vec<String>,
    /// Pairs of the bulk load (the harness's 5,000,000); every other count
    /// is scaled with it.
    #[arg(long, value_name = "N", default_value_t = BULK_ELEMENTS)]
    pub elements: u64,
    /// Rows to report (default: all): bulk-load, individual-writes,
    /// batch-writes, sorted-inserts, nosync-writes, len, random-reads,
    /// range-reads, reads-{4,8,16,32}-threads, removals, retain,
    /// extract-if, pop, uncompacted-size, compacted-size. The write rows
    /// before the last one named run too.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub rows: Vec<String>,
    /// Where the table (Markdown) and the CSV files go. Default:
    /// `$BENCH_OUT/btree-rows`, or target/bench-results/btree-rows.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Where the databases go: a directory per engine, removed after it ran
    /// unless --keep. Default: under the temporary directory.
    #[arg(long, visible_alias = "dir", value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Keep each engine's database.
    #[arg(long)]
    pub keep: bool,
    /// Seconds the first 1% of the pops may take before the pop rate is
    /// estimated from them and the rest removed untimed (the harness's 1;
    /// 0 always takes that path).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub pop_sample_limit: f64,
    /// Run one engine in this process and print its rows (how the driver
    /// runs each engine in a process of its own).
    #[arg(long, value_name = "ENGINE", hide = true)]
    pub child: Option<String>,
}

/// One row of one engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The engine.
    pub engine: String,
    /// What it measured.
    pub m: Measured,
}

impl Row {
    /// The row's figure: a rate, seconds or bytes, as its unit says.
    pub fn value(&self) -> f64 {
        match unit(self.m.id) {
            Some(u) if u.higher_is_better() => crate::rate(self.m.count, self.m.secs),
            Some(super::Unit::Size) => self.m.bytes.unwrap_or(0) as f64,
            _ => self.m.secs,
        }
    }

    /// The line a child prints (the check last: it may hold commas).
    pub(super) fn to_line(&self) -> String {
        format!(
            "row,{},{},{},{:.9},{},{},{}",
            self.engine,
            self.m.id,
            self.m.count,
            self.m.secs,
            self.m
                .bytes
                .map_or_else(|| "-".to_string(), |b| b.to_string()),
            u8::from(self.m.estimated),
            self.m.check
        )
    }

    /// Parses a child's line.
    pub(super) fn from_line(line: &str) -> Option<Row> {
        let f: Vec<&str> = line.strip_prefix("row,")?.splitn(7, ',').collect();
        let [engine, id, count, secs, bytes, estimated, check] = f.as_slice() else {
            return None;
        };
        let id = ROWS.iter().find(|r| r.0 == *id)?.0;
        Some(Row {
            engine: engine.to_string(),
            m: Measured {
                id,
                count: count.parse().ok()?,
                secs: secs.parse().ok()?,
                bytes: bytes.parse().ok(),
                check: check.to_string(),
                estimated: *estimated == "1",
            },
        })
    }
}

/// The output directory: `--out`, or `btree-rows` in `$BENCH_OUT` or in
/// target/bench-results.
fn out_dir(args: &BtreeRowsArgs) -> PathBuf {
    args.out.clone().unwrap_or_else(|| {
        std::env::var_os("BENCH_OUT")
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from("target/bench-results"), PathBuf::from)
            .join("btree-rows")
    })
}

/// The run's counts.
fn sizes(args: &BtreeRowsArgs) -> Result<Sizes, String> {
    let mut s = Sizes::new(args.elements);
    s.pop_sample_limit =
        std::time::Duration::try_from_secs_f64(args.pop_sample_limit).map_err(|_| {
            format!(
                "--pop-sample-limit {}: seconds, 0 or more",
                args.pop_sample_limit
            )
        })?;
    Ok(s)
}

/// Runs `lamina-bench btree-rows`.
pub fn run(args: BtreeRowsArgs, ctx: &Ctx) -> Result<(), String> {
    if args.elements < 1_000 {
        return Err(format!(
            "--elements {}: at least 1000 (the rows pop and range-read a share of them)",
            args.elements
        ));
    }
    let sel = Selection::new(&args.rows)?;
    if let Some(engine) = &args.child {
        return child(engine, &args, &sel, ctx);
    }
    for e in &args.engines {
        if !ALL.contains(&e.as_str()) {
            return Err(format!("unknown engine {e}; these are: {}", ALL.join(", ")));
        }
    }
    let children = peers::run_children("btree-rows", "row", &args.engines, Row::from_line)?;
    let rows = children.rows;
    let mut notes = children.skipped;
    let mut failures = children.failed;
    failures.extend(disagreements(&rows));
    notes.extend(failures.iter().cloned());
    let sizes = sizes(&args)?;
    let md = report::render(&args, &sizes, &rows, &notes);
    print!("{md}");
    report::save(&out_dir(&args), args.elements, &rows, &md)?;
    match failures.as_slice() {
        [] => Ok(()),
        [one] => Err(one.clone()),
        many => Err(format!("{} failures: {}", many.len(), many.join("; "))),
    }
}

/// Rows whose engines read or removed different things. A rate estimated
/// from a sample (the pops of a slow engine) checked only the sample: it is
/// compared with the other estimates, a full run with the other full runs.
pub(super) fn disagreements(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for (id, title, _) in ROWS {
        let checked: Vec<&Row> = rows
            .iter()
            .filter(|r| r.m.id == id && !r.m.check.is_empty())
            .collect();
        let differ = [false, true].iter().any(|&estimated| {
            let mut alike = checked.iter().filter(|r| r.m.estimated == estimated);
            let first = alike.next();
            alike.any(|r| Some(&r.m.check) != first.map(|f| &f.m.check))
        });
        if differ {
            let each: Vec<String> = checked
                .iter()
                .map(|r| format!("{} {}", r.engine, r.m.check))
                .collect();
            out.push(format!(
                "{title}: the engines disagree on what they read or removed: {}",
                each.join("; ")
            ));
        }
    }
    out
}

/// The directory `engine`'s database goes in.
fn db_dir(args: &BtreeRowsArgs, engine: &str) -> PathBuf {
    let base = args.db.clone().unwrap_or_else(std::env::temp_dir);
    base.join(format!(
        "lamina-bench-btree-rows-{engine}.{}",
        std::process::id()
    ))
}

/// Runs the rows on `engine` in this process, printing a `row,` line for
/// each.
fn child(engine: &str, args: &BtreeRowsArgs, sel: &Selection, ctx: &Ctx) -> Result<(), String> {
    let base = db_dir(args, engine);
    let _ = std::fs::remove_dir_all(&base);
    let result = run_child(engine, &base, args, sel, ctx);
    if !args.keep {
        let _ = std::fs::remove_dir_all(&base);
    }
    result
}

fn run_child(
    engine: &str,
    base: &Path,
    args: &BtreeRowsArgs,
    sel: &Selection,
    ctx: &Ctx,
) -> Result<(), String> {
    // The database in a directory of its own.
    let dir = base.join("db");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut db = open(engine, &dir)?;
    let sizes = sizes(args)?;
    let size = || crate::dir_size(&dir);
    let quiet = ctx.progress.quiet;
    let mut sink = |m: Measured| -> Result<(), String> {
        let row = Row {
            engine: engine.to_string(),
            m,
        };
        if !quiet {
            eprintln!(
                "btree-rows {engine}: {}: {}",
                report::title(row.m.id),
                report::figure(&row)
            );
        }
        println!("{}", row.to_line());
        Ok(())
    };
    run_rows(&mut *db, &sizes, sel, &size, &mut sink)?;
    db.close()
}

/// Opens (creating) `engine`'s database in the directory `dir`, with the
/// harness's settings.
fn open(engine: &str, dir: &Path) -> Result<Box<dyn Engine>, String> {
    match engine {
        "lamina" => Ok(Box::new(super::lamina_engine::LaminaEngine::open(dir)?)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Box::new(super::rocksdb_engine::RocksEngine::open(dir)?)),
        #[cfg(feature = "lmdb")]
        "lmdb" => Ok(Box::new(super::lmdb_engine::LmdbEngine::open(dir)?)),
        #[cfg(feature = "redb")]
        "redb" => Ok(Box::new(super::redb_engine::RedbEngine::open(dir)?)),
        other => Err(format!("{other}: not in this build")),
    }
}
