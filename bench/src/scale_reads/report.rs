//! The table of `lamina-bench scale-reads`: what each engine was given,
//! the device's own limit, a row per engine, mode and stream of keys, then
//! lamina beside the best peer and the device and the targets it is held
//! to; Markdown on standard output and in the output directory, with a CSV
//! file of every figure.

use super::data::Stream;
use super::device::Fio;
use super::driver::{Line, Outcome, ScaleReadsArgs};
use super::{Measured, Mode, MODES, STREAMS};
use crate::engines::peers;
use crate::progress::{bytes, thousands};
use std::fmt::Write as _;
use std::path::Path;

/// Device reads per found lookup lamina is held to (a blob value adds one).
const TARGET_READS_FOUND: f64 = 1.1;
/// Device reads per absent lookup lamina is held to.
const TARGET_READS_ABSENT: f64 = 0.05;
/// One thread of single gets against fio at queue depth 1.
const TARGET_QD1: f64 = 0.8;
/// The threads or the batches against fio at queue depth 32.
const TARGET_QD32: f64 = 0.7;

/// The mode as the table names it.
pub fn mode_title(mode: Mode, args: &ScaleReadsArgs) -> String {
    match mode {
        Mode::Single => "1 thread, get".to_string(),
        Mode::Threads => format!("{} threads, get", args.threads),
        Mode::Batch => format!("1 thread, batches of {}", args.batch),
    }
}

/// What each engine is given, in words.
fn describe(engine: &str, args: &ScaleReadsArgs) -> String {
    let cache = bytes(args.cache_bytes() as u64);
    match engine {
        "lamina" => format!(
            "loaded by a `BulkLoader` (the `lamina` tool's options); read-only open, \
             `memory_budget` {cache}; `get_with`, batches by `get_many`"
        ),
        "rocksdb" => format!(
            "partitioned index and filters (two-level index, 4 KiB metadata blocks, full \
             bloom filters of 10 bits per key), index and filter blocks cached at high \
             priority with the top level pinned, 4 KiB data blocks, LZ4; loaded as \
             `SstFileWriter` tables of 64 MiB added by `IngestExternalFile`; read-only \
             open, LRU block cache {cache}; `get_pinned`, batches by `MultiGet`"
        ),
        "lmdb" => "loaded with `MDB_APPEND`; opened `MDB_RDONLY | MDB_NORDAHEAD`; its \
             pages are the page cache's (no cache of its own); a read transaction per \
             thread, batches a loop of `get`"
            .to_string(),
        "redb" => format!(
            "loaded through its appending cursor (`insert_before`); `ReadOnlyDatabase`, \
             `cache_size` {cache}; a read transaction per thread, batches a loop of `get`"
        ),
        #[cfg(bdb_linked)]
        "bdb" => format!(
            "{}; one btree of 4 KiB pages, loaded in key order by `DB->put`; opened `DB_RDONLY` \
             in a private, free-threaded environment (`DB_INIT_MPOOL`, no transactions), \
             memory pool {cache}; `DB->get`, batches a loop of `get`",
            super::bdb_engine::version()
        ),
        _ => String::new(),
    }
}

/// Lookups a second of a row.
fn rate(m: &Measured) -> f64 {
    crate::rate(m.lookups, m.secs)
}

/// Device reads per lookup.
fn reads_per_lookup(m: &Measured) -> Option<f64> {
    m.device_reads
        .filter(|_| m.lookups > 0)
        .map(|r| r as f64 / m.lookups as f64)
}

/// KiB read from storage per lookup.
fn kib_per_lookup(m: &Measured) -> Option<f64> {
    m.read_bytes
        .filter(|_| m.lookups > 0)
        .map(|b| b as f64 / 1024.0 / m.lookups as f64)
}

/// A latency in nanoseconds as the table shows it.
fn latency(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1e3)
    } else if us >= 10.0 {
        format!("{us:.0} µs")
    } else {
        format!("{us:.2} µs")
    }
}

fn or_dash(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

/// The rows of the table, in the engines' order.
fn rows(outcome: &Outcome) -> impl Iterator<Item = (&str, &Measured)> {
    outcome.lines.iter().filter_map(|l| match l {
        Line::Row { engine, m } => Some((engine.as_str(), m)),
        _ => None,
    })
}

/// fio's figure at `depth`, if it ran.
fn fio_at(outcome: &Outcome, depth: u32) -> Option<&Fio> {
    outcome
        .fio
        .iter()
        .filter_map(|f| f.as_ref().ok())
        .find(|f| f.depth == depth)
}

/// lamina's row and the best peer's for one mode and stream.
struct Beside<'a> {
    mode: Mode,
    stream: Stream,
    lamina: &'a Measured,
    best: Option<(&'a str, &'a Measured)>,
}

fn beside(outcome: &Outcome) -> Vec<Beside<'_>> {
    let mut out = Vec::new();
    for mode in MODES {
        for stream in STREAMS {
            let here =
                |e: &str, m: &Measured| m.mode == mode && m.stream == stream && e == "lamina";
            let Some((_, lamina)) = rows(outcome).find(|(e, m)| here(e, m)) else {
                continue;
            };
            let best = rows(outcome)
                .filter(|(e, m)| *e != "lamina" && m.mode == mode && m.stream == stream)
                .max_by(|a, b| rate(a.1).total_cmp(&rate(b.1)));
            out.push(Beside {
                mode,
                stream,
                lamina,
                best,
            });
        }
    }
    out
}

/// The device's rate a mode is compared with: queue depth 1 for one
/// thread of single gets, 32 for the others.
fn device_depth(mode: Mode) -> u32 {
    match mode {
        Mode::Single => 1,
        Mode::Threads | Mode::Batch => 32,
    }
}

/// The header, the tables, the targets and the notes, in Markdown.
pub fn render(args: &ScaleReadsArgs, outcome: &Outcome) -> String {
    let mut s = String::new();
    header(&mut s, args, outcome);
    device(&mut s, args, outcome);
    for e in &args.engines {
        let _ = writeln!(s, "- **{}**: {}", peers::title(e), given(e, args, outcome));
    }
    rows_table(&mut s, args, outcome);
    beside_table(&mut s, args, outcome);
    if !outcome.notes.is_empty() {
        let _ = writeln!(s);
        for n in &outcome.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// The title, the command, the machine, and how every engine was loaded
/// and measured.
fn header(s: &mut String, args: &ScaleReadsArgs, outcome: &Outcome) {
    let set = super::data::DataSet::new(args.data, args.keys());
    let cap = bytes(args.memory);
    let limit = if args.no_memlimit {
        "no memory cap".to_string()
    } else {
        format!("memory capped at {cap}")
    };
    let _ = writeln!(s, "## Reads at scale: {}, {limit}\n", set.describe());
    let _ = writeln!(s, "`lamina-bench {}`  ", crate::engines::report::command());
    let _ = writeln!(s, "{}  ", crate::engines::report::machine());
    let capped = if args.no_memlimit {
        "with no memory cap (`--no-memlimit`: a smoke run, not the benchmark)".to_string()
    } else {
        format!("under `bench/memlimit {cap}` (its memory, page cache included)")
    };
    let mut page_cache = match &outcome.page_cache {
        Ok(()) => "the page cache dropped before each".to_string(),
        Err(why) => why.clone(),
    };
    if args.one_by_one {
        page_cache.push_str(
            "; one engine at a time loads, reads and has its database removed \
             (`--one-by-one`), after fio",
        );
    }
    let _ = writeln!(
        s,
        "Each engine loads the data set in key order through its fastest path for a full \
         load (not timed as a row). Its lookups run in a process of its own {capped}; \
         {page_cache}. Each mode runs {} s with found keys, then {} s with absent ones \
         (never loaded), keys drawn uniformly at random, every answer checked. \
         reads/lookup: reads the work directory's block device completed (every \
         process's: run alone); KiB/lookup: bytes the process read from storage \
         (`read_bytes` of /proc/self/io); p50 and p99: latency of a call (one key, or one \
         batch).\n",
        args.seconds, args.seconds
    );
}

/// The device's line: fio's rate and latencies at each queue depth, or
/// why it did not run.
fn device(s: &mut String, args: &ScaleReadsArgs, outcome: &Outcome) {
    let _ = write!(
        s,
        "**Device**: fio, random 4 KiB reads of a {} file in the work directory, direct \
         I/O, libaio, {} s each: ",
        bytes(outcome.fio_size),
        args.seconds
    );
    let mut fio: Vec<String> = outcome
        .fio
        .iter()
        .map(|f| match f {
            Ok(f) => format!(
                "queue depth {} {} reads/s (p50 {}, p99 {})",
                f.depth,
                thousands(f.iops as u64),
                latency(f.p50_ns),
                latency(f.p99_ns)
            ),
            Err(why) => why.clone(),
        })
        .collect();
    fio.dedup();
    let _ = writeln!(s, "{}.\n", fio.join("; "));
}

/// What `engine` was given, and how long its load and its open took.
fn given(engine: &str, args: &ScaleReadsArgs, outcome: &Outcome) -> String {
    if !peers::built(engine) {
        return "not in this build".to_string();
    }
    let mut facts = vec![describe(engine, args)];
    for l in &outcome.lines {
        match l {
            Line::Loaded {
                engine: e,
                secs,
                bytes: b,
                reused,
            } if e == engine => facts.push(if *reused {
                format!("loaded by an earlier run, {} on disk", bytes(*b))
            } else {
                format!("loaded in {secs:.1} s, {} on disk", bytes(*b))
            }),
            Line::Opened { engine: e, secs } if e == engine => {
                facts.push(format!("opened in {:.3} s", secs));
            }
            _ => {}
        }
    }
    facts.join("; ")
}

/// The table of every row: an engine, a mode and a stream of keys.
fn rows_table(s: &mut String, args: &ScaleReadsArgs, outcome: &Outcome) {
    let _ = writeln!(
        s,
        "\n| engine | mode | keys | lookups/s | reads/lookup | KiB/lookup | p50 | p99 |\n\
         |---|---|---|---:|---:|---:|---:|---:|"
    );
    for (engine, m) in rows(outcome) {
        let _ = writeln!(
            s,
            "| {engine} | {} | {} | {} | {} | {} | {} | {} |",
            mode_title(m.mode, args),
            m.stream.label(),
            thousands(rate(m) as u64),
            or_dash(reads_per_lookup(m), 2),
            or_dash(kib_per_lookup(m), 1),
            latency(m.p50_ns),
            latency(m.p99_ns)
        );
    }
}

/// The table of lamina beside the best peer and the device, then the
/// targets; nothing where lamina has no row.
fn beside_table(s: &mut String, args: &ScaleReadsArgs, outcome: &Outcome) {
    let side = beside(outcome);
    if side.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n| mode | keys | lamina lookups/s | best peer | lamina / best | lamina / device |\n\
         |---|---|---:|---|---:|---:|"
    );
    for b in &side {
        let (peer, ratio) = match b.best {
            Some((e, m)) if rate(m) > 0.0 => (
                format!("{e} {}", thousands(rate(m) as u64)),
                format!("{:.2}x", rate(b.lamina) / rate(m)),
            ),
            _ => ("-".to_string(), "-".to_string()),
        };
        let depth = device_depth(b.mode);
        let device = fio_at(outcome, depth)
            .filter(|f| f.iops > 0.0 && b.stream == Stream::Found)
            .map_or_else(
                || "-".to_string(),
                |f| format!("{:.2}x QD{depth}", rate(b.lamina) / f.iops),
            );
        let _ = writeln!(
            s,
            "| {} | {} | {} | {peer} | {ratio} | {device} |",
            mode_title(b.mode, args),
            b.stream.label(),
            thousands(rate(b.lamina) as u64)
        );
    }
    let _ = writeln!(s, "\n{}", targets(&side, outcome, args));
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "not met"
    }
}

/// The targets lamina is held to, each with what this run measured.
fn targets(side: &[Beside], outcome: &Outcome, args: &ScaleReadsArgs) -> String {
    let mut lines = Vec::new();
    let compared: Vec<(&Beside, f64)> = side
        .iter()
        .filter_map(|b| {
            let (_, m) = b.best?;
            (rate(m) > 0.0).then(|| (b, rate(b.lamina) / rate(m)))
        })
        .collect();
    if let Some((worst, r)) = compared.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
        let ahead = compared.iter().filter(|(_, r)| *r >= 1.0).count();
        lines.push(format!(
            "- lamina at or above every peer in every mode: {} ({ahead} of {}; lowest {r:.2}x, \
             {}, {} keys)",
            verdict(ahead == compared.len()),
            compared.len(),
            mode_title(worst.mode, args),
            worst.stream.label()
        ));
    }
    for (stream, limit) in [
        (Stream::Found, TARGET_READS_FOUND),
        (Stream::Absent, TARGET_READS_ABSENT),
    ] {
        let highest = side
            .iter()
            .filter(|b| b.stream == stream)
            .filter_map(|b| Some((b, reads_per_lookup(b.lamina)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((b, reads)) = highest {
            lines.push(format!(
                "- device reads per {} lookup at most {limit}: {} (highest {reads:.3}, {})",
                stream.label(),
                verdict(reads <= limit),
                mode_title(b.mode, args)
            ));
        }
    }
    let found = |mode: Mode| {
        side.iter()
            .find(|b| b.mode == mode && b.stream == Stream::Found)
            .map(|b| rate(b.lamina))
    };
    if let (Some(r), Some(f)) = (found(Mode::Single), fio_at(outcome, 1)) {
        if f.iops > 0.0 {
            let x = r / f.iops;
            lines.push(format!(
                "- one thread of single gets at least {TARGET_QD1}x queue depth 1: {} ({x:.2}x)",
                verdict(x >= TARGET_QD1)
            ));
        }
    }
    let many = found(Mode::Threads)
        .into_iter()
        .chain(found(Mode::Batch))
        .reduce(f64::max);
    if let (Some(r), Some(f)) = (many, fio_at(outcome, 32)) {
        if f.iops > 0.0 {
            let x = r / f.iops;
            lines.push(format!(
                "- {} threads or batches of {} at least {TARGET_QD32}x queue depth 32: {} \
                 ({x:.2}x, the better of the two)",
                args.threads,
                args.batch,
                verdict(x >= TARGET_QD32)
            ));
        }
    }
    format!("Targets, found keys unless said:\n\n{}", lines.join("\n"))
}

/// Writes the Markdown and the CSV into `dir`, named after the data set.
pub fn save(dir: &Path, args: &ScaleReadsArgs, outcome: &Outcome, md: &str) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let data = match args.data {
        super::data::Data::Random => "random",
        super::data::Data::Numbers => "numbers",
    };
    let stem = format!("scale-reads-{data}-n{}", args.keys());
    let path = dir.join(format!("{stem}.md"));
    std::fs::write(&path, md).map_err(|e| io(&path, e))?;
    let mut csv = String::from(
        "engine,version,data,keys_loaded,memory,mode,threads,batch,stream,lookups,seconds,\
         lookups_per_s,device_reads,reads_per_lookup,read_bytes,kib_per_lookup,p50_us,p99_us,\
         wrong\n",
    );
    let cell = |v: Option<String>| v.unwrap_or_default();
    for (engine, m) in rows(outcome) {
        let _ = writeln!(
            csv,
            "{engine},{},{data},{},{},{},{},{},{},{},{:.6},{:.1},{},{},{},{},{:.3},{:.3},{}",
            peers::title(engine).replace(',', ";"),
            args.keys(),
            args.memory,
            m.mode.id(),
            if m.mode == Mode::Threads {
                args.threads
            } else {
                1
            },
            if m.mode == Mode::Batch { args.batch } else { 1 },
            m.stream.label(),
            m.lookups,
            m.secs,
            rate(m),
            cell(m.device_reads.map(|v| v.to_string())),
            cell(reads_per_lookup(m).map(|v| format!("{v:.4}"))),
            cell(m.read_bytes.map(|v| v.to_string())),
            cell(kib_per_lookup(m).map(|v| format!("{v:.3}"))),
            m.p50_ns as f64 / 1e3,
            m.p99_ns as f64 / 1e3,
            m.wrong
        );
    }
    for f in outcome.fio.iter().filter_map(|f| f.as_ref().ok()) {
        let _ = writeln!(
            csv,
            "fio,fio randread 4k direct libaio,{data},{},,qd{},1,,,,{},{:.1},,,,,{:.3},{:.3},",
            args.keys(),
            f.depth,
            args.seconds,
            f.iops,
            f.p50_ns as f64 / 1e3,
            f.p99_ns as f64 / 1e3
        );
    }
    let path = dir.join(format!("{stem}.csv"));
    std::fs::write(&path, csv).map_err(|e| io(&path, e))
}
