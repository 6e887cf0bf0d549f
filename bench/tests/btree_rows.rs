//! `lamina-bench btree-rows` at a tiny size: every engine of the build runs
//! every row and agrees with the others on what it read, the table prints,
//! the CSV files hold the same rows; a subset with the slow-pop path forced.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{bench, tempdir};

/// The engines of this build (the peers are cargo features).
fn built() -> Vec<&'static str> {
    common::built(&["lamina", "rocksdb", "lmdb", "redb"])
}

/// The cells of the table's rows (those after the header and its rule).
fn table(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| row |"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn every_engine_runs_every_row() {
    let dir = tempdir();
    let out_dir = dir.path().join("out");
    let engines = built();
    let out = bench(&[
        "btree-rows",
        "--elements",
        "2000",
        "--engines",
        &engines.join(","),
        "--out",
        out_dir.to_str().unwrap(),
        "--db",
        dir.path().to_str().unwrap(),
    ]);
    assert!(
        out.starts_with("## redb's benchmark rows: 2,000 pairs of 24 B keys and 150 B values"),
        "{out}"
    );
    let header = out.lines().find(|l| l.starts_with("| row |")).unwrap();
    assert_eq!(
        header,
        format!(
            "| row | {} | best peer | lamina / best |",
            engines.join(" | ")
        )
    );
    let rows = table(&out);
    assert_eq!(rows.len(), 18, "{out}");
    assert_eq!(rows[0][0], "bulk load (key/s)");
    assert_eq!(rows[3][0], "sorted inserts (key/s)");
    assert_eq!(rows[17][0], "compacted size");
    for r in &rows {
        assert_eq!(r.len(), engines.len() + 3, "{r:?}");
        assert!(r[1..=engines.len()].iter().all(|c| c != "-"), "{r:?}");
        if engines.len() > 1 {
            assert!(r[r.len() - 1].ends_with('x'), "{r:?}");
        }
    }
    // No engine failed or disagreed: no notes under the table.
    assert!(
        !out.contains("disagree") && !out.contains("failed"),
        "{out}"
    );
    // The databases are gone; the table and CSV are in --out.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "out")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let csv = std::fs::read_to_string(out_dir.join("btree-rows-e2000.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 18 * engines.len(), "{csv}");
    assert!(csv.starts_with("engine,version,row,unit,elements,"));
    // Every engine counted the same entries in len().
    let lens: Vec<&str> = csv
        .lines()
        .filter(|l| l.split(',').nth(2) == Some("len"))
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    assert_eq!(lens, vec!["3021"; engines.len()], "{csv}");
    let md = std::fs::read_to_string(out_dir.join("btree-rows-e2000.md")).unwrap();
    assert_eq!(md, out);
    assert!(out_dir.join("btree-rows-e2000-ratios.csv").exists());
}

#[test]
fn a_subset_with_the_slow_pop_path() {
    let dir = tempdir();
    let out_dir = dir.path().join("out");
    let engines = built();
    let out = bench(&[
        "btree-rows",
        "--elements",
        "2000",
        "--engines",
        &engines.join(","),
        "--rows",
        "compacted-size,pop",
        "--pop-sample-limit",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
        "--db",
        dir.path().to_str().unwrap(),
    ]);
    let rows = table(&out);
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["pop (key/s)", "compacted size"], "{out}");
    // Every engine's pop rate is the sample's, marked estimated.
    assert!(
        rows[0][1..=engines.len()]
            .iter()
            .all(|c| c.starts_with('~')),
        "{out}"
    );
    assert!(!rows[1][1].starts_with('~'), "{out}");
}
