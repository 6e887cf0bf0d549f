//! `lamina-bench engines` at a tiny size: every engine of the build runs
//! every workload, the tables print, the CSV files hold the same rows.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{bench, code, lamina_bench, stderr, tempdir};

const WORKLOADS: [&str; 7] = [
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readmissing",
    "readseq",
    "deleterandom",
];

/// The engines of this build (the peers are cargo features).
fn built() -> Vec<&'static str> {
    common::built(&["lamina", "rocksdb", "lmdb", "redb", "fjall"])
}

/// The cells of the Markdown rows whose first cell is a workload.
fn table_rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| l.starts_with("| "))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|c| WORKLOADS.contains(&c[0].as_str()))
        .collect()
}

#[test]
fn every_engine_runs_every_workload() {
    let dir = tempdir();
    let out_dir = dir.path().join("out");
    let engines = built().join(",");
    let out = bench(&[
        "engines",
        "--num",
        "400",
        "--batch",
        "3",
        "--engines",
        &engines,
        "--memory-budget",
        "64M",
        "--out",
        out_dir.to_str().unwrap(),
        "--db",
        dir.path().to_str().unwrap(),
    ]);
    assert!(
        out.starts_with("## Engine level: 400 keys of 16 B with values of 100 B, 3 per commit"),
        "{out}"
    );
    assert!(out.contains("handed to the OS"), "{out}");
    let rows: Vec<Vec<String>> = table_rows(&out)
        .into_iter()
        .filter(|r| r.len() == 7)
        .collect();
    assert_eq!(rows.len(), WORKLOADS.len() * built().len(), "{out}");
    for r in &rows {
        let rate: f64 = r[2].replace(',', "").parse().unwrap();
        assert!(rate > 0.0, "{r:?}");
        let write = matches!(
            r[0].as_str(),
            "fillseq" | "fillrandom" | "overwrite" | "deleterandom"
        );
        assert_eq!(r[4] != "-", write, "disk only for writes: {r:?}");
    }
    // The ratios: one row per workload, lamina against the best peer.
    if built().len() > 1 {
        assert!(out.contains("### lamina / best peer"), "{out}");
        let ratios: Vec<Vec<String>> = table_rows(&out)
            .into_iter()
            .filter(|r| r.len() == 5)
            .collect();
        assert_eq!(ratios.len(), WORKLOADS.len(), "{out}");
        assert!(
            ratios[0][1].ends_with(')') && ratios[0][1].contains("x ("),
            "{ratios:?}"
        );
    }
    // The databases are gone; the tables and CSV are in --out.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "out")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let csv = std::fs::read_to_string(out_dir.join("engines-n400-v100-b3.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + rows.len(), "{csv}");
    assert!(csv.starts_with("engine,version,workload,"));
    let md = std::fs::read_to_string(out_dir.join("engines-n400-v100-b3.md")).unwrap();
    assert_eq!(md, out);
    assert!(out_dir.join("engines-n400-v100-b3-ratios.csv").exists());
}

#[test]
fn large_values_and_some_workloads() {
    let dir = tempdir();
    let out = bench(&[
        "engines",
        "--num",
        "30",
        "--value-size",
        "64K",
        "--engines",
        "lamina",
        "--workloads",
        "readrandom,deleterandom",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.contains("values of 65536 B"), "{out}");
    let rows = table_rows(&out);
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["readrandom", "deleterandom"], "{out}");
}

#[test]
fn unknown_engines_and_workloads_are_refused() {
    let out = lamina_bench(&["engines", "--engines", "lamina,nosuch", "--num", "10"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("unknown engine nosuch"),
        "{}",
        stderr(&out)
    );
    let out = lamina_bench(&["engines", "--workloads", "fillsome", "--num", "10"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("unknown workload fillsome"));
}
