//! `--json` on `stat`, `check` and `count`: one JSON object on standard
//! output with the fields docs/cli.md lists, parsed here.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use serde_json::Value;

fn numbers_db(tmp: &tempfile::TempDir, last: u64) -> String {
    let db = path(tmp.path(), "numbers");
    ok(lamina_run(&[
        "-q",
        "gen",
        "numbers",
        &last.to_string(),
        "--into",
        &db,
    ]));
    db
}

fn json(args: &[&str]) -> (i32, Value) {
    let out = lamina_run(args);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&out)));
    (code(&out), v)
}

#[test]
fn stat_json() {
    let tmp = tempdir();
    let db = numbers_db(&tmp, 20_000);
    ok(lamina_run(&["put", "--keyspace", "users", &db, "u", "1"]));
    let (code, v) = json(&["stat", "--json", &db]);
    assert_eq!(code, 0);
    assert_eq!(v["path"], db.as_str());
    assert!(v["tables"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(v["entries"].as_u64().unwrap(), 20_001, "{v}");
    let levels = v["levels"].as_array().unwrap();
    let entries: u64 = levels.iter().map(|l| l["entries"].as_u64().unwrap()).sum();
    assert_eq!(entries, 20_001);
    for field in [
        "level",
        "tables",
        "bytes",
        "deletes",
        "key_bytes",
        "value_bytes",
        "filter_bytes",
    ] {
        assert!(levels[0][field].is_u64(), "{field}: {v}");
    }
    assert!(v["table_bytes"].as_u64().unwrap() > 0);
    assert_eq!(v["keyspaces"], serde_json::json!(["users"]));
    assert!(v["advice"].is_array());
    assert!(v["block_size"].as_u64().unwrap() >= 1024);
    assert!(
        v["lifetime"]["user_bytes"].as_u64().unwrap() > 500_000,
        "{v}"
    );
    assert!(v["space_amplification"].as_f64().unwrap() >= 1.0, "{v}");
    // `stat` looks nothing up; it opens each table once to read its counts.
    let reads = &v["reads"];
    assert_eq!(reads["point_lookups"].as_u64(), Some(0), "{v}");
    assert!(reads["data_reads_per_lookup"].is_null(), "{v}");
    assert_eq!(reads["index_filter_reads"], v["tables"], "{v}");
    assert_eq!(reads["other_reads"], v["tables"], "{v}");
}

#[test]
fn check_json_when_sound_and_when_damaged() {
    let tmp = tempdir();
    let db = numbers_db(&tmp, 5000);
    let (code, v) = json(&["-q", "check", "--json", &db]);
    assert_eq!(code, 0);
    assert_eq!(v["ok"], true);
    assert_eq!(v["entries"].as_u64().unwrap(), 5001, "{v}");
    assert_eq!(v["problems"], serde_json::json!([]));
    assert_eq!(
        v["notes"],
        serde_json::json!([]),
        "a clean database has no notes"
    );
    assert!(v["tables"].as_u64().unwrap() >= 1);
    let table = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .expect("a table");
    let mut bytes = std::fs::read(&table).unwrap();
    let mid = bytes.len() / 3;
    bytes[mid] ^= 0x55;
    std::fs::write(&table, &bytes).unwrap();
    let (code, v) = json(&["-q", "check", "--json", &db]);
    assert_eq!(code, 6);
    assert_eq!(v["ok"], false);
    let problems = v["problems"].as_array().unwrap();
    assert!(!problems.is_empty());
    assert!(problems[0].as_str().unwrap().contains(".sst"), "{v}");
}

#[test]
fn count_json() {
    let tmp = tempdir();
    let db = numbers_db(&tmp, 99);
    ok(lamina_run(&["put", "--keyspace", "b", &db, "", "empty"]));
    ok(lamina_run(&["put", "--keyspace", "a", &db, "x", "1"]));
    ok(lamina_run(&["put", "--keyspace", "a", &db, "y", "2"]));
    let (code, v) = json(&["count", "--json", &db]);
    assert_eq!(code, 0);
    assert_eq!(
        v,
        serde_json::json!({
            "total": 103,
            "keyspaces": [
                {"name": "", "records": 100},
                {"name": "a", "records": 2},
                {"name": "b", "records": 1},
            ]
        })
    );
    let (_, v) = json(&["count", "--json", "--prefix", "1", &db]);
    assert_eq!(v["total"], 11, "1 and 10 to 19: {v}");
}

/// Before the fix: a 1-record load reported "write amplification
/// 123.50x", a ratio of fixed file costs to a few bytes.
#[test]
fn tiny_loads_show_no_amplification_ratio() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_with_input(&["load", &db], b"k\tv\n");
    let err = stderr(&out);
    assert_eq!(code(&out), 0, "{err}");
    assert!(
        err.contains("write amplification not shown (too little data for the ratio to mean anything): 2 B written by the user"),
        "{err}"
    );
    let big = path(tmp.path(), "big");
    let input = ok(lamina_run(&["gen", "numbers", "60000", "--format", "tsv"]));
    let out = lamina_with_input(&["load", &big], &input);
    let err = stderr(&out);
    let at = err.find("write amplification ").expect("a summary") + 20;
    let ratio: f64 = err[at..].split('x').next().unwrap().parse().unwrap();
    assert!((1.0..20.0).contains(&ratio), "{err}");
}

/// A database that cannot be opened at all (an empty `CURRENT`) still gets
/// one JSON object from `check --json`, and nothing on stderr; before, the
/// text went to stderr and standard output stayed empty.
#[test]
fn check_json_when_the_database_cannot_be_opened() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "k", "v"]));
    std::fs::write(tmp.path().join("db").join("CURRENT"), b"").unwrap();
    let out = lamina_run(&["check", "--json", &db]);
    assert_eq!(code(&out), 6);
    assert_eq!(stderr(&out), "");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["opened"], false);
    let problem = v["problems"][0].as_str().unwrap();
    assert!(
        problem.contains("CURRENT does not name a manifest"),
        "{problem}"
    );
}
