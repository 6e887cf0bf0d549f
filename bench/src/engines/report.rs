//! The tables of `lamina-bench engines`: one row per workload and engine,
//! then lamina over the best peer per workload; Markdown on standard output,
//! the same in `--out` with a CSV file of each; and the command and machine
//! lines that every comparison's header shows.

use super::{peers, EnginesArgs, Row, Setup, WORKLOADS};
use crate::progress::thousands;
use std::fmt::Write as _;
use std::path::Path;

/// The durability every engine's commits have, in words.
pub const DURABILITY: &str = "every commit handed to the OS before it returns, not synced \
     (survives a killed process, not a power loss), except redb's, which has no such level \
     (see below)";

fn mb(b: u64) -> String {
    format!("{:.1}", b as f64 / 1e6)
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

/// The header, the table of rows and the table of ratios, in Markdown.
pub fn render(setup: &Setup, args: &EnginesArgs, rows: &[Row], notes: &[String]) -> String {
    let mut s = String::new();
    header(&mut s, setup);
    for e in &args.engines {
        let given = if peers::built(e) {
            peers::describe(e, &setup.config)
        } else {
            "not in this build".to_string()
        };
        let _ = writeln!(s, "- **{}**: {given}", peers::title(e));
    }
    rows_table(&mut s, rows);
    ratios_table(&mut s, rows);
    if !notes.is_empty() {
        let _ = writeln!(s);
        for n in notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// The title, the command, the machine, and what every engine shares:
/// the reads, the durability, the memory, the build.
fn header(s: &mut String, setup: &Setup) {
    let _ = writeln!(
        s,
        "## Engine level: {} keys of 16 B with values of {} B, {} per commit\n",
        thousands(setup.num),
        setup.value_size,
        setup.batch
    );
    let _ = writeln!(s, "`lamina-bench {}`  ", command());
    let _ = writeln!(s, "{}  ", machine());
    let _ = writeln!(
        s,
        "Reads: {} single gets per read workload, in fixed-seed random orders (the same for \
         every engine); readmissing gets keys between the written ones.  ",
        thousands(setup.reads)
    );
    let _ = writeln!(s, "Durability: {DURABILITY}.  ");
    let _ = writeln!(
        s,
        "Memory: lamina's budget, {:.0} MiB; each peer's cache and write buffers add up to it.  ",
        setup.config.memory_budget as f64 / (1 << 20) as f64
    );
    let _ = writeln!(
        s,
        "All built here by cargo in release mode (RocksDB's and LMDB's C with -O3 -DNDEBUG, \
         target CPU native), one driver; each engine in a process of its own. Rust code \
         allocates with mimalloc (as the `lamina` tool does), RocksDB's C++ and LMDB's C with \
         glibc's malloc.\n"
    );
}

/// What the columns mean, then the table of rows, workload by workload.
fn rows_table(s: &mut String, rows: &[Row]) {
    let _ = writeln!(
        s,
        "\nops/s: operations (puts, deletes, gets, entries read) over the seconds from the \
         first to the return of the last; background work left afterwards is not waited for. \
         disk: the database directory's disk space after the workload (allocated, as `du` \
         counts it). written/put: `write_bytes` of /proc/self/io over the workload (pages \
         dirtied then, counted once while dirty), per byte of keys and values put (of keys, \
         for deleterandom); pages an engine dirtied before the workload or still holds in \
         its own buffers are not counted, so at small sizes it is a floor. peak RSS: the process's peak resident set during the workload (LMDB's \
         includes the pages of its mapped file it touched).\n"
    );
    let _ = writeln!(
        s,
        "| workload | engine | ops/s | seconds | disk MB | written/put | peak RSS MB |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|");
    for w in WORKLOADS {
        for r in rows.iter().filter(|r| r.workload == w) {
            let _ = writeln!(
                s,
                "| {w} | {} | {} | {:.4} | {} | {} | {} |",
                r.engine,
                thousands(r.rate() as u64),
                r.secs,
                opt(r.disk_bytes, mb),
                opt(r.write_amp(), |a| format!("{a:.2}")),
                opt(r.peak_rss, |b| format!("{:.0}", b as f64 / 1e6)),
            );
        }
    }
}

/// The table of lamina over the best peer, a line per workload with a
/// ratio; nothing where there is none.
fn ratios_table(s: &mut String, rows: &[Row]) {
    let ratios = ratios(rows);
    if ratios.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n### lamina / best peer\n\nops/s above 1: lamina faster; disk, written/put and \
         peak RSS below 1: lamina smaller. The best peer of each column is named.\n"
    );
    let _ = writeln!(s, "| workload | ops/s | disk | written/put | peak RSS |");
    let _ = writeln!(s, "|---|---:|---:|---:|---:|");
    for w in WORKLOADS {
        if ratios.iter().any(|r| r.workload == w) {
            let cell = |metric: &str| ratio_cell(&ratios, w, metric);
            let _ = writeln!(
                s,
                "| {w} | {} | {} | {} | {} |",
                cell("ops_per_s"),
                cell("disk_bytes"),
                cell("written_per_put"),
                cell("peak_rss")
            );
        }
    }
}

/// The cell of one workload and metric: the ratio and the best peer.
fn ratio_cell(ratios: &[Ratio], workload: &str, metric: &str) -> String {
    ratios
        .iter()
        .find(|r| r.workload == workload && r.metric == metric)
        .map_or_else(
            || "-".to_string(),
            |r| {
                if r.ratio.is_finite() {
                    format!("{:.2}x ({})", r.ratio, r.best_peer)
                } else {
                    format!("n/a ({} 0)", r.best_peer)
                }
            },
        )
}

/// lamina's figure over the best peer's, for one workload and metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// The workload.
    pub workload: &'static str,
    /// `ops_per_s` (higher is better), `disk_bytes`, `written_per_put`,
    /// `peak_rss` (lower is better).
    pub metric: &'static str,
    /// lamina's figure.
    pub lamina: f64,
    /// The peer with the best figure.
    pub best_peer: String,
    /// Its figure.
    pub best: f64,
    /// `lamina / best`.
    pub ratio: f64,
}

type Metric = (&'static str, bool, fn(&Row) -> Option<f64>);

/// The metrics, whether higher is better, and how to read each from a row.
const METRICS: [Metric; 4] = [
    ("ops_per_s", true, |r| Some(r.rate())),
    ("disk_bytes", false, |r| r.disk_bytes.map(|b| b as f64)),
    ("written_per_put", false, Row::write_amp),
    ("peak_rss", false, |r| r.peak_rss.map(|b| b as f64)),
];

/// Every ratio the rows allow (lamina and at least one peer with the figure).
pub fn ratios(rows: &[Row]) -> Vec<Ratio> {
    let mut out = Vec::new();
    for w in WORKLOADS {
        let Some(lam) = rows
            .iter()
            .find(|r| r.workload == w && r.engine == "lamina")
        else {
            continue;
        };
        for (metric, higher, get) in METRICS {
            let Some(l) = get(lam) else { continue };
            let best = rows
                .iter()
                .filter(|r| r.workload == w && r.engine != "lamina")
                .filter_map(|r| get(r).map(|v| (r.engine.clone(), v)))
                .reduce(|a, b| {
                    let b_better = if higher { b.1 > a.1 } else { b.1 < a.1 };
                    if b_better {
                        b
                    } else {
                        a
                    }
                });
            if let Some((peer, b)) = best {
                out.push(Ratio {
                    workload: w,
                    metric,
                    lamina: l,
                    best_peer: peer,
                    best: b,
                    // A best of 0 (nothing written yet): no ratio.
                    ratio: if b > 0.0 { l / b } else { f64::NAN },
                });
            }
        }
    }
    out
}

/// Writes the Markdown tables and the two CSV files into `dir`, named after
/// the run's sizes (so the two configurations do not overwrite each other).
pub fn save(dir: &Path, setup: &Setup, rows: &[Row], tables: &str) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let stem = format!(
        "engines-n{}-v{}-b{}",
        setup.num, setup.value_size, setup.batch
    );
    let md = dir.join(format!("{stem}.md"));
    std::fs::write(&md, tables).map_err(|e| io(&md, e))?;
    let mut csv = String::from(
        "engine,version,workload,num,value_size,batch,ops,seconds,ops_per_s,disk_bytes,\
         written_bytes,user_bytes,written_per_put,peak_rss_bytes\n",
    );
    let o = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    for r in rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{:.6},{:.0},{},{},{},{},{}",
            r.engine,
            peers::title(&r.engine).replace(',', ";"),
            r.workload,
            setup.num,
            setup.value_size,
            setup.batch,
            r.ops,
            r.secs,
            r.rate(),
            o(r.disk_bytes),
            o(r.written_bytes),
            r.user_bytes,
            r.write_amp().map_or(String::new(), |a| format!("{a:.4}")),
            o(r.peak_rss)
        );
    }
    let path = dir.join(format!("{stem}.csv"));
    std::fs::write(&path, csv).map_err(|e| io(&path, e))?;
    let mut rcsv = String::from("workload,metric,lamina,best_peer,best,ratio\n");
    for r in ratios(rows) {
        let _ = writeln!(
            rcsv,
            "{},{},{},{},{},{}",
            r.workload,
            r.metric,
            r.lamina,
            r.best_peer,
            r.best,
            if r.ratio.is_finite() {
                format!("{:.4}", r.ratio)
            } else {
                String::new()
            }
        );
    }
    let path = dir.join(format!("{stem}-ratios.csv"));
    std::fs::write(&path, rcsv).map_err(|e| io(&path, e))?;
    eprintln!(
        "lamina-bench engines: tables and CSV in {}/{stem}{{.md,.csv,-ratios.csv}}",
        dir.display()
    );
    Ok(())
}

/// The arguments the run was started with, after the program's name, as
/// the tables' headers show them: one holding a space is quoted.
pub(crate) fn command() -> String {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
        .collect();
    args.join(" ")
}

/// The date (UTC), the machine's cores and kernel, the load average.
pub(crate) fn machine() -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil(secs / 86_400);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let loadavg = read("/proc/loadavg");
    let load = loadavg
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "{y:04}-{m:02}-{d:02}, {cores} cores, Linux {}, load average {load} at the end",
        read("/proc/sys/kernel/osrelease").trim()
    )
}

/// The civil date of a day number since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil(days: u64) -> (i64, u64, u64) {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097) as u64;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe as i64 + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(engine: &str, workload: &str, ops: u64, secs: f64, disk: Option<u64>) -> Row {
        Row {
            engine: engine.into(),
            workload: workload.into(),
            ops,
            secs,
            disk_bytes: disk,
            written_bytes: disk.map(|d| d * 2),
            user_bytes: 1000,
            peak_rss: Some(10_000_000),
        }
    }

    #[test]
    fn ratios_take_the_best_peer_of_each_metric() {
        let rows = [
            row("lamina", "fillseq", 100, 1.0, Some(500)),
            row("rocksdb", "fillseq", 50, 1.0, Some(400)),
            row("lmdb", "fillseq", 80, 1.0, Some(1000)),
            row("lamina", "readrandom", 100, 1.0, None),
            row("redb", "readrandom", 200, 1.0, None),
        ];
        let r = ratios(&rows);
        let get = |w: &str, m: &str| r.iter().find(|x| x.workload == w && x.metric == m).unwrap();
        let ops = get("fillseq", "ops_per_s");
        assert_eq!((ops.best_peer.as_str(), ops.ratio), ("lmdb", 100.0 / 80.0));
        let disk = get("fillseq", "disk_bytes");
        assert_eq!(
            (disk.best_peer.as_str(), disk.ratio),
            ("rocksdb", 500.0 / 400.0)
        );
        let amp = get("fillseq", "written_per_put");
        assert_eq!(amp.best_peer, "rocksdb");
        assert_eq!(get("readrandom", "ops_per_s").ratio, 0.5);
        assert!(r
            .iter()
            .all(|x| !(x.workload == "readrandom" && x.metric == "disk_bytes")));
    }

    #[test]
    fn rows_survive_the_childs_line() {
        let r = row("fjall", "overwrite", 12, 0.25, Some(77));
        assert_eq!(Row::from_line(&r.to_line()), Some(r));
        let mut r = row("lamina", "readseq", 3, 1.5, None);
        r.peak_rss = None;
        assert_eq!(Row::from_line(&r.to_line()), Some(r));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(19_782), (2024, 2, 29));
    }
}
