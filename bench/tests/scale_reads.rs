//! `lamina-bench scale-reads` at a tiny size, under the memory cap where a
//! cgroup can be made (otherwise with `--no-memlimit`), the page cache left
//! alone: every engine of the build loads the data set and runs every mode
//! with found and absent keys, every answer right (no note under the
//! table), and the table and the CSV hold every row; the numbers data set
//! on lamina, whose database a second run uses again; and engines run one
//! by one, each database removed before the next engine loads.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{bench, tempdir};

/// The engines of this build (the peers are cargo features).
fn built() -> Vec<&'static str> {
    common::built(&["lamina", "rocksdb", "lmdb", "redb", "bdb"])
}

/// The cells of the first table's rows: engine, mode, keys, lookups/s,
/// reads/lookup, KiB/lookup, p50, p99.
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .skip_while(|l| !l.starts_with("| engine |"))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The modes and keys every engine's rows list, in order, at 4 threads.
const MODES: [(&str, &str); 6] = [
    ("1 thread, get", "found"),
    ("1 thread, get", "absent"),
    ("4 threads, get", "found"),
    ("4 threads, get", "absent"),
    ("1 thread, batches of 64", "found"),
    ("1 thread, batches of 64", "absent"),
];

/// Whether `bench/memlimit` can make a cgroup here (root, or a delegated
/// one).
fn memlimit_works() -> bool {
    let memlimit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("memlimit");
    std::process::Command::new(memlimit)
        .args(["512M", "true"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs the workload with the smoke-run flags and `extra`.
fn scale_reads(dir: &std::path::Path, extra: &[&str]) -> String {
    let work = dir.join("work");
    let out = dir.join("out");
    let mut args = vec![
        "scale-reads",
        "--seconds",
        "1",
        "--threads",
        "4",
        "--keep-page-cache",
        "--fio-size",
        "16M",
        "--dir",
        work.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    if !memlimit_works() {
        args.push("--no-memlimit");
    }
    args.extend_from_slice(extra);
    bench(&args)
}

/// Checks that `out` has every mode of every engine in `engines`, each
/// with lookups done and a latency.
fn every_row(out: &str, engines: &[&str]) {
    let rows = rows(out);
    assert_eq!(rows.len(), MODES.len() * engines.len(), "{out}");
    for (row, (engine, (mode, keys))) in rows.iter().zip(
        engines
            .iter()
            .flat_map(|e| MODES.iter().map(move |m| (e, m))),
    ) {
        assert_eq!(row.len(), 8, "{row:?}");
        assert_eq!(
            (&row[0], &row[1], &row[2]),
            (&engine.to_string(), &mode.to_string(), &keys.to_string())
        );
        let rate: u64 = row[3].replace(',', "").parse().unwrap();
        assert!(rate > 0, "{row:?}");
        assert!(row[6].ends_with("µs") || row[6].ends_with("ms"), "{row:?}");
    }
    assert!(
        !out.contains("wrong answers") && !out.contains("failed"),
        "{out}"
    );
}

#[test]
fn every_engine_runs_every_mode() {
    let dir = tempdir();
    let engines = built();
    let out = scale_reads(
        dir.path(),
        &["--keys", "20000", "--engines", &engines.join(",")],
    );
    let cap = if memlimit_works() {
        "memory capped at 512.0 MiB"
    } else {
        "no memory cap"
    };
    assert!(
        out.starts_with(&format!(
            "## Reads at scale: 20,000 keys of 16 random bytes with 100-byte values, {cap}\n"
        )),
        "{out}"
    );
    every_row(&out, &engines);
    // fio's two depths, or why it could not run.
    assert!(
        out.contains("queue depth 32") || out.contains("fio not found"),
        "{out}"
    );
    if engines.len() > 1 {
        assert!(
            out.contains("| mode | keys | lamina lookups/s | best peer |"),
            "{out}"
        );
    }
    let csv =
        std::fs::read_to_string(dir.path().join("out/scale-reads-random-n20000.csv")).unwrap();
    let engine_rows = csv
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("fio,"))
        .count();
    assert_eq!(engine_rows, MODES.len() * engines.len(), "{csv}");
    assert!(csv.starts_with("engine,version,data,keys_loaded,memory,mode,"));
    let md = std::fs::read_to_string(dir.path().join("out/scale-reads-random-n20000.md")).unwrap();
    assert_eq!(md, out);
}

#[test]
fn numbers_and_a_database_used_again() {
    let dir = tempdir();
    let args = ["--data", "numbers", "--keys", "5000", "--engines", "lamina"];
    let first = scale_reads(dir.path(), &args);
    assert!(
        first.contains("5,000 records of the numbers load"),
        "{first}"
    );
    assert!(first.contains("loaded in "), "{first}");
    every_row(&first, &["lamina"]);
    let second = scale_reads(dir.path(), &args);
    assert!(second.contains("loaded by an earlier run"), "{second}");
    every_row(&second, &["lamina"]);
    // Another size is loaded afresh.
    let third = scale_reads(
        dir.path(),
        &["--data", "numbers", "--keys", "6000", "--engines", "lamina"],
    );
    assert!(!third.contains("loaded by an earlier run"), "{third}");
}

#[test]
fn one_by_one_removes_each_database_before_the_next_load() {
    let dir = tempdir();
    let engines = built();
    let out = scale_reads(
        dir.path(),
        &[
            "--keys",
            "5000",
            "--engines",
            &engines.join(","),
            "--one-by-one",
        ],
    );
    every_row(&out, &engines);
    assert!(out.contains("(`--one-by-one`), after fio"), "{out}");
    for e in &engines {
        let db = dir.path().join("work").join(e);
        assert!(!db.exists(), "{} is still there", db.display());
        assert!(!dir.path().join(format!("work/{e}.loaded")).exists());
    }
}
