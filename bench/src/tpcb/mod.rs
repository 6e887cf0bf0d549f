//! `lamina-bench tpcb`: the TPC-B transaction, in the shape of Berkeley
//! DB's `ex_tpcb` example, on lamina beside RocksDB (`TransactionDB`), LMDB
//! (`heed`), SQLite (`rusqlite`, bundled) and Berkeley DB 5.3 (a C program,
//! bench/tpcb_bdb.c), every commit durable.
//!
//! The data (bench/README.md, "TPC-B transactions: durable read-modify-write
//! at 1 to 16 threads", is the definition): `--branches` B branches (10), 10
//! tellers per branch, `--accounts-per-branch` (10,000) accounts per
//! branch (ex_tpcb's defaults), each row an 8-byte little-endian balance padded to ex_tpcb's
//! 100-byte record, starting at 0; keys `a`/`t`/`b` + the 4-byte big-endian
//! id; history rows `h` + round + thread + counter (17 bytes), 100 bytes
//! holding the delta and the three ids. One transaction: a random account,
//! a random branch and a random teller (each drawn over all of its kind, as
//! ex_tpcb draws them), a random delta in [-999,999, 999,999] (TPC-B's);
//! read and update the account, branch and teller balances (that order, as
//! ex_tpcb), put one history row, commit durably. A conflict is retried
//! until the transaction commits.
//!
//! Each engine runs in a process of its own (this program again with
//! `--child ENGINE`; Berkeley DB: the C program), which loads the data, runs
//! each thread count for `--seconds`, checks the invariant after each
//! (sum of accounts == sum of tellers == sum of branches == sum of the
//! history's deltas) and prints one `row,` line per thread count. testfile
//! (commit.rs: write 256 B + lseek + fsync) runs before the first engine and
//! after each, each engine compared with the mean of the runs around it.

mod bdb;
mod lamina_engine;
#[cfg(feature = "lmdb")]
mod lmdb_engine;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;
#[cfg(feature = "sqlite")]
mod sqlite_engine;

use crate::engines::measure;
use crate::{Ctx, XorShift64Star};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Every engine, in the default order.
pub const ALL: [&str; 5] = ["lamina", "rocksdb", "lmdb", "sqlite", "bdb"];

/// Bytes of every row (ex_tpcb's `RECLEN`).
pub const RECORD: usize = 100;
/// Tellers per branch (TPC-B's, ex_tpcb's).
pub const TELLERS_PER_BRANCH: u32 = 10;
/// Rows per load transaction.
pub const LOAD_BATCH: usize = 10_000;

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

/// The sizes of the data.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub branches: u32,
    pub tellers: u32,
    pub accounts: u32,
}

impl Scale {
    fn of(args: &TpcbArgs) -> Result<Scale, String> {
        let b = args.branches;
        let accounts = b.checked_mul(args.accounts_per_branch);
        match accounts {
            Some(a) if b > 0 && a > 0 => Ok(Scale {
                branches: b,
                tellers: b * TELLERS_PER_BRANCH,
                accounts: a,
            }),
            _ => {
                Err("--branches and --accounts-per-branch: at least 1, accounts below 2^32".into())
            }
        }
    }
}

/// The key of account, teller or branch `id` (`kind` b'a', b't', b'b').
pub fn key(kind: u8, id: u32) -> [u8; 5] {
    let b = id.to_be_bytes();
    [kind, b[0], b[1], b[2], b[3]]
}

/// The key of a history row: `h`, round, thread, the thread's counter.
pub fn history_key(round: u32, thread: u32, n: u64) -> [u8; 17] {
    let mut k = [b'h'; 17];
    put_at(&mut k, 1, &round.to_be_bytes());
    put_at(&mut k, 5, &thread.to_be_bytes());
    put_at(&mut k, 9, &n.to_be_bytes());
    k
}

/// A row of accounts, tellers or branches: the balance, then padding.
pub fn record(balance: i64) -> [u8; RECORD] {
    let mut r = [b' '; RECORD];
    put_at(&mut r, 0, &balance.to_le_bytes());
    r
}

/// Copies `bytes` into `buf` at `at` (nothing past its end).
fn put_at(buf: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(d) = buf.get_mut(at..at + bytes.len()) {
        d.copy_from_slice(bytes);
    }
}

/// The balance of a row (the history row's delta).
pub fn balance(v: &[u8]) -> Result<i64, String> {
    v.get(..8)
        .and_then(|b| b.try_into().ok())
        .map(i64::from_le_bytes)
        .ok_or_else(|| format!("a row of {} bytes, too short", v.len()))
}

/// A row with `delta` added to its balance.
pub fn add(v: Option<&[u8]>, delta: i64, what: &str) -> Result<[u8; RECORD], String> {
    let v = v.ok_or_else(|| format!("{what}: missing"))?;
    Ok(record(balance(v)?.wrapping_add(delta)))
}

/// One TPC-B transaction's draws.
#[derive(Debug, Clone, Copy)]
pub struct Txn {
    pub account: [u8; 5],
    pub teller: [u8; 5],
    pub branch: [u8; 5],
    pub delta: i64,
    pub history: [u8; 17],
    pub history_row: [u8; RECORD],
}

/// A thread's stream of transactions.
pub struct Draws {
    rng: XorShift64Star,
    scale: Scale,
    round: u32,
    thread: u32,
    n: u64,
}

impl Draws {
    pub fn new(seed: u64, scale: Scale, round: u32, thread: u32) -> Draws {
        let s = seed ^ (u64::from(round) << 32 | u64::from(thread)).wrapping_mul(0x100_0000_01B3);
        Draws {
            rng: XorShift64Star::new(s),
            scale,
            round,
            thread,
            n: 0,
        }
    }

    /// The next transaction.
    pub fn next_txn(&mut self) -> Txn {
        let a = (self.rng.next_u64() % u64::from(self.scale.accounts)) as u32;
        let b = (self.rng.next_u64() % u64::from(self.scale.branches)) as u32;
        let t = (self.rng.next_u64() % u64::from(self.scale.tellers)) as u32;
        let delta = (self.rng.next_u64() % 1_999_999) as i64 - 999_999;
        let mut row = record(delta);
        put_at(&mut row, 8, &a.to_le_bytes());
        put_at(&mut row, 12, &b.to_le_bytes());
        put_at(&mut row, 16, &t.to_le_bytes());
        let h = history_key(self.round, self.thread, self.n);
        self.n += 1;
        Txn {
            account: key(b'a', a),
            teller: key(b't', t),
            branch: key(b'b', b),
            delta,
            history: h,
            history_row: row,
        }
    }
}

/// The balances' sums, for the invariant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sums {
    pub accounts: i128,
    pub tellers: i128,
    pub branches: i128,
    pub history: i128,
    pub history_rows: u64,
}

impl Sums {
    /// Adds the row `k`, `v` to its sum.
    pub fn add(&mut self, k: &[u8], v: &[u8]) -> Result<(), String> {
        let x = i128::from(balance(v)?);
        match k.first() {
            Some(b'a') => self.accounts += x,
            Some(b't') => self.tellers += x,
            Some(b'b') => self.branches += x,
            Some(b'h') => {
                self.history += x;
                self.history_rows += 1;
            }
            _ => return Err(format!("an unknown key {k:?}")),
        }
        Ok(())
    }

    /// `ok`, or what is wrong.
    pub fn verdict(&self, committed: u64) -> String {
        let s = self;
        if s.accounts == s.tellers
            && s.tellers == s.branches
            && s.branches == s.history
            && s.history_rows == committed
        {
            "ok".into()
        } else {
            format!(
                "FAILED: accounts {} tellers {} branches {} history {} ({} rows, {} committed)",
                s.accounts, s.tellers, s.branches, s.history, s.history_rows, committed
            )
        }
    }
}

/// One engine, open: loaded, then worked by threads.
pub trait Engine: Sync {
    /// Puts `rows` in one durable transaction.
    fn load(&self, rows: &[(Vec<u8>, [u8; RECORD])]) -> Result<(), String>;
    /// A handle for one thread.
    fn worker(&self) -> Result<Box<dyn Worker + '_>, String>;
    /// Sums every row (one read transaction or snapshot).
    fn sums(&self) -> Result<Sums, String>;
    /// fsyncs issued so far, where the engine counts them.
    fn fsyncs(&self) -> Option<u64> {
        None
    }
    /// Closes it.
    fn close(self: Box<Self>) -> Result<(), String>;
}

/// One thread's handle on an engine.
pub trait Worker {
    /// Runs `t` until it commits durably; returns the conflicts met.
    fn run(&mut self, t: &Txn) -> Result<u64, String>;
}

/// What one thread count on one engine measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub engine: String,
    pub threads: usize,
    pub txns: u64,
    pub secs: f64,
    /// Conflicted attempts (each one run again).
    pub conflicts: u64,
    /// Transactions that needed more than one attempt.
    pub retried: u64,
    pub fsyncs: Option<u64>,
    /// Bytes the process caused to be written (`/proc/self/io`).
    pub written: Option<u64>,
    /// `ok`, or what failed.
    pub invariant: String,
}

impl Row {
    pub fn rate(&self) -> f64 {
        crate::rate(self.txns, self.secs)
    }

    fn per_txn(&self, n: u64) -> f64 {
        if self.txns > 0 {
            n as f64 / self.txns as f64
        } else {
            0.0
        }
    }

    fn to_line(&self) -> String {
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        format!(
            "row,{},{},{},{:.6},{},{},{},{},{}",
            self.engine,
            self.threads,
            self.txns,
            self.secs,
            self.conflicts,
            self.retried,
            opt(self.fsyncs),
            opt(self.written),
            self.invariant.replace(',', ";")
        )
    }

    /// Parses a child's line (the C program prints the same).
    fn from_line(line: &str) -> Option<Row> {
        let f: Vec<&str> = line.strip_prefix("row,")?.splitn(9, ',').collect();
        let opt = |s: &str| s.parse::<u64>().ok();
        match f.as_slice() {
            [engine, threads, txns, secs, conflicts, retried, fsyncs, written, inv] => Some(Row {
                engine: engine.to_string(),
                threads: threads.parse().ok()?,
                txns: txns.parse().ok()?,
                secs: secs.parse().ok()?,
                conflicts: conflicts.parse().ok()?,
                retried: retried.parse().ok()?,
                fsyncs: opt(fsyncs),
                written: opt(written),
                invariant: inv.to_string(),
            }),
            _ => None,
        }
    }
}

/// The engine's name and version, for the tables.
pub fn title(engine: &str) -> String {
    use crate::engines::peers::version;
    match engine {
        "lamina" => format!("lamina {}", crate::VERSION),
        "rocksdb" => {
            let sys = version("librocksdb-sys");
            let rocks = sys.split_once('+').map_or(sys, |(_, r)| r);
            format!("RocksDB {rocks} (rocksdb {})", version("rocksdb"))
        }
        "lmdb" => format!(
            "LMDB (heed {}, lmdb-master-sys {})",
            version("heed"),
            version("lmdb-master-sys")
        ),
        "sqlite" => format!(
            "SQLite (rusqlite {}, bundled libsqlite3-sys {})",
            version("rusqlite"),
            version("libsqlite3-sys")
        ),
        "bdb" => "Berkeley DB 5.3 (Debian's libdb5.3, bench/tpcb_bdb.c)".into(),
        other => other.to_string(),
    }
}

/// What each engine is given, in words (the run's header prints it).
pub fn describe(engine: &str) -> &'static str {
    match engine {
        "lamina" => {
            "the `lamina` tool's options (default memory budget) with Durability::Sync as \
             the default; Db::transact (optimistic, serializable; its own back-off and \
             exclusive runs after 4 conflicts), run again on a Conflict it gives up on"
        }
        "rocksdb" => {
            "TransactionDB (pessimistic, its default), default options and \
             TransactionDBOptions (lock timeout 1 s), WriteOptions sync=true; \
             get_for_update (exclusive) of account, branch, teller, then puts; \
             Busy/TimedOut/TryAgain retried"
        }
        "lmdb" => {
            "default flags (every commit synced: fsync of the data file after writing it); \
             one write transaction per TPC-B transaction (LMDB has one writer at a time); \
             map size 1 GiB + 4x the data"
        }
        "sqlite" => {
            "one table kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID; journal_mode=WAL, \
             synchronous=FULL, busy_timeout 10 s; a connection per thread; \
             BEGIN IMMEDIATE ... COMMIT per transaction; SQLITE_BUSY retried"
        }
        "bdb" => {
            "DB_INIT_TXN|DB_INIT_LOCK|DB_INIT_LOG|DB_INIT_MPOOL|DB_THREAD, one btree, \
             64 MiB cache, DB_TXN_SYNC commits, DB_RMW reads, deadlock detection on every \
             conflict (set_lk_detect DB_LOCK_DEFAULT), DB_LOCK_DEADLOCK retried as ex_tpcb"
        }
        _ => "",
    }
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
fn db_dir(args: &TpcbArgs, engine: &str) -> PathBuf {
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
        for (round, &threads) in args.threads.iter().enumerate() {
            let mut row = measure_round(&*db, engine, args, scale, round as u32, threads.max(1))?;
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
        "lamina" => Ok(Box::new(lamina_engine::Lamina::open(dir)?)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Box::new(rocksdb_engine::Rocks::open(dir)?)),
        #[cfg(feature = "lmdb")]
        "lmdb" => Ok(Box::new(lmdb_engine::Lmdb::open(dir, scale)?)),
        #[cfg(feature = "sqlite")]
        "sqlite" => Ok(Box::new(sqlite_engine::Sqlite::open(dir)?)),
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

/// Runs `threads` threads of transactions for `--seconds`.
fn measure_round(
    db: &dyn Engine,
    engine: &str,
    args: &TpcbArgs,
    scale: Scale,
    round: u32,
    threads: usize,
) -> Result<Row, String> {
    let limit = Duration::try_from_secs_f64(args.seconds.max(0.0)).unwrap_or(Duration::ZERO);
    let txns = AtomicU64::new(0);
    let conflicts = AtomicU64::new(0);
    let retried = AtomicU64::new(0);
    let fsyncs0 = db.fsyncs();
    let written0 = measure::write_bytes();
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
    let written = match (written0, measure::write_bytes()) {
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

/// The Markdown: header, settings, the table, the ratios against the targets.
fn render(
    args: &TpcbArgs,
    scale: Scale,
    rows: &[Row],
    testfile: &[(String, f64)],
    notes: &[String],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# TPC-B (ex_tpcb's transaction), durable commits\n\n\
         {} branches, {} tellers, {} accounts (100-byte rows, balances from 0); one \
         transaction: read+update account, branch, teller (random each, as ex_tpcb), put a \
         history row, commit durably; {} s per thread count; conflicts retried.\n",
        scale.branches, scale.tellers, scale.accounts, args.seconds
    );
    for e in &args.engines {
        if rows.iter().any(|r| &r.engine == e) {
            let _ = writeln!(s, "- **{}**: {}", title(e), describe(e));
        }
    }
    rows_table(&mut s, rows, testfile);
    if !testfile.is_empty() {
        let _ = writeln!(s, "\ntestfile (write 256 B + lseek + fsync, {} s runs before the first engine and after each; each engine against the mean of the two around it):", args.seconds);
        for (e, r) in testfile {
            let _ = writeln!(s, "- around {e}: {r:.0} fsyncs/s");
        }
    }
    targets(&mut s, args, rows, testfile);
    if !notes.is_empty() {
        let _ = writeln!(s, "\nNotes:");
        for n in notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// testfile's rate around `engine`'s run: the mean of the runs before and
/// after it.
fn testfile_around(testfile: &[(String, f64)], engine: &str) -> Option<f64> {
    testfile.iter().find(|(n, _)| n == engine).map(|(_, r)| *r)
}

/// The table: a line per engine and thread count.
fn rows_table(s: &mut String, rows: &[Row], testfile: &[(String, f64)]) {
    let _ = writeln!(
        s,
        "\n| engine | threads | txn/s | conflicts/txn | retried/txn | fsyncs/txn | written B/txn | x testfile | invariant |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for r in rows {
        let fs = r
            .fsyncs
            .map_or("n/a".into(), |f| format!("{:.3}", r.per_txn(f)));
        let wr = r
            .written
            .map_or("n/a".into(), |w| format!("{:.0}", r.per_txn(w)));
        let x = testfile_around(testfile, &r.engine)
            .map_or("n/a".into(), |t| format!("{:.2}", r.rate() / t));
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.3} | {:.3} | {fs} | {wr} | {x} | {} |",
            r.engine,
            r.threads,
            r.rate(),
            r.per_txn(r.conflicts),
            r.per_txn(r.retried),
            r.invariant
        );
    }
}

/// lamina's targets, each with this run's figure: against testfile at one
/// thread, its scaling to 16 threads, and the best peer at each thread count.
fn targets(s: &mut String, args: &TpcbArgs, rows: &[Row], testfile: &[(String, f64)]) {
    let _ = writeln!(s, "\nTargets:");
    let lam = |t: usize| rows.iter().find(|r| r.engine == "lamina" && r.threads == t);
    if let (Some(one), Some(t)) = (lam(1), testfile_around(testfile, "lamina")) {
        let x = one.rate() / t;
        let _ = writeln!(
            s,
            "- lamina at 1 thread / testfile: {x:.2} (target >= 0.9: {})",
            if x >= 0.9 { "met" } else { "NOT met" }
        );
    }
    if let (Some(one), Some(sixteen)) = (lam(1), lam(16)) {
        let x = sixteen.rate() / one.rate().max(f64::MIN_POSITIVE);
        let _ = writeln!(
            s,
            "- lamina at 16 threads / at 1 thread: {x:.2} (target >= 8: {})",
            if x >= 8.0 { "met" } else { "NOT met" }
        );
    }
    for &t in &args.threads {
        let best = rows
            .iter()
            .filter(|r| r.engine != "lamina" && r.threads == t)
            .max_by(|a, b| a.rate().total_cmp(&b.rate()));
        if let (Some(l), Some(b)) = (lam(t), best) {
            let x = l.rate() / b.rate().max(f64::MIN_POSITIVE);
            let _ = writeln!(
                s,
                "- {t} threads: lamina / best peer ({}): {x:.2} (target >= 1: {})",
                b.engine,
                if x >= 1.0 { "met" } else { "NOT met" }
            );
        }
    }
}

/// Writes tpcb.md and tpcb.csv (replaced); bench/plot_tpcb.py draws the
/// chart from the CSV (`make bench-tpcb` runs it).
fn save(out: &Path, rows: &[Row], testfile: &[(String, f64)], table: &str) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let md = out.join("tpcb.md");
    std::fs::write(&md, table).map_err(|e| format!("{}: {e}", md.display()))?;
    let csv_path = out.join("tpcb.csv");
    let _ = std::fs::remove_file(&csv_path);
    let mut csv = crate::Csv::open(
        Some(&csv_path),
        &[
            "engine",
            "threads",
            "txns",
            "seconds",
            "txns_per_s",
            "conflicts",
            "retried",
            "fsyncs",
            "written_bytes",
            "testfile_ops_per_s",
            "invariant",
        ],
    )?;
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    for r in rows {
        let tf = testfile
            .iter()
            .find(|(e, _)| *e == r.engine)
            .map_or(String::new(), |(_, t)| format!("{t:.0}"));
        csv.row(&[
            r.engine.clone(),
            r.threads.to_string(),
            r.txns.to_string(),
            format!("{:.6}", r.secs),
            format!("{:.1}", r.rate()),
            r.conflicts.to_string(),
            r.retried.to_string(),
            opt(r.fsyncs),
            opt(r.written),
            tf,
            r.invariant.clone(),
        ])?;
    }
    eprintln!(
        "lamina-bench tpcb: wrote {} and {}",
        md.display(),
        csv_path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_line_round_trips() {
        let r = Row {
            engine: "lamina".into(),
            threads: 4,
            txns: 100,
            secs: 1.5,
            conflicts: 3,
            retried: 2,
            fsyncs: Some(40),
            written: None,
            invariant: "ok".into(),
        };
        assert_eq!(Row::from_line(&r.to_line()), Some(r));
    }

    #[test]
    fn draws_stay_in_range() {
        let scale = Scale {
            branches: 2,
            tellers: 20,
            accounts: 50,
        };
        let mut d = Draws::new(1, scale, 0, 0);
        for _ in 0..1000 {
            let t = d.next_txn();
            assert!(t.delta.abs() <= 999_999);
            assert!(
                u32::from_be_bytes([t.account[1], t.account[2], t.account[3], t.account[4]]) < 50
            );
            assert!(u32::from_be_bytes([t.branch[1], t.branch[2], t.branch[3], t.branch[4]]) < 2);
        }
    }
}
