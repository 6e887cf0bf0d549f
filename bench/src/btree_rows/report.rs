//! The table of `lamina-bench btree-rows`: rows down, engines across, the
//! best peer and lamina over it; Markdown on standard output and in the
//! output directory, with a CSV file of every figure and one of the ratios.

use super::driver::{BtreeRowsArgs, Row};
use super::{unit, Sizes, Unit, CACHE_SIZE, ROWS};
use crate::engines::peers;
use crate::progress::thousands;
use std::fmt::Write as _;
use std::path::Path;

/// The harness's title of row `id`.
pub fn title(id: &str) -> &'static str {
    ROWS.iter().find(|r| r.0 == id).map_or("?", |r| r.1)
}

/// Three significant digits with an SI suffix (the harness's format).
fn si(v: f64) -> String {
    const SUFFIXES: [&str; 4] = ["", "K", "M", "G"];
    let mut v = v;
    let mut i = 0;
    while v >= 1000.0 && i + 1 < SUFFIXES.len() {
        v /= 1000.0;
        i += 1;
    }
    let digits = if v < 10.0 {
        2
    } else if v < 100.0 {
        1
    } else {
        0
    };
    format!("{v:.digits$}{}", SUFFIXES.get(i).copied().unwrap_or(""))
}

/// A row's figure as the table shows it.
pub fn figure(r: &Row) -> String {
    let v = r.value();
    let shown = match unit(r.m.id) {
        Some(Unit::Time) => {
            let ms = v * 1e3;
            let us = ms * 1e3;
            if ms >= 1.0 {
                format!("{ms:.0} ms")
            } else if us >= 10.0 {
                format!("{us:.0} µs")
            } else {
                format!("{us:.2} µs")
            }
        }
        Some(Unit::Size) => {
            let mib = v / f64::from(1u32 << 20);
            if mib >= 1024.0 {
                format!("{:.2} GiB", mib / 1024.0)
            } else {
                format!("{mib:.2} MiB")
            }
        }
        _ => si(v),
    };
    if r.m.estimated {
        format!("~{shown}")
    } else {
        shown
    }
}

/// A ratio with two decimals, or two significant digits below 0.1.
fn ratio_text(r: f64) -> String {
    if r >= 0.1 || r <= 0.0 {
        format!("{r:.2}")
    } else {
        let decimals = (1.0 - r.log10().floor()).clamp(2.0, 12.0) as usize;
        format!("{r:.decimals$}")
    }
}

/// lamina's figure over the best peer's, for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// The row.
    pub id: &'static str,
    /// lamina's figure.
    pub lamina: f64,
    /// The peer with the best figure.
    pub best_peer: String,
    /// Its figure.
    pub best: f64,
    /// `lamina / best`.
    pub ratio: f64,
}

/// Every ratio the rows allow (lamina and at least one peer ran the row).
pub fn ratios(rows: &[Row]) -> Vec<Ratio> {
    let mut out = Vec::new();
    for (id, _, u) in ROWS {
        let Some(lam) = rows.iter().find(|r| r.m.id == id && r.engine == "lamina") else {
            continue;
        };
        let best = rows
            .iter()
            .filter(|r| r.m.id == id && r.engine != "lamina")
            .map(|r| (r.engine.clone(), r.value()))
            .reduce(|a, b| {
                let b_better = if u.higher_is_better() {
                    b.1 > a.1
                } else {
                    b.1 < a.1
                };
                if b_better {
                    b
                } else {
                    a
                }
            });
        if let Some((peer, b)) = best {
            out.push(Ratio {
                id,
                lamina: lam.value(),
                best_peer: peer,
                best: b,
                ratio: if b > 0.0 { lam.value() / b } else { f64::NAN },
            });
        }
    }
    out
}

/// What each engine is given, in words.
fn describe(engine: &str) -> String {
    let cache = format!("{} GiB", CACHE_SIZE >> 30);
    match engine {
        "lamina" => format!(
            "default options (memory budget {} MiB, from the machine's memory); a write \
             transaction is a `Batch` committed with `write_with` at `Durability::Sync` \
             (nosync writes: `Durability::Os`); a write transaction that pops is a \
             `Transaction` (`pop_first`, `pop_last`, committed by `commit_with`); retain and \
             extract_if iterate and delete in the batch; a read transaction is a `Snapshot` \
             (`get_with_in`, `range`; len: `iter().count_keys()`); compaction \
             `compact()`; sorted inserts: a `BulkLoader`",
            lamina_budget() >> 20
        ),
        "rocksdb" => format!(
            "`OptimisticTransactionDB`; an LRU block cache of {cache} holding index and filter \
             blocks, a write buffer manager of half of it charged to the cache, \
             `max_write_buffer_size_to_maintain` the same, a bloom filter of 10 bits per key, \
             `increase_parallelism(cores)`; transactions with a snapshot, `sync` on durable \
             commits; a transaction is committed and a new one (default options: not synced) \
             begun every 100,000 writes, as the harness does; reads from a snapshot (len: \
             its iterator counted); pop, retain and extract_if iterate the transaction and \
             delete; compaction `compact_range` over everything; sorted inserts are puts"
        ),
        "lmdb" => "`heed`, default flags, map size 4 GiB; `MDB_NOSYNC` set for the nosync \
             writes; pop, retain and extract_if delete at the cursor; len from `stat`; \
             compaction: a compacting copy to a new file that replaces `data.mdb`, the \
             environment reopened; sorted inserts with `MDB_APPEND`"
            .to_string(),
        "redb" => format!(
            "cache_size {cache}; `Durability::None` for the nosync writes; its own \
             `pop_first`/`pop_last`, `retain`, `extract_if` and `len`; compaction \
             `compact(CompactionMode::Balanced)`; sorted inserts through \
             `upper_bound_mut(Unbounded)` and `insert_before`"
        ),
        _ => String::new(),
    }
}

/// lamina's memory budget in this run (the `lamina` tool's options).
fn lamina_budget() -> usize {
    crate::engine::options().map_or(0, |o| o.memory_budget)
}

/// The header, the table, and the notes, in Markdown.
pub fn render(args: &BtreeRowsArgs, sizes: &Sizes, rows: &[Row], notes: &[String]) -> String {
    let mut s = String::new();
    header(&mut s, sizes);
    for e in &args.engines {
        let given = if peers::built(e) {
            describe(e)
        } else {
            "not in this build".to_string()
        };
        let _ = writeln!(s, "- **{}**: {given}", peers::title(e));
    }
    table(&mut s, args, rows);
    if !notes.is_empty() {
        let _ = writeln!(s);
        for n in notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// The title, the command, the machine, and the rows' sizes.
fn header(s: &mut String, sizes: &Sizes) {
    let _ = writeln!(
        s,
        "## redb's benchmark rows: {} pairs of 24 B keys and 150 B values\n",
        thousands(sizes.bulk)
    );
    let _ = writeln!(s, "`lamina-bench {}`  ", crate::engines::report::command());
    let _ = writeln!(s, "{}  ", crate::engines::report::machine());
    let _ = writeln!(
        s,
        "The rows, sizes, keys, values and timing of redb's `lmdb_benchmark` (bench/README.md \
         describes each row): {} individual writes, {} batches of 1,000, {} nosync writes, {} \
         random reads, {} range reads of 10, {} pops, {} sorted inserts. Durable commits \
         unless the row says nosync. Each engine in a process of its own, one after the other; \
         nothing is dropped between them. Built here by cargo in release mode.\n",
        thousands(sizes.individual),
        thousands(sizes.batches),
        thousands(sizes.nosync),
        thousands(sizes.reads),
        thousands(sizes.scans),
        thousands(sizes.pops),
        thousands(sizes.sorted)
    );
}

/// What the figures mean, then the table: a line per row that ran, a
/// column per engine that ran, the best peer and lamina over it.
fn table(s: &mut String, args: &BtreeRowsArgs, rows: &[Row]) {
    let engines: Vec<&String> = args
        .engines
        .iter()
        .filter(|e| rows.iter().any(|r| &r.engine == *e))
        .collect();
    let ratios = ratios(rows);
    let _ = writeln!(
        s,
        "\nRates are per second (median of 3 runs for the single-threaded reads); ~ marks \
         a rate estimated from the first 1% (the harness's rule for a slow pop). lamina / \
         best: above 1 lamina is faster for a rate; below 1 lamina is quicker or smaller for \
         a time or a size.\n"
    );
    let mut head = String::from("| row |");
    let mut rule = String::from("|---|");
    for e in &engines {
        let _ = write!(head, " {e} |");
        rule.push_str("---:|");
    }
    head.push_str(" best peer | lamina / best |");
    rule.push_str("---|---:|");
    let _ = writeln!(s, "{head}\n{rule}");
    for (id, name, u) in ROWS {
        if rows.iter().any(|r| r.m.id == id) {
            let _ = writeln!(s, "{}", table_line(id, name, u, &engines, rows, &ratios));
        }
    }
}

/// The table's line of row `id`, named `name`, its figures in `u`.
fn table_line(
    id: &str,
    name: &str,
    u: Unit,
    engines: &[&String],
    rows: &[Row],
    ratios: &[Ratio],
) -> String {
    let label = match u {
        Unit::Time | Unit::Size => name.to_string(),
        _ => format!("{name} ({})", u.label()),
    };
    let mut line = format!("| {label} |");
    for e in engines {
        let cell = rows
            .iter()
            .find(|r| r.m.id == id && &r.engine == *e)
            .map_or_else(|| "-".to_string(), figure);
        let _ = write!(line, " {cell} |");
    }
    match ratios.iter().find(|r| r.id == id) {
        Some(r) if r.ratio.is_finite() => {
            let _ = write!(line, " {} | {}x |", r.best_peer, ratio_text(r.ratio));
        }
        Some(r) => {
            let _ = write!(line, " {} | n/a |", r.best_peer);
        }
        None => line.push_str(" - | - |"),
    }
    line
}

/// Writes the Markdown and the two CSV files into `dir`, named after the
/// run's size.
pub fn save(dir: &Path, elements: u64, rows: &[Row], md: &str) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let stem = format!("btree-rows-e{elements}");
    let path = dir.join(format!("{stem}.md"));
    std::fs::write(&path, md).map_err(|e| io(&path, e))?;
    let mut csv = String::from(
        "engine,version,row,unit,elements,count,seconds,value,bytes,estimated,check\n",
    );
    for r in rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{:.9},{},{},{},{}",
            r.engine,
            peers::title(&r.engine).replace(',', ";"),
            r.m.id,
            unit(r.m.id).map_or("", Unit::label),
            elements,
            r.m.count,
            r.m.secs,
            r.value(),
            r.m.bytes.map_or(String::new(), |b| b.to_string()),
            r.m.estimated,
            r.m.check.replace(',', ";")
        );
    }
    let path = dir.join(format!("{stem}.csv"));
    std::fs::write(&path, csv).map_err(|e| io(&path, e))?;
    let mut rcsv = String::from("row,unit,lamina,best_peer,best,ratio\n");
    for r in ratios(rows) {
        let _ = writeln!(
            rcsv,
            "{},{},{},{},{},{:.4}",
            r.id,
            unit(r.id).map_or("", Unit::label),
            r.lamina,
            r.best_peer,
            r.best,
            r.ratio
        );
    }
    let path = dir.join(format!("{stem}-ratios.csv"));
    std::fs::write(&path, rcsv).map_err(|e| io(&path, e))
}
