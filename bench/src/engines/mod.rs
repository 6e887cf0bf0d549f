//! `lamina-bench engines`: lamina beside RocksDB, LMDB, redb and fjall, all
//! compiled here in release mode and driven by this one program, on
//! db_bench's workloads: fillseq, fillrandom, overwrite, readrandom,
//! readmissing (gets of absent keys), readseq, deleterandom.
//!
//! Keys are 16 bytes (db_bench's zero-padded decimal: the even numbers
//! `2i`, so the absent keys `2i + 1` fall among them), values `--value-size`
//! bytes compressible to about half, `--num` of them. Writes go in commits
//! of `--batch` operations at one durability for every engine: handed to
//! the OS, not synced (redb, which has no such level, runs with its
//! `Durability::None`, which keeps commits in its own buffer). Random orders
//! are fixed-seed permutations: every key once, the same order for every
//! engine. Reads are single gets.
//!
//! Each engine runs in a child process of its own (this program again,
//! with `--child ENGINE`), so that its peak resident set, its bytes written
//! (`/proc/self/io`) and its threads are its own. The child prints one
//! `row,...` line per workload; this process prints the tables (Markdown on
//! standard output) and writes them, with CSV, to `--out`.

pub(crate) mod measure;
mod order;
pub(crate) mod peers;
pub(crate) mod report;
mod store;

use crate::progress::{Progress, Total};
use crate::Ctx;
use order::{absent_key, present_key, Permutation, Values, KEY_SIZE};
use std::path::{Path, PathBuf};
use std::time::Instant;
use store::{Config, Op, Store};

/// The workloads, in the order they run.
pub const WORKLOADS: [&str; 7] = [
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readmissing",
    "readseq",
    "deleterandom",
];

/// Arguments of `lamina-bench engines`.
#[derive(Debug, Clone, clap::Args)]
pub struct EnginesArgs {
    /// Engines, in the order they run: lamina, rocksdb, lmdb, redb, fjall.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        default_value = "lamina,rocksdb,lmdb,redb,fjall"
    )]
    pub engines: Vec<String>,
    /// Workloads, run in their fixed order: fillseq, fillrandom, overwrite,
    /// readrandom, readmissing, readseq, deleterandom. One that needs data
    /// with none loaded first loads it (fillrandom, not timed).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        default_value = "fillseq,fillrandom,overwrite,readrandom,readmissing,readseq,deleterandom"
    )]
    pub workloads: Vec<String>,
    /// Keys (16 bytes each).
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    pub num: u64,
    /// Bytes of each value (e.g. 100, 64K).
    #[arg(long, value_name = "BYTES", default_value = "100", value_parser = crate::parse_size)]
    pub value_size: u64,
    /// Puts or deletes per commit.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub batch: u64,
    /// Gets of each read workload (default: --num; the first N of its order).
    #[arg(long, value_name = "N")]
    pub reads: Option<u64>,
    /// Where the table (Markdown) and its CSV files go.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "target/bench-results/engines"
    )]
    pub out: PathBuf,
    /// Where the databases go: a directory per engine, removed after it ran
    /// unless --keep. Default: under the temporary directory.
    #[arg(long, visible_alias = "dir", value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Keep each engine's last database.
    #[arg(long)]
    pub keep: bool,
    /// Run one engine in this process and print its rows (how the driver
    /// runs each engine in a process of its own).
    #[arg(long, value_name = "ENGINE", hide = true)]
    pub child: Option<String>,
}

/// What one workload on one engine measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// The engine.
    pub engine: String,
    /// The workload.
    pub workload: String,
    /// Operations done (gets, puts, deletes, entries scanned).
    pub ops: u64,
    /// Seconds from the first operation to the return of the last.
    pub secs: f64,
    /// Disk space of the database directory afterwards (allocated bytes, as
    /// `du` counts them; write workloads).
    pub disk_bytes: Option<u64>,
    /// Bytes the process caused to be written to storage during the workload.
    pub written_bytes: Option<u64>,
    /// Bytes of keys and values put (keys deleted, for deleterandom).
    pub user_bytes: u64,
    /// Peak resident set during the workload (since the previous one, when
    /// the kernel lets the peak be reset).
    pub peak_rss: Option<u64>,
}

impl Row {
    /// Operations a second.
    pub fn rate(&self) -> f64 {
        crate::rate(self.ops, self.secs)
    }

    /// Bytes written per byte put.
    pub fn write_amp(&self) -> Option<f64> {
        let w = self.written_bytes?;
        (self.user_bytes > 0).then(|| w as f64 / self.user_bytes as f64)
    }

    /// The line a child prints.
    fn to_line(&self) -> String {
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        format!(
            "row,{},{},{},{:.6},{},{},{},{}",
            self.engine,
            self.workload,
            self.ops,
            self.secs,
            opt(self.disk_bytes),
            opt(self.written_bytes),
            self.user_bytes,
            opt(self.peak_rss)
        )
    }

    /// Parses a child's line.
    fn from_line(line: &str) -> Option<Row> {
        let f: Vec<&str> = line.strip_prefix("row,")?.split(',').collect();
        let opt = |s: &str| s.parse::<u64>().ok();
        match f.as_slice() {
            [engine, workload, ops, secs, disk, written, user, rss] => Some(Row {
                engine: engine.to_string(),
                workload: workload.to_string(),
                ops: ops.parse().ok()?,
                secs: secs.parse().ok()?,
                disk_bytes: opt(disk),
                written_bytes: opt(written),
                user_bytes: user.parse().ok()?,
                peak_rss: opt(rss),
            }),
            _ => None,
        }
    }
}

/// Whether a workload writes (its rows report bytes on disk and written).
pub fn is_write(workload: &str) -> bool {
    matches!(
        workload,
        "fillseq" | "fillrandom" | "overwrite" | "deleterandom"
    )
}

/// The run's parameters, as the header and the file names give them.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Keys.
    pub num: u64,
    /// Bytes of a value.
    pub value_size: u64,
    /// Operations per commit.
    pub batch: u64,
    /// Gets per read workload.
    pub reads: u64,
    /// What every engine is given.
    pub config: Config,
}

/// Runs `lamina-bench engines`.
pub fn run(args: EnginesArgs, ctx: &Ctx) -> Result<(), String> {
    let setup = setup(&args)?;
    if let Some(engine) = &args.child {
        return child(engine, &args, &setup, ctx);
    }
    for e in &args.engines {
        if !peers::ALL.contains(&e.as_str()) {
            return Err(format!(
                "unknown engine {e}; these are: {}",
                peers::ALL.join(", ")
            ));
        }
    }
    let children = peers::run_children("engines", "workload", &args.engines, Row::from_line)?;
    let rows = children.rows;
    let mut notes = children.skipped;
    notes.extend(children.failed);
    let tables = report::render(&setup, &args, &rows, &notes);
    print!("{tables}");
    report::save(&args.out, &setup, &rows, &tables)?;
    Ok(())
}

/// The run's parameters, checked.
fn setup(args: &EnginesArgs) -> Result<Setup, String> {
    if args.num == 0 || args.num >= 4_000_000_000_000_000 {
        return Err(format!("--num {}: from 1 to 4e15", args.num));
    }
    if args.batch == 0 {
        return Err("--batch 0: at least one operation per commit".into());
    }
    for w in &args.workloads {
        if !WORKLOADS.contains(&w.as_str()) {
            return Err(format!(
                "unknown workload {w}; these are: {}",
                WORKLOADS.join(", ")
            ));
        }
    }
    let opts = store::lamina_options()?;
    let budget = opts.memory_budget as u64;
    let defaults = lamina::Options::default();
    // The memtable lamina derives from its budget (a quarter, at most 64
    // MiB: docs/design.md#memory), or the one forced with --option.
    let write_buffer = if opts.memtable_size != defaults.memtable_size {
        opts.memtable_size as u64
    } else {
        (budget / 4).clamp(64 << 10, 64 << 20)
    };
    Ok(Setup {
        num: args.num,
        value_size: args.value_size,
        batch: args.batch,
        reads: args.reads.unwrap_or(args.num).min(args.num),
        config: Config {
            memory_budget: budget,
            write_buffer,
            data_bytes: args.num * (KEY_SIZE as u64 + args.value_size),
        },
    })
}

/// The directory `engine`'s database goes in.
fn db_dir(args: &EnginesArgs, engine: &str) -> PathBuf {
    let base = args.db.clone().unwrap_or_else(std::env::temp_dir);
    base.join(format!(
        "lamina-bench-engines-{engine}.{}",
        std::process::id()
    ))
}

/// Runs every workload on `engine` in this process, printing a `row,` line
/// for each.
fn child(engine: &str, args: &EnginesArgs, setup: &Setup, ctx: &Ctx) -> Result<(), String> {
    let dir = db_dir(args, engine);
    let result = run_engine(engine, &dir, args, setup, ctx);
    if !args.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

/// Writes go in commits of `batch`; reads are single gets.
struct Runner<'a> {
    engine: &'a str,
    /// The engine's directory; each fresh database is a new directory in it.
    base: &'a Path,
    /// The current database's directory.
    dir: PathBuf,
    /// Databases opened so far.
    opened: u32,
    setup: &'a Setup,
    ctx: &'a Ctx,
    values: Values,
}

fn run_engine(
    engine: &str,
    base: &Path,
    args: &EnginesArgs,
    setup: &Setup,
    ctx: &Ctx,
) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(base);
    let mut r = Runner {
        engine,
        base,
        dir: base.to_path_buf(),
        opened: 0,
        setup,
        ctx,
        values: Values::new(setup.value_size as usize),
    };
    let mut store: Option<Box<dyn Store>> = None;
    let mut loaded = false;
    for w in WORKLOADS
        .iter()
        .filter(|w| args.workloads.iter().any(|a| a == *w))
    {
        let w = *w;
        let fill = matches!(w, "fillseq" | "fillrandom");
        let mut s = match store.take() {
            Some(s) if loaded && !fill => s,
            old => r.fresh(old)?,
        };
        if !fill && !loaded {
            r.fill(&mut *s, "load", Some(seed("load")))?;
        }
        let row = r.timed(w, &mut *s);
        store = Some(s);
        println!("{}", row?.to_line());
        loaded = w != "deleterandom";
    }
    match store {
        Some(s) => s.close(),
        None => Ok(()),
    }
}

/// Seeds of the permutations: one per workload, so no two share an order.
fn seed(workload: &str) -> u64 {
    match workload {
        "fillrandom" | "load" => 1,
        "overwrite" => 2,
        "readrandom" => 3,
        "readmissing" => 4,
        "deleterandom" => 5,
        _ => 0,
    }
}

impl Runner<'_> {
    /// Closes `old`, removes its directory and opens a new, empty database
    /// in a directory of its own (so that nothing an engine still does in
    /// the old one after closing it can touch the new one).
    fn fresh(&mut self, old: Option<Box<dyn Store>>) -> Result<Box<dyn Store>, String> {
        if let Some(old) = old {
            old.close()?;
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        self.opened += 1;
        self.dir = self.base.join(self.opened.to_string());
        peers::open(self.engine, &self.dir, &self.setup.config)
    }

    fn progress(&self, what: &str, n: u64) -> Progress {
        Progress::new(
            format!("engines {} {what}", self.engine),
            Total::Records(n),
            self.ctx.progress.mode(true),
            &self.ctx.progress,
        )
    }

    /// Runs workload `w`, measured.
    fn timed(&self, w: &str, store: &mut dyn Store) -> Result<Row, String> {
        let reset = measure::reset_peak_rss();
        let written0 = measure::write_bytes();
        let t0 = Instant::now();
        let (ops, user_bytes) = match w {
            "fillseq" => self.fill(store, w, None)?,
            "fillrandom" | "overwrite" => self.fill(store, w, Some(seed(w)))?,
            "deleterandom" => self.delete(store)?,
            "readrandom" | "readmissing" => self.read(store, w)?,
            "readseq" => self.scan(store)?,
            other => return Err(format!("unknown workload {other}")),
        };
        if is_write(w) {
            store.settle()?;
        }
        let secs = t0.elapsed().as_secs_f64();
        let written = match (written0, measure::write_bytes()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        let write = is_write(w);
        Ok(Row {
            engine: self.engine.to_string(),
            workload: w.to_string(),
            ops,
            secs,
            disk_bytes: write.then(|| measure::disk_usage(&self.dir)),
            written_bytes: if write { written } else { None },
            user_bytes,
            // Without a reset the peak is the process's so far: not this
            // workload's, so not reported.
            peak_rss: if reset { measure::peak_rss() } else { None },
        })
    }

    /// Puts every key once: in key order (`seed` None) or in the order of
    /// the permutation of `seed`. Returns (puts, bytes put).
    fn fill(
        &self,
        store: &mut dyn Store,
        w: &str,
        seed: Option<u64>,
    ) -> Result<(u64, u64), String> {
        let n = self.setup.num;
        let perm = seed.map(|s| Permutation::new(n, s));
        let mut progress = self.progress(w, n);
        let batch = self.setup.batch as usize;
        let op_bytes = KEY_SIZE as u64 + self.setup.value_size;
        let mut ops: Vec<Op<'_>> = Vec::with_capacity(batch);
        let mut i = 0;
        while i < n {
            ops.clear();
            while ops.len() < batch && i < n {
                let x = perm.as_ref().map_or(i, |p| p.at(i));
                ops.push(Op {
                    key: present_key(x),
                    value: Some(self.values.value(i)),
                });
                i += 1;
            }
            store.write(&ops)?;
            progress.add(ops.len() as u64, ops.len() as u64 * op_bytes);
        }
        progress.finish();
        Ok((n, n * op_bytes))
    }

    /// Deletes every key once, in a random order. Returns (deletes, bytes of
    /// the keys).
    fn delete(&self, store: &mut dyn Store) -> Result<(u64, u64), String> {
        let n = self.setup.num;
        let perm = Permutation::new(n, seed("deleterandom"));
        let mut progress = self.progress("deleterandom", n);
        let batch = self.setup.batch as usize;
        let mut ops: Vec<Op<'_>> = Vec::with_capacity(batch);
        let mut i = 0;
        while i < n {
            ops.clear();
            while ops.len() < batch && i < n {
                ops.push(Op {
                    key: present_key(perm.at(i)),
                    value: None,
                });
                i += 1;
            }
            store.write(&ops)?;
            progress.add(ops.len() as u64, (ops.len() * KEY_SIZE) as u64);
        }
        progress.finish();
        Ok((n, n * KEY_SIZE as u64))
    }

    /// Gets `reads` keys in a random order: present ones (readrandom) or
    /// absent ones (readmissing); checks what was found.
    fn read(&self, store: &mut dyn Store, w: &str) -> Result<(u64, u64), String> {
        let reads = self.setup.reads;
        let perm = Permutation::new(self.setup.num, seed(w));
        let absent = w == "readmissing";
        let progress = std::cell::RefCell::new(self.progress(w, reads));
        let mut keys = (0..reads).map(|i| {
            progress.borrow_mut().add(1, KEY_SIZE as u64);
            let x = perm.at(i);
            if absent {
                absent_key(x)
            } else {
                present_key(x)
            }
        });
        let (found, bytes) = store.gets(&mut keys)?;
        progress.into_inner().finish();
        let want = if absent { 0 } else { reads };
        if found != want || bytes != found * self.setup.value_size {
            return Err(format!(
                "{}: {w} found {found} of {reads} keys ({bytes} bytes of values), expected {want}",
                self.engine
            ));
        }
        Ok((reads, 0))
    }

    /// Reads every entry in key order; checks the count.
    fn scan(&self, store: &mut dyn Store) -> Result<(u64, u64), String> {
        let mut progress = self.progress("readseq", self.setup.num);
        let (n, bytes) = store.scan()?;
        progress.add(n, bytes);
        progress.finish();
        if n != self.setup.num {
            return Err(format!(
                "{}: readseq read {n} entries, expected {}",
                self.engine, self.setup.num
            ));
        }
        Ok((n, 0))
    }
}
