//! `lamina-bench insert`: TokuDB's db-insert.
//!
//! 8-byte big-endian keys, the value the key's 8 bytes (as `bench/tokudb_bdb.c`
//! writes them). Each batch is 2^20 serial inserts (key = i × 64, i continuing
//! across batches) then 2^20 random inserts (random 64-bit keys, xorshift64*
//! seeded as the C program seeds it). Without `-x` the puts go to the engine
//! in batches of [`PUTS_PER_WRITE`] with `Durability::None`, as Berkeley DB
//! without transactions leaves them in its cache; with `-x` every 16,384 puts
//! are one `Durability::Sync` batch. Timed from before the first put to after
//! `close`; per batch the original program's columns, then `Shutdown` and
//! `Total time`.

use crate::engine::{Batch, Db, Durability};
use crate::progress::{Progress, Total};
use crate::Ctx;
use crate::{
    files_line, fresh_db, options, parse_size, rate, Common, Csv, Workdir, XorShift64Star,
};
use std::path::Path;
use std::time::Instant;

/// Puts per engine write without `-x`.
pub const PUTS_PER_WRITE: usize = 1024;
/// Puts per durable commit with `-x` (the original program's 2^14).
pub const PUTS_PER_TRANSACTION: usize = 1 << 14;
/// Distance between serial keys.
const SERIAL_SPACING: u64 = 64;

/// The columns of the CSV (those of `bench/tokudb_bdb.py insert`).
pub const CSV_HEADER: [&str; 9] = [
    "engine",
    "batch",
    "serial_s",
    "serial_per_s",
    "random_s",
    "random_per_s",
    "cumulative_s",
    "cumulative_per_s",
    "memlimit",
];

/// Arguments of `lamina-bench insert`.
#[derive(Debug, Clone, clap::Args)]
pub struct InsertArgs {
    /// Batches, each 2^20 serial then 2^20 random inserts.
    #[arg(short = 'n', value_name = "BATCHES", default_value_t = 4)]
    pub batches: u64,
    /// Transactions: a durable (Sync) commit every 16,384 puts.
    #[arg(short = 'x')]
    pub transactions: bool,
    /// Block cache in bytes (suffixes K, M, G). Default: derived from the
    /// memory budget (`--memory-budget`), memtables charged to it.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub cache_size: Option<u64>,
    /// Memtable size in bytes (default: the engine's).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub memtable_size: Option<u64>,
    /// Seed of the random keys (the C program's --seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Inserts per phase instead of 2^20 (for tests).
    #[arg(long, hide = true, default_value_t = 1 << 20)]
    pub records_per_batch: u64,
    #[command(flatten)]
    pub common: Common,
}

/// Runs `lamina-bench insert`.
pub fn run(args: InsertArgs, ctx: &Ctx) -> Result<(), String> {
    let dir = Workdir::new(&args.common, "insert");
    insert(&args, dir.path(), ctx)?;
    println!("{}", files_line(dir.path()));
    Ok(())
}

/// Collects puts into engine writes of a fixed size.
struct Writer<'d> {
    db: &'d Db,
    batch: Batch,
    per_write: usize,
    durability: Durability,
}

impl<'d> Writer<'d> {
    /// Engine writes of [`PUTS_PER_WRITE`] puts, or with `transactions`
    /// durable commits of [`PUTS_PER_TRANSACTION`].
    fn new(db: &'d Db, transactions: bool) -> Writer<'d> {
        Writer {
            db,
            batch: Batch::new(),
            per_write: if transactions {
                PUTS_PER_TRANSACTION
            } else {
                PUTS_PER_WRITE
            },
            durability: if transactions {
                Durability::Sync
            } else {
                Durability::None
            },
        }
    }

    fn put(&mut self, key: u64) -> Result<(), String> {
        let k = key.to_be_bytes();
        self.batch.put(&k, &k);
        if self.batch.len() >= self.per_write {
            self.write()?;
        }
        Ok(())
    }

    fn write(&mut self) -> Result<(), String> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let b = std::mem::take(&mut self.batch);
        self.db
            .write_with(b, self.durability)
            .map_err(|e| format!("write: {e}"))
    }
}

/// Runs db-insert into a new database at `path`, printing its lines.
pub fn insert(args: &InsertArgs, path: &Path, ctx: &Ctx) -> Result<(), String> {
    let per = args.records_per_batch.max(1);
    let mut csv = Csv::open(args.common.csv.as_deref(), &CSV_HEADER)?;
    let db = fresh_db(path, options(args.cache_size, args.memtable_size)?)?;
    println!(
        "serial and random insertions of {per} per batch{} [lamina {} in Rust, {}, \
         random keys 64-bit]",
        if args.transactions {
            " (with transactions)"
        } else {
            ""
        },
        crate::VERSION,
        crate::cache_note(args.cache_size)
    );
    let total = 2 * per * args.batches;
    let mut progress = Progress::new(
        "insert",
        Total::Records(total),
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let mut w = Writer::new(&db, args.transactions);
    let mut rng = XorShift64Star::new(args.seed);
    let note = &args.common.memlimit_note;
    let start = Instant::now();
    for it in 0..args.batches {
        let t1 = Instant::now();
        let serial = (0..per).map(|i| (it * per + i) * SERIAL_SPACING);
        put_all(&mut w, &mut progress, serial)?;
        let s_secs = t1.elapsed().as_secs_f64();
        let t1 = Instant::now();
        put_all(&mut w, &mut progress, (0..per).map(|_| rng.next_u64()))?;
        let t2 = Instant::now();
        let r_secs = t2.duration_since(t1).as_secs_f64();
        let cum = t2.duration_since(start).as_secs_f64();
        let done = 2 * per * (it + 1);
        progress.suspend(|| {
            println!(
                "serial {s_secs:9.6}s {:8.0}/s    random {r_secs:9.6}s {:8.0}/s    \
                 cumulative {cum:9.6}s {:8.0}/s",
                rate(per, s_secs),
                rate(per, r_secs),
                rate(done, cum)
            )
        });
        csv.row(&[
            "lamina".into(),
            it.to_string(),
            format!("{s_secs:.6}"),
            format!("{:.0}", rate(per, s_secs)),
            format!("{r_secs:.6}"),
            format!("{:.0}", rate(per, r_secs)),
            format!("{cum:.6}"),
            format!("{:.0}", rate(done, cum)),
            note.clone(),
        ])?;
    }
    drop(w);
    let t2 = Instant::now();
    db.close().map_err(|e| format!("close: {e}"))?;
    let t3 = Instant::now();
    progress.finish();
    let shutdown = t3.duration_since(t2).as_secs_f64();
    let elapsed = t3.duration_since(start).as_secs_f64();
    println!("Shutdown {shutdown:9.6}s");
    println!(
        "Total time {elapsed:9.6}s for {total} insertions = {:8.0}/s",
        rate(total, elapsed)
    );
    closing_rows(&mut csv, shutdown, elapsed, total, note)
}

/// Puts `keys`, then writes what the writer still holds.
fn put_all(
    w: &mut Writer<'_>,
    progress: &mut Progress,
    keys: impl Iterator<Item = u64>,
) -> Result<(), String> {
    for key in keys {
        w.put(key)?;
        progress.add(1, 16);
    }
    w.write()
}

/// The CSV's last two rows: the seconds `close` took, and the whole run's
/// seconds and rate (`total` insertions).
fn closing_rows(
    csv: &mut Csv,
    shutdown: f64,
    elapsed: f64,
    total: u64,
    note: &str,
) -> Result<(), String> {
    let blank = String::new;
    csv.row(&[
        "lamina".into(),
        "shutdown".into(),
        blank(),
        blank(),
        blank(),
        blank(),
        format!("{shutdown:.6}"),
        blank(),
        note.to_string(),
    ])?;
    csv.row(&[
        "lamina".into(),
        "total".into(),
        blank(),
        blank(),
        blank(),
        blank(),
        format!("{elapsed:.6}"),
        format!("{:.0}", rate(total, elapsed)),
        note.to_string(),
    ])
}
