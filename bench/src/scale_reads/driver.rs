//! The driver of `lamina-bench scale-reads`: its options; the work
//! directory; the loads, one child process per engine (this program again
//! with `--child ENGINE --phase load`), which keep a database of the same
//! data set from an earlier run; `fio` on the same file system; the
//! lookups, one child per engine started under `bench/memlimit` after the
//! page cache is dropped (`--phase read`); and the lines the children
//! print and the parent reads.

use super::data::{Data, DataSet};
use super::device::{self, BlockDevice, Fio};
use super::lookups::{self, Plan};
use super::{report, Engine, Load, Measured, Mode, MODES, STREAMS};
use crate::engines::measure::disk_usage;
use crate::engines::peers::{self, Launch};
use crate::progress::{Progress, Total};
use crate::{parse_size, Ctx};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every engine, in the default order.
pub const ALL: [&str; 5] = ["lamina", "rocksdb", "lmdb", "redb", "bdb"];
/// Records of the random data set by default.
const RANDOM_KEYS: u64 = 100_000_000;
/// Records of the numbers data set by default (the numbers load's).
const NUMBERS_KEYS: u64 = 125_000_000;
/// The smallest file fio reads.
const MIN_FIO_SIZE: u64 = 64 << 20;

/// Arguments of `lamina-bench scale-reads`.
#[derive(Debug, Clone, clap::Args)]
pub struct ScaleReadsArgs {
    /// Engines, in the order they run: lamina, rocksdb, lmdb, redb, bdb.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        default_value = "lamina,rocksdb,lmdb,redb,bdb"
    )]
    pub engines: Vec<String>,
    /// The data set: `random` (keys of 16 random bytes, 100-byte values)
    /// or `numbers` (the numbers load's records).
    #[arg(long, value_enum, default_value_t = Data::Random)]
    pub data: Data,
    /// Records loaded. Default: 100,000,000 random keys, or 125,000,000
    /// numbers.
    #[arg(long, value_name = "N")]
    pub keys: Option<u64>,
    /// The memory each engine's lookups may use, page cache included
    /// (their process runs under `bench/memlimit`), e.g. 512M.
    #[arg(long, value_name = "BYTES", default_value = "512M", value_parser = parse_size)]
    pub memory: u64,
    /// The share of --memory an engine's own cache is given: lamina's
    /// memory_budget, RocksDB's block cache, redb's cache_size (LMDB has
    /// none: its pages are the page cache's).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.25)]
    pub cache_share: f64,
    /// Seconds each mode runs, for found keys and again for absent ones.
    #[arg(long, value_name = "S", default_value_t = 30)]
    pub seconds: u64,
    /// Threads of the multi-threaded mode.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub threads: usize,
    /// Keys per call of the batched mode.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub batch: usize,
    /// The work directory: a database per engine and fio's file. Kept
    /// afterwards, and an engine's database of the same data set is used
    /// again by the next run. Default: a new directory under the temporary
    /// directory, removed afterwards.
    #[arg(long, visible_alias = "db", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Load every engine again, even where the work directory holds its
    /// database of this data set.
    #[arg(long)]
    pub reload: bool,
    /// Run the lookups without the memory cap (where no cgroup can be
    /// made): a smoke run, not the benchmark.
    #[arg(long)]
    pub no_memlimit: bool,
    /// Leave the page cache as it is before each engine's lookups.
    #[arg(long)]
    pub keep_page_cache: bool,
    /// Load one engine, run its lookups and remove its database before the
    /// next engine loads: for a work directory with room for one engine's
    /// database at a time. fio then runs first.
    #[arg(long)]
    pub one_by_one: bool,
    /// Bytes of the file fio reads. Default: the size of the largest
    /// database (with --one-by-one: the data set's bytes of keys and
    /// values), at least 64 MiB.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub fio_size: Option<u64>,
    /// Where the table (Markdown) and the CSV go. Default:
    /// `$BENCH_OUT/scale-reads`, or target/bench-results/scale-reads.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run one engine's phase in this process (how the driver runs each
    /// engine in a process of its own).
    #[arg(long, value_name = "ENGINE", hide = true)]
    pub child: Option<String>,
    /// The phase a child runs.
    #[arg(long, value_enum, hide = true)]
    pub phase: Option<Phase>,
    /// The work directory the driver chose, given to its children.
    #[arg(long, value_name = "DIR", hide = true)]
    pub work: Option<PathBuf>,
}

/// What a child process does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Phase {
    /// Loads the engine's database (unless the work directory holds it).
    Load,
    /// Opens it and runs the lookups.
    Read,
}

impl ScaleReadsArgs {
    /// N, the records of the data set.
    pub fn keys(&self) -> u64 {
        self.keys.unwrap_or(match self.data {
            Data::Random => RANDOM_KEYS,
            Data::Numbers => NUMBERS_KEYS,
        })
    }

    /// Bytes of an engine's own cache.
    pub fn cache_bytes(&self) -> usize {
        (self.memory as f64 * self.cache_share) as usize
    }
}

/// A line a child prints.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// An engine's database is there: loaded now (`secs`) or by an earlier
    /// run (`reused`), `bytes` on disk.
    Loaded {
        engine: String,
        secs: f64,
        bytes: u64,
        reused: bool,
    },
    /// An engine opened its database for the lookups in `secs`.
    Opened { engine: String, secs: f64 },
    /// What one mode measured.
    Row { engine: String, m: Measured },
}

fn opt_u64(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

impl Line {
    /// The line as a child prints it.
    pub fn to_line(&self) -> String {
        match self {
            Line::Loaded {
                engine,
                secs,
                bytes,
                reused,
            } => format!("loaded,{engine},{secs:.6},{bytes},{}", u8::from(*reused)),
            Line::Opened { engine, secs } => format!("opened,{engine},{secs:.6}"),
            Line::Row { engine, m } => format!(
                "row,{engine},{},{},{},{:.6},{},{},{},{},{}",
                m.mode.id(),
                m.stream.label(),
                m.lookups,
                m.secs,
                opt_u64(m.device_reads),
                opt_u64(m.read_bytes),
                m.p50_ns,
                m.p99_ns,
                m.wrong
            ),
        }
    }

    /// Reads a child's line; `None` for any other output.
    pub fn parse(line: &str) -> Option<Line> {
        let f: Vec<&str> = line.split(',').collect();
        match f.as_slice() {
            ["loaded", engine, secs, bytes, reused] => Some(Line::Loaded {
                engine: engine.to_string(),
                secs: secs.parse().ok()?,
                bytes: bytes.parse().ok()?,
                reused: *reused == "1",
            }),
            ["opened", engine, secs] => Some(Line::Opened {
                engine: engine.to_string(),
                secs: secs.parse().ok()?,
            }),
            ["row", engine, mode, stream, lookups, secs, reads, bytes, p50, p99, wrong] => {
                Some(Line::Row {
                    engine: engine.to_string(),
                    m: Measured {
                        mode: Mode::from_id(mode)?,
                        stream: STREAMS.into_iter().find(|s| s.label() == *stream)?,
                        lookups: lookups.parse().ok()?,
                        secs: secs.parse().ok()?,
                        device_reads: reads.parse().ok(),
                        read_bytes: bytes.parse().ok(),
                        p50_ns: p50.parse().ok()?,
                        p99_ns: p99.parse().ok()?,
                        wrong: wrong.parse().ok()?,
                    },
                })
            }
            _ => None,
        }
    }
}

/// Everything a run found, for the report.
pub struct Outcome {
    /// Every child's lines, in the order printed.
    pub lines: Vec<Line>,
    /// fio at queue depths 1 and 32, or why not.
    pub fio: Vec<Result<Fio, String>>,
    /// Bytes of fio's file.
    pub fio_size: u64,
    /// Whether the page cache was dropped before each engine's lookups.
    pub page_cache: Result<(), String>,
    /// Skipped or failed engines, wrong answers.
    pub notes: Vec<String>,
}

/// The work directory; a temporary one is removed on drop.
struct Work {
    path: PathBuf,
    remove: bool,
}

impl Work {
    /// `--dir`, kept afterwards, or a new directory under the temporary
    /// one, removed on drop; made if missing.
    fn new(args: &ScaleReadsArgs) -> Result<Work, String> {
        let work = match &args.dir {
            Some(d) => Work {
                path: d.clone(),
                remove: false,
            },
            None => Work {
                path: std::env::temp_dir()
                    .join(format!("lamina-bench-scale-reads.{}", std::process::id())),
                remove: true,
            },
        };
        std::fs::create_dir_all(&work.path).map_err(|e| format!("{}: {e}", work.path.display()))?;
        Ok(work)
    }

    /// The arguments that make a child run `phase` in this directory.
    fn child_args(&self, phase: &str) -> Vec<OsString> {
        vec![
            "--phase".into(),
            phase.into(),
            "--work".into(),
            self.path.clone().into(),
        ]
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// The output directory: `--out`, or `scale-reads` in `$BENCH_OUT` or in
/// target/bench-results.
fn out_dir(args: &ScaleReadsArgs) -> PathBuf {
    args.out.clone().unwrap_or_else(|| {
        std::env::var_os("BENCH_OUT")
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from("target/bench-results"), PathBuf::from)
            .join("scale-reads")
    })
}

/// `bench/memlimit`, or the program `LAMINA_MEMLIMIT` names.
fn memlimit() -> OsString {
    std::env::var_os("LAMINA_MEMLIMIT")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("memlimit")
                .into()
        })
}

fn check(args: &ScaleReadsArgs) -> Result<(), String> {
    if args.keys() == 0 {
        return Err("--keys 0: at least one record".to_string());
    }
    if args.seconds == 0 || args.threads == 0 || args.batch == 0 {
        return Err("--seconds, --threads and --batch: at least 1".to_string());
    }
    if !(args.cache_share > 0.0 && args.cache_share <= 1.0) {
        return Err(format!(
            "--cache-share {}: a fraction of --memory above 0, at most 1",
            args.cache_share
        ));
    }
    for e in &args.engines {
        if !ALL.contains(&e.as_str()) {
            return Err(format!("unknown engine {e}; these are: {}", ALL.join(", ")));
        }
    }
    Ok(())
}

/// Runs `lamina-bench scale-reads`.
pub fn run(args: ScaleReadsArgs, ctx: &Ctx) -> Result<(), String> {
    check(&args)?;
    if let Some(engine) = &args.child {
        let work = args.work.as_deref().ok_or("a child needs --work")?;
        let set = DataSet::new(args.data, args.keys());
        return match args.phase {
            Some(Phase::Load) => load_child(engine, work, &set, &args, ctx),
            Some(Phase::Read) => read_child(engine, work, &set, &args, ctx),
            None => Err("a child needs --phase".to_string()),
        };
    }
    let work = Work::new(&args)?;
    let mut notes = Vec::new();
    let (lines, fio, fio_size, page_cache) = if args.one_by_one {
        one_by_one(&args, &work, &mut notes)?
    } else {
        let mut lines = loads(&args, &work, &mut notes)?;
        let fio_size = args
            .fio_size
            .unwrap_or(largest_database(&lines).max(MIN_FIO_SIZE));
        let fio = device_limit(&args, &work, fio_size);
        let page_cache = lookups(&args, &work, &mut lines, &mut notes)?;
        (lines, fio, fio_size, page_cache)
    };
    notes.extend(wrong_answers(&lines, &args));

    let failed = notes.iter().any(|n| !n.contains("not in this build"));
    let outcome = Outcome {
        lines,
        fio,
        fio_size,
        page_cache,
        notes,
    };
    let md = report::render(&args, &outcome);
    print!("{md}");
    report::save(&out_dir(&args), &args, &outcome, &md)?;
    if failed {
        return Err(
            "some engines failed or answered wrongly; see the notes under the table".into(),
        );
    }
    Ok(())
}

/// What a run measured, before the report: the children's lines, fio at
/// each queue depth, the bytes of fio's file, and whether the page cache
/// was dropped before each engine's lookups.
type Measurements = (Vec<Line>, Vec<Result<Fio, String>>, u64, Result<(), String>);

/// fio first, then for each engine: its load, its lookups, and the removal
/// of its database (`--one-by-one`).
fn one_by_one(
    args: &ScaleReadsArgs,
    work: &Work,
    notes: &mut Vec<String>,
) -> Result<Measurements, String> {
    let set = DataSet::new(args.data, args.keys());
    let fio_size = args.fio_size.unwrap_or(set.max_bytes().max(MIN_FIO_SIZE));
    let fio = device_limit(args, work, fio_size);
    let (mut lines, mut page_cache) = (Vec::new(), Ok(()));
    for engine in &args.engines {
        let one = ScaleReadsArgs {
            engines: vec![engine.clone()],
            ..args.clone()
        };
        let mut got = loads(&one, work, notes)?;
        page_cache = page_cache.and(lookups(&one, work, &mut got, notes)?);
        lines.extend(got);
        let dir = work.path.join(engine);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let _ = std::fs::remove_file(marker(&work.path, engine));
    }
    Ok((lines, fio, fio_size, page_cache))
}

/// Loads every engine's database, each in a child process; the lines they
/// printed. Skipped and failed engines go to `notes`.
fn loads(args: &ScaleReadsArgs, work: &Work, notes: &mut Vec<String>) -> Result<Vec<Line>, String> {
    let load = Launch {
        wrapper: Vec::new(),
        args: work.child_args("load"),
    };
    let loads = peers::run_children_with(
        "scale-reads load",
        "load",
        &args.engines,
        &load,
        Line::parse,
    )?;
    notes.extend(loads.skipped);
    notes.extend(loads.failed);
    Ok(loads.rows)
}

/// Bytes on disk of the largest database loaded (0 for none).
fn largest_database(lines: &[Line]) -> u64 {
    lines
        .iter()
        .filter_map(|l| match l {
            Line::Loaded { bytes, .. } => Some(*bytes),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// fio at queue depths 1 and 32 on a file of `size` bytes in the work
/// directory, removed afterwards.
fn device_limit(args: &ScaleReadsArgs, work: &Work, size: u64) -> Vec<Result<Fio, String>> {
    let fio_file = work.path.join("fio.dat");
    let fio = [1, 32]
        .into_iter()
        .map(|depth| {
            eprintln!("lamina-bench scale-reads: fio, random 4 KiB reads at queue depth {depth}");
            device::fio(&fio_file, size, depth, args.seconds)
        })
        .collect();
    let _ = std::fs::remove_file(&fio_file);
    fio
}

/// Runs the lookups of every engine that loaded (by `lines`), one child
/// under the memory cap after another, the page cache dropped before each;
/// their lines go to `lines`, failed engines to `notes`. Whether the page
/// cache was dropped before each, or why not.
fn lookups(
    args: &ScaleReadsArgs,
    work: &Work,
    lines: &mut Vec<Line>,
    notes: &mut Vec<String>,
) -> Result<Result<(), String>, String> {
    let loaded: Vec<String> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Loaded { engine, .. } => Some(engine.clone()),
            _ => None,
        })
        .collect();
    let mut page_cache = Ok(());
    let read = Launch {
        wrapper: if args.no_memlimit {
            Vec::new()
        } else {
            vec![memlimit(), args.memory.to_string().into()]
        },
        args: work.child_args("read"),
    };
    for engine in &loaded {
        if !args.keep_page_cache {
            page_cache = page_cache.and(device::drop_page_cache());
        }
        let reads = peers::run_children_with(
            "scale-reads lookups",
            "mode",
            std::slice::from_ref(engine),
            &read,
            Line::parse,
        )?;
        notes.extend(reads.failed);
        lines.extend(reads.rows);
    }
    if args.keep_page_cache {
        page_cache = Err("the page cache was left as it was (`--keep-page-cache`)".to_string());
    }
    Ok(page_cache)
}

/// A note for every mode with wrong answers.
fn wrong_answers(lines: &[Line], args: &ScaleReadsArgs) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| match l {
            Line::Row { engine, m } if m.wrong > 0 => Some(format!(
                "{engine}: {} wrong answers of {} in {}, {} keys",
                m.wrong,
                m.lookups,
                report::mode_title(m.mode, args),
                m.stream.label()
            )),
            _ => None,
        })
        .collect()
}

/// The file that says which data set an engine's database in the work
/// directory holds.
fn marker(work: &Path, engine: &str) -> PathBuf {
    work.join(format!("{engine}.loaded"))
}

/// What the marker holds for this run's data set.
fn marker_text(set: &DataSet) -> String {
    let data = match set.data() {
        Data::Random => "random",
        Data::Numbers => "numbers",
    };
    format!("{data} {}\n", set.keys())
}

/// Loads `engine`'s database in the work directory, unless it holds one
/// of this data set already (and no `--reload`).
fn load_child(
    engine: &str,
    work: &Path,
    set: &DataSet,
    args: &ScaleReadsArgs,
    ctx: &Ctx,
) -> Result<(), String> {
    let dir = work.join(engine);
    let mark = marker(work, engine);
    let want = marker_text(set);
    let have = std::fs::read_to_string(&mark).unwrap_or_default();
    if !args.reload && have == want && dir.is_dir() {
        let line = Line::Loaded {
            engine: engine.to_string(),
            secs: 0.0,
            bytes: disk_usage(&dir),
            reused: true,
        };
        println!("{}", line.to_line());
        return Ok(());
    }
    let _ = std::fs::remove_file(&mark);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut progress = Progress::new(
        format!("scale-reads {engine} load"),
        Total::Records(set.keys()),
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let t0 = Instant::now();
    let mut load = Load {
        set,
        progress: &mut progress,
    };
    build(engine, &dir, &mut load)?;
    let secs = t0.elapsed().as_secs_f64();
    progress.finish();
    std::fs::write(&mark, want).map_err(|e| format!("{}: {e}", mark.display()))?;
    let line = Line::Loaded {
        engine: engine.to_string(),
        secs,
        bytes: disk_usage(&dir),
        reused: false,
    };
    println!("{}", line.to_line());
    Ok(())
}

/// Loads `engine`'s database in `dir`.
fn build(engine: &str, dir: &Path, load: &mut Load) -> Result<(), String> {
    match engine {
        "lamina" => super::lamina_engine::build(dir, load),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => super::rocksdb_engine::build(dir, load),
        #[cfg(feature = "lmdb")]
        "lmdb" => super::lmdb_engine::build(dir, load),
        #[cfg(feature = "redb")]
        "redb" => super::redb_engine::build(dir, load),
        #[cfg(bdb_linked)]
        "bdb" => super::bdb_engine::build(dir, load),
        other => Err(format!("{other}: not in this build")),
    }
}

/// Opens `engine`'s database in `dir` for the lookups, its own cache
/// `cache` bytes.
fn open(engine: &str, dir: &Path, cache: usize) -> Result<Box<dyn Engine>, String> {
    match engine {
        "lamina" => Ok(Box::new(super::lamina_engine::LaminaEngine::open(
            dir, cache,
        )?)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Box::new(super::rocksdb_engine::RocksEngine::open(
            dir, cache,
        )?)),
        #[cfg(feature = "lmdb")]
        "lmdb" => Ok(Box::new(super::lmdb_engine::LmdbEngine::open(dir)?)),
        #[cfg(feature = "redb")]
        "redb" => Ok(Box::new(super::redb_engine::RedbEngine::open(dir, cache)?)),
        #[cfg(bdb_linked)]
        "bdb" => Ok(Box::new(super::bdb_engine::BdbEngine::open(dir, cache)?)),
        other => Err(format!("{other}: not in this build")),
    }
}

/// Opens `engine`'s database and runs every mode with found keys, then
/// absent ones, printing a line for each.
fn read_child(
    engine: &str,
    work: &Path,
    set: &DataSet,
    args: &ScaleReadsArgs,
    ctx: &Ctx,
) -> Result<(), String> {
    let dir = work.join(engine);
    let t0 = Instant::now();
    let db = open(engine, &dir, args.cache_bytes())?;
    let opened = Line::Opened {
        engine: engine.to_string(),
        secs: t0.elapsed().as_secs_f64(),
    };
    println!("{}", opened.to_line());
    let device = BlockDevice::of(&dir);
    let plan = Plan {
        set,
        duration: Duration::from_secs(args.seconds),
        threads: args.threads,
        batch: args.batch,
        device: device.as_ref(),
    };
    for mode in MODES {
        for stream in STREAMS {
            let m = lookups::run(&*db, mode, stream, &plan)?;
            if !ctx.progress.quiet {
                eprintln!(
                    "scale-reads {engine}: {}, {} keys: {:.0} lookups/s",
                    report::mode_title(mode, args),
                    stream.label(),
                    crate::rate(m.lookups, m.secs)
                );
            }
            let row = Line::Row {
                engine: engine.to_string(),
                m,
            };
            println!("{}", row.to_line());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scale_reads::data::Stream;

    #[test]
    fn lines_read_back() {
        let lines = [
            Line::Loaded {
                engine: "lmdb".into(),
                secs: 1.5,
                bytes: 123_456,
                reused: false,
            },
            Line::Opened {
                engine: "lamina".into(),
                secs: 0.25,
            },
            Line::Row {
                engine: "rocksdb".into(),
                m: Measured {
                    mode: Mode::Batch,
                    stream: Stream::Absent,
                    lookups: 6400,
                    secs: 1.000_001,
                    device_reads: None,
                    read_bytes: Some(4096),
                    p50_ns: 1200,
                    p99_ns: 56_000,
                    wrong: 0,
                },
            },
        ];
        for l in lines {
            assert_eq!(Line::parse(&l.to_line()), Some(l));
        }
        assert_eq!(Line::parse("scale-reads lamina: 5 lookups/s"), None);
        assert_eq!(Line::parse("row,lamina,sideways,found,1,1,-,-,1,1,0"), None);
    }
}
