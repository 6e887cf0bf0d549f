//! `lamina-bench`: every seed workload runs at a tiny size and prints
//! well-formed lines (the columns parse, the numbers are positive); CSV
//! files get a header and one row per printed row.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{bench, code, lamina_bench, lamina_binary, stdout, tempdir};

/// A positive number, with thousands separators and a `s`, `/s` or `%` suffix allowed.
fn positive(field: &str) -> f64 {
    let t = field
        .trim_end_matches("/s")
        .trim_end_matches('s')
        .trim_end_matches('%')
        .replace(',', "");
    let v: f64 = t
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {field:?}"));
    assert!(v > 0.0, "not positive: {field:?}");
    v
}

fn lines_starting<'a>(out: &'a str, prefix: &str) -> Vec<&'a str> {
    out.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// `N SECONDS RATE/s RATE/s` lines (update, multi) and the `total` line.
fn check_periodic(out: &str, total: u64, every: u64) {
    let periodic: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(periodic.len() as u64, total / every, "{out}");
    for (i, f) in periodic.iter().enumerate() {
        assert_eq!(f.len(), 4, "{f:?}");
        assert_eq!(f[0].parse::<u64>().unwrap(), (i as u64 + 1) * every);
        positive(f[1]);
        positive(f[2]);
        positive(f[3]);
    }
    let t: Vec<&str> = lines_starting(out, "total ")[0]
        .split_whitespace()
        .collect();
    assert_eq!(t[1].parse::<u64>().unwrap(), total);
    positive(t[2]);
    positive(t[3]);
}

#[test]
fn insert_prints_the_seed_columns_and_csv() {
    let dir = tempdir();
    let db = dir.path().join("db");
    let csv = dir.path().join("insert.csv");
    let out = bench(&[
        "insert",
        "-n",
        "2",
        "--records-per-batch",
        "3000",
        "--db",
        db.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(
        out.starts_with("serial and random insertions of 3000 per batch"),
        "{out}"
    );
    let batches = lines_starting(&out, "serial  ");
    assert_eq!(batches.len(), 2, "{out}");
    for line in batches {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 9, "{line}");
        assert_eq!((f[0], f[3], f[6]), ("serial", "random", "cumulative"));
        for x in [1, 2, 4, 5, 7, 8] {
            positive(f[x]);
        }
    }
    let shutdown: Vec<&str> = lines_starting(&out, "Shutdown ")[0]
        .split_whitespace()
        .collect();
    positive(shutdown[1]);
    let total: Vec<&str> = lines_starting(&out, "Total time ")[0]
        .split_whitespace()
        .collect();
    assert_eq!(&total[3..6], ["for", "12000", "insertions"]);
    positive(total[2]);
    positive(total[7]);
    assert!(db.join("MANIFEST").exists() || std::fs::read_dir(&db).unwrap().count() > 0);
    let rows = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = rows.lines().collect();
    assert!(rows[0].starts_with("engine,batch,serial_s"));
    assert_eq!(rows.len(), 1 + 2 + 2, "{rows:?}");
    assert!(rows[4].starts_with("lamina,total,"));

    // A second run on the same --db replaces the database (same key count).
    let again = bench(&[
        "db-insert",
        "-n",
        "1",
        "--records-per-batch",
        "1000",
        "--dir",
        db.to_str().unwrap(),
    ]);
    assert!(again.contains("for 2000 insertions"), "{again}");
    let scan = bench(&["scan", "--db", db.to_str().unwrap()]);
    let passes = lines_starting(&scan, "Scan ");
    assert_eq!(passes.len(), 2, "{scan}");
    // Serial keys never collide; the 1000 random 64-bit keys almost surely miss them.
    for p in passes {
        assert!(
            p.contains("(2000 rows)") && p.contains(" 32000 bytes"),
            "{p}"
        );
    }
}

#[test]
fn insert_with_transactions() {
    let out = bench(&["insert", "-n", "1", "-x", "--records-per-batch", "2000"]);
    assert!(out.contains("(with transactions)"), "{out}");
    assert!(out.contains("for 4000 insertions"), "{out}");
}

#[test]
fn scan_loads_a_database_first_when_there_is_none() {
    let out = bench(&["scan", "-n", "1", "--records-per-batch", "1500"]);
    assert_eq!(lines_starting(&out, "serial  ").len(), 1, "{out}");
    let passes = lines_starting(&out, "Scan ");
    assert_eq!(passes.len(), 2, "{out}");
    for p in passes {
        let f: Vec<&str> = p.split_whitespace().collect();
        // Scan BYTES bytes (ROWS rows) in SECS at MB/s
        assert_eq!(f[1], "48000");
        assert_eq!(f[3], "(3000");
        positive(f[6]);
        positive(f[8].trim_end_matches("MB/s"));
    }
}

#[test]
fn update_reports_periodically() {
    let dir = tempdir();
    let csv = dir.path().join("update.csv");
    let out = bench(&[
        "update",
        "--ops",
        "2500",
        "--report",
        "500",
        "--every",
        "1000",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.starts_with("db-update: lamina"), "{out}");
    check_periodic(&out, 2500, 1000);
    let rows = std::fs::read_to_string(&csv).unwrap();
    // header, one row per 500 ops, total
    assert_eq!(rows.lines().count(), 1 + 5 + 1, "{rows}");
}

#[test]
fn update_stops_after_max_seconds() {
    let out = bench(&[
        "update",
        "--ops",
        "100000000",
        "--report",
        "200",
        "--max-seconds",
        "0.2",
    ]);
    assert!(out.contains("stopped after"), "{out}");
    let t: Vec<&str> = lines_starting(&out, "total ")[0]
        .split_whitespace()
        .collect();
    assert_eq!(t[1].parse::<u64>().unwrap() % 200, 0);
}

#[test]
fn multi_writes_four_keyspaces() {
    let dir = tempdir();
    let db = dir.path().join("multi");
    let out = bench(&[
        "multi",
        "--rows",
        "2500",
        "--report",
        "500",
        "--every",
        "1000",
        "--db",
        db.to_str().unwrap(),
    ]);
    check_periodic(&out, 2500, 1000);
    // Every row is in the main keyspace and the three secondary ones.
    let opts = lamina::Options {
        read_only: true,
        create_if_missing: false,
        ..lamina::Options::default()
    };
    let db = lamina::Db::open(&db, opts).unwrap();
    assert_eq!(db.iter().count(), 2500);
    let names = db.keyspaces();
    assert_eq!(names.len(), 3, "{names:?}");
    for name in names {
        assert_eq!(
            db.open_keyspace(&name).unwrap().iter().count(),
            2500,
            "{name}"
        );
    }
}

/// The rows of `lamina-bench commit`'s table, split into their 10 fields.
fn commit_rows(out: &str) -> Vec<Vec<&str>> {
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 10 && f[0].parse::<u32>().is_ok())
        .collect()
}

#[test]
fn commit_compares_with_testfile() {
    let out = bench(&[
        "commits",
        "--threads",
        "1,3",
        "--ops",
        "30",
        "--testfile-ops",
        "20",
    ]);
    let tf = lines_starting(&out, "testfile: ")[0];
    let f: Vec<&str> = tf.split_whitespace().collect();
    assert_eq!(f[1], "20");
    assert!(
        tf.contains("right before each thread count and after the last"),
        "{tf}"
    );
    let rows = commit_rows(&out);
    assert_eq!(rows.len(), 2, "{out}");
    for (r, threads) in rows.iter().zip([1, 3]) {
        assert_eq!(r[0].parse::<u32>().unwrap(), threads);
        // 30 commits shared by the threads: each does ceil(30 / threads).
        assert_eq!(r[1].replace(',', "").parse::<u64>().unwrap(), 30);
        for x in &r[2..9] {
            positive(x);
        }
        // The share of commits whose wait began by yielding: none alone.
        let yielding: f64 = r[9].parse().unwrap();
        assert!((0.0..=1.0).contains(&yielding), "{out}");
        if threads == 1 {
            assert_eq!(r[9], "0.00", "{out}");
        }
    }
    // testfile runs once between two thread counts: after the first, before
    // the second.
    assert_eq!(rows[0][7], rows[1][6], "{out}");
}

/// Without `--testfile-ops`, testfile runs as long as each timed row.
#[test]
fn commit_runs_testfile_as_long_as_a_row() {
    let out = bench(&["commit", "--threads", "1", "--seconds", "0.2"]);
    let tf = lines_starting(&out, "testfile: ")[0];
    assert!(tf.starts_with("testfile: 0.2 s of write(256 B)"), "{tf}");
    let rows = commit_rows(&out);
    assert_eq!(rows.len(), 1, "{out}");
    for x in &rows[0][1..9] {
        positive(x);
    }
    assert_eq!(rows[0][9], "0.00", "one thread never waits: {out}");
}

#[test]
fn numbers_loads_both_paths_at_each_size() {
    let lamina = lamina_binary();
    let out = bench(&["numbers", "--min", "8", "--max", "9", "--lamina", &lamina]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 2 && f[1].starts_with("(2^"))
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    for (r, (n, path)) in
        rows.iter()
            .zip([(256, "gen"), (256, "shell"), (512, "gen"), (512, "shell")])
    {
        assert_eq!(r[0].parse::<u64>().unwrap(), n);
        assert_eq!(r[2], path);
        positive(r[3]);
        positive(r[4]);
    }
    // Both paths build the same database.
    assert_eq!(rows[0][rows[0].len() - 2..], rows[1][rows[1].len() - 2..]);
    assert!(
        out.contains("rate at 2^9 as % of the rate at 2^20: 2^20 not in the run"),
        "{out}"
    );
}

#[test]
fn blocksize_sweeps_five_sizes_and_the_automatic_choice() {
    let out = bench(&[
        "blocksize",
        "--records",
        "800",
        "--reads",
        "1000",
        "--repeat",
        "2",
    ]);
    assert!(out.contains("the median of 2 runs of each"), "{out}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| !f.is_empty() && (f[0] == "auto" || f[0].ends_with('K') && f[0].len() <= 3))
        .collect();
    let blocks: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(blocks, ["auto", "4K", "8K", "16K", "32K", "64K"], "{out}");
    for r in &rows {
        positive(r[1]);
        positive(r[2]);
    }
    // The automatic row names the size it chose, and the summary agrees.
    let chose = rows[0][rows[0].len() - 1].trim_end_matches(')');
    assert_eq!(rows[0][rows[0].len() - 2], "(chose", "{out}");
    assert!(blocks[1..].contains(&chose), "{out}");
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "default block size (chosen from the data: {chose}): load "
        )),
        "{last}"
    );
    assert!(last.contains("% below the best ("), "{last}");
}

#[test]
fn unknown_workload_is_a_usage_error() {
    let out = lamina_bench(&["nothing"]);
    assert_eq!(code(&out), 2);
}

/// The global options are the `lamina` tool's, read by the same code.
#[test]
fn global_options_are_the_tools() {
    let out = bench(&[
        "--memory-budget",
        "64M",
        "update",
        "--ops",
        "300",
        "--report",
        "100",
    ]);
    assert!(out.contains("total 300 "), "{out}");
    let bad = lamina_bench(&["--option", "no_such=1", "update"]);
    assert_eq!(code(&bad), 2);
    assert!(stdout(&bad).is_empty());
}
