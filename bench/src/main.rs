//! `lamina-bench WORKLOAD [OPTIONS]`: lamina's benchmark workloads, a
//! package of their own (outside the workspace `make test` builds), as
//! bench/README.md defines them: `numbers`, `insert`, `scan`, `update`,
//! `multi`, `commit`, `blocksize` (lamina alone, beside the published
//! figures of the programs they come from), `engines` (lamina beside
//! RocksDB, LMDB, redb and fjall, all built here in release mode), `tpcb`
//! (the TPC-B transaction beside RocksDB, LMDB, SQLite and Berkeley DB,
//! durable, at 1 to 16 threads), `btree-rows` (the rows of redb's engine
//! comparison for lamina, RocksDB, LMDB and redb), `scale-reads` (random
//! point lookups in data far larger than the reading process's memory, for
//! lamina, RocksDB, LMDB and redb, beside the device's own limit), and what
//! they share (where the database goes, CSV output, the original programs'
//! random number generators, sizes on disk).
//!
//! Every workload prints its table on standard output (the original
//! program's columns where there is one) and progress on standard error.
//! The global options are the `lamina` tool's (`-q`, `--memory-budget`,
//! `--option`, `--progress-interval`), read by the same code
//! (`lamina_cli`).

/// mimalloc, as in the `lamina` tool: the engine allocates one small block
/// per memtable entry, and glibc's allocator costs a tenth of a bulk load's
/// time in free-list upkeep.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod blocksize;
mod btree_rows;
mod commit;
mod engines;
mod insert;
mod meter;
mod multi;
mod numbers;
mod scale_reads;
mod scan;
mod tpcb;
mod update;

// The `lamina` tool's modules this package shares, under the paths the
// workloads use (`crate::engine`, `crate::progress`).
use lamina_cli::{engine, progress, size};

use clap::Parser;
use engine::{Db, Options};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// lamina-bench: lamina's benchmark workloads (bench/README.md) and the
/// engine-level comparison with release-built peers.
#[derive(Debug, Parser)]
#[command(name = "lamina-bench", version)]
struct Cli {
    #[command(flatten)]
    global: lamina_cli::global::GlobalArgs,
    /// The workload.
    #[command(subcommand)]
    workload: Workload,
}

/// The workloads.
#[derive(Debug, clap::Subcommand)]
enum Workload {
    /// The numbers load (numbers in English) at 2^17, 2^18, ... records, generator and shell paths.
    Numbers(numbers::NumbersArgs),
    /// TokuDB's db-insert: per batch 2^20 serial then 2^20 random 8-byte keys.
    #[command(visible_alias = "db-insert")]
    Insert(insert::InsertArgs),
    /// TokuDB's db-scan: every row in key order, twice, in one snapshot.
    #[command(visible_alias = "db-scan")]
    Scan(scan::ScanArgs),
    /// TokuDB's db-update: blind +1 merges on random keys, 100 per durable commit.
    #[command(visible_alias = "db-update")]
    Update(update::UpdateArgs),
    /// TokuDB's db-insert-multiple: a row and three secondary keys per row, 1000 rows per durable batch.
    #[command(visible_aliases = ["db-insert-multiple", "insert-multiple"])]
    Multi(multi::MultiArgs),
    /// Durable commits: testfile (write + lseek + fsync), then Sync commits at 1..32 threads.
    #[command(visible_alias = "commits")]
    Commit(commit::CommitArgs),
    /// The block-size question: the numbers load and random point reads at block sizes 4K to 64K.
    Blocksize(blocksize::BlocksizeArgs),
    /// lamina, RocksDB, LMDB, redb and fjall on db_bench's workloads (fillseq,
    /// fillrandom, overwrite, readrandom, readseq, deleterandom), one driver.
    Engines(engines::EnginesArgs),
    /// TPC-B (ex_tpcb's transaction) at 1..16 threads, durable commits: lamina beside
    /// RocksDB's TransactionDB, LMDB, SQLite (WAL) and Berkeley DB; invariant checked.
    Tpcb(tpcb::TpcbArgs),
    /// The rows of redb's engine comparison (bulk load, writes, reads at 1 to 32 threads,
    /// range reads, removals, retain, extract_if, pop, sizes) for lamina, RocksDB, LMDB and redb.
    BtreeRows(btree_rows::BtreeRowsArgs),
    /// Random point lookups in data far larger than the memory of the reading process
    /// (1 thread, 16 threads, batches of 64; found and absent keys) for lamina, RocksDB,
    /// LMDB and redb, beside fio's random 4 KiB reads of the same device.
    ScaleReads(scale_reads::ScaleReadsArgs),
}

/// What every workload gets from the global options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ctx {
    /// How to show progress.
    pub progress: progress::Settings,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    progress::set_program("lamina-bench");
    let result = match cli.global.apply() {
        Ok(progress) => run(cli.workload, &Ctx { progress }),
        Err(e) => Err(e.message),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            eprintln!("lamina-bench: {m}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a workload.
fn run(workload: Workload, ctx: &Ctx) -> Result<(), String> {
    match workload {
        Workload::Numbers(a) => numbers::run(a, ctx),
        Workload::Insert(a) => insert::run(a, ctx),
        Workload::Scan(a) => scan::run(a, ctx),
        Workload::Update(a) => update::run(a, ctx),
        Workload::Multi(a) => multi::run(a, ctx),
        Workload::Commit(a) => commit::run(a, ctx),
        Workload::Blocksize(a) => blocksize::run(a, ctx),
        Workload::Engines(a) => engines::run(a, ctx),
        Workload::Tpcb(a) => tpcb::run(a, ctx),
        Workload::BtreeRows(a) => btree_rows::run(a, ctx),
        Workload::ScaleReads(a) => scale_reads::run(a, ctx),
    }
}

/// Options every workload takes.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// Where the database goes (for numbers and blocksize: a directory holding
    /// one database per run). An existing lamina database there is replaced
    /// (scan uses it). Default: a fresh directory under the temporary
    /// directory, removed afterwards unless --keep.
    #[arg(long, visible_alias = "dir", value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Keep the temporary directory (a --db directory is always kept).
    #[arg(long)]
    pub keep: bool,
    /// Append the table's rows to this CSV file (a header first if it is new).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// The memory cap in force (e.g. 512M), recorded in the CSV's memlimit column.
    #[arg(
        long,
        value_name = "NOTE",
        default_value = "",
        hide_default_value = true
    )]
    pub memlimit_note: String,
}

/// lamina's version, for the header lines.
pub const VERSION: &str = lamina_cli::VERSION;

/// The directory a workload works in; a temporary one is removed on drop
/// unless kept.
pub struct Workdir {
    path: PathBuf,
    remove: bool,
}

impl Workdir {
    /// `--db DIR`, or a new path under the temporary directory (not created).
    pub fn new(common: &Common, workload: &str) -> Workdir {
        match &common.db {
            Some(p) => Workdir {
                path: p.clone(),
                remove: false,
            },
            None => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.subsec_nanos())
                    .unwrap_or(0);
                let name = format!("lamina-bench-{workload}.{}.{nanos:09}", std::process::id());
                Workdir {
                    path: std::env::temp_dir().join(name),
                    remove: !common.keep,
                }
            }
        }
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the directory is removed at the end.
    pub fn temporary(&self) -> bool {
        self.remove
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        if self.remove {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// The cache a benchmark's header names: the size given, or the budget's.
pub fn cache_note(cache_size: Option<u64>) -> String {
    match cache_size {
        Some(c) => format!("cache {c} B"),
        None => "cache from the memory budget".to_string(),
    }
}

/// The CLI's options (which honour `LAMINA_INJECT_FAULT`) with a cache and
/// memtable size where given.
pub fn options(cache_size: Option<u64>, memtable_size: Option<u64>) -> Result<Options, String> {
    let mut opts = engine::options().map_err(|e| e.message)?;
    if let Some(c) = cache_size {
        opts.cache_size = usize::try_from(c).map_err(|_| format!("cache size {c} too large"))?;
    }
    if let Some(m) = memtable_size {
        opts.memtable_size =
            usize::try_from(m).map_err(|_| format!("memtable size {m} too large"))?;
    }
    Ok(opts)
}

/// Opens a new, empty database at `path`, first removing a lamina database
/// there (anything else that is not an empty directory is refused).
pub fn fresh_db(path: &Path, opts: Options) -> Result<Db, String> {
    clear_db(path, &opts)?;
    let mut opts = opts;
    opts.create_if_missing = true;
    Db::open(path, opts).map_err(|e| format!("{}: {e}", path.display()))
}

/// Removes the lamina database at `path`, if any (anything else that is not
/// an empty directory is refused).
pub fn clear_db(path: &Path, opts: &Options) -> Result<(), String> {
    if path.exists() {
        let empty = fs::read_dir(path)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !empty {
            Db::destroy(path, opts)
                .map_err(|e| format!("not replacing {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Total bytes of the files under `path`.
pub fn dir_size(path: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(path) else {
        return fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

/// The `files:` line printed after a run.
pub fn files_line(path: &Path) -> String {
    format!(
        "files: {:.1} MB in {}",
        dir_size(path) as f64 / 1e6,
        path.display()
    )
}

/// `n / secs`, 0 for no time.
pub fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// A byte count: `268435456`, `256M`, `1G`, `64K` (the `lamina` tool's parser).
pub use size::parse_size;

/// Rows appended to a CSV file; a header is written first when the file is
/// new or empty. Each row is flushed, so a run stopped early keeps its rows.
pub struct Csv {
    out: Option<fs::File>,
    path: PathBuf,
}

impl Csv {
    /// Appends to `path` (nothing when `None`).
    pub fn open(path: Option<&Path>, header: &[&str]) -> Result<Csv, String> {
        let Some(path) = path else {
            return Ok(Csv {
                out: None,
                path: PathBuf::new(),
            });
        };
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut csv = Csv {
            out: None,
            path: path.to_path_buf(),
        };
        let new = f.metadata().map(|m| m.len() == 0).unwrap_or(true);
        if new {
            let line = header.join(",") + "\n";
            f.write_all(line.as_bytes())
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        csv.out = Some(f);
        Ok(csv)
    }

    /// Appends one row.
    pub fn row(&mut self, fields: &[String]) -> Result<(), String> {
        let Some(f) = &mut self.out else {
            return Ok(());
        };
        let quoted: Vec<String> = fields
            .iter()
            .map(|v| {
                if v.contains([',', '"', '\n']) {
                    format!("\"{}\"", v.replace('"', "\"\""))
                } else {
                    v.clone()
                }
            })
            .collect();
        let line = quoted.join(",") + "\n";
        f.write_all(line.as_bytes())
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

/// xorshift64*, seeded as `bench/tokudb_bdb.c` seeds it, so that `--seed S`
/// draws the C program's random keys.
pub struct XorShift64Star(u64);

impl XorShift64Star {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> XorShift64Star {
        XorShift64Star(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1))
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// glibc's `random()` after `srandom(seed)` (the TYPE_3 additive generator),
/// the generator of TokuDB's C example programs.
pub struct GlibcRandom {
    state: [u32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRandom {
    /// `srandom(seed)`.
    pub fn new(seed: u32) -> GlibcRandom {
        let mut state = [0u32; 31];
        let mut word = i64::from(if seed == 0 { 1 } else { seed as i32 });
        for (i, s) in state.iter_mut().enumerate() {
            if i > 0 {
                let hi = word / 127_773;
                let lo = word % 127_773;
                word = 16_807 * lo - 2_836 * hi;
                if word < 0 {
                    word += 2_147_483_647;
                }
            }
            *s = word as u32;
        }
        let mut g = GlibcRandom {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            g.next_u31();
        }
        g
    }

    /// `random()`: 31 bits.
    pub fn next_u31(&mut self) -> u32 {
        let r = self.state.get(self.rear).copied().unwrap_or(0);
        let mut out = 0;
        if let Some(f) = self.state.get_mut(self.front) {
            *f = f.wrapping_add(r);
            out = *f >> 1;
        }
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_random_sequence() {
        // srandom(1); random() x5 with glibc.
        let mut g = GlibcRandom::new(1);
        let got: Vec<u32> = (0..5).map(|_| g.next_u31()).collect();
        assert_eq!(
            got,
            [
                1_804_289_383,
                846_930_886,
                1_681_692_777,
                1_714_636_915,
                1_957_747_793
            ]
        );
    }
}
