//! The table of `lamina-bench tpcb`: what each engine was given, a row per
//! engine and thread count, testfile's rate around each engine and
//! lamina's targets; Markdown on standard output and in the output
//! directory, with a CSV file of every figure for bench/plot_tpcb.py's
//! chart.

use super::driver::TpcbArgs;
use super::{Row, Scale};
use crate::engines::peers::title;
use std::fmt::Write as _;
use std::path::Path;

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
/// The Markdown: header, settings, the table, the ratios against the targets.
pub fn render(
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
pub fn save(
    out: &Path,
    rows: &[Row],
    testfile: &[(String, f64)],
    table: &str,
) -> Result<(), String> {
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
