//! Every keyspace survives `lamina dump` then `lamina load`, in every dump
//! format, with the empty key and binary keys and values; `count` counts
//! the records of every keyspace.
//!
//! Before the fix: for a database with a named keyspace and an empty key,
//! `lamina dump` wrote one record and `lamina count` said 1 while the
//! database held 2: the named keyspace was silently left out.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A Berkeley DB bytevalue dump of `records` (one section, no name).
fn bdb_dump(records: &[(Vec<u8>, Vec<u8>)]) -> String {
    let mut dump = String::from("VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n");
    for (k, v) in records {
        dump.push_str(&format!(" {}\n {}\n", hex(k), hex(v)));
    }
    dump.push_str("DATA=END\n");
    dump
}

/// Keyspace names and record counts, from `lamina count --json`.
fn counts(db: &str) -> (u64, Vec<(String, u64)>) {
    let text = ok(lamina_run(&["count", "--json", db]));
    let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let per: Vec<(String, u64)> = v["keyspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap().to_string(),
                k["records"].as_u64().unwrap(),
            )
        })
        .collect();
    (v["total"].as_u64().unwrap(), per)
}

/// Every keyspace with its records (hex), via `lamina scan --keyspace`.
fn contents(db: &str) -> Vec<(String, String)> {
    let (_, per) = counts(db);
    per.into_iter()
        .map(|(name, _)| {
            let scanned = ok(lamina_run(&["scan", "--hex", "--keyspace", &name, db]));
            (name, String::from_utf8(scanned).unwrap())
        })
        .collect()
}

/// A database with the default keyspace and three named ones (one empty,
/// one with a tab and a newline in its name).
fn source(dir: &std::path::Path) -> String {
    let src = path(dir, "src");
    ok(lamina_with_input(
        &["-q", "load", &src],
        bdb_dump(&binary_records(1, 7)).as_bytes(),
    ));
    ok(lamina_with_input(
        &["-q", "load", "--keyspace", "users", &src],
        bdb_dump(&binary_records(2, 7)).as_bytes(),
    ));
    ok(lamina_with_input(
        &["-q", "load", "--keyspace", "tab\tand\nnewline", &src],
        bdb_dump(&binary_records(3, 7)[..3]).as_bytes(),
    ));
    ok(lamina_run(&["put", "--keyspace", "empty", &src, "k", "v"]));
    ok(lamina_run(&["delete", "--keyspace", "empty", &src, "k"]));
    src
}

#[test]
fn count_counts_every_keyspace() {
    let tmp = tempdir();
    let src = source(tmp.path());
    let n = binary_records(1, 7).len() as u64;
    let (total, per) = counts(&src);
    let want = vec![
        (String::new(), n),
        ("empty".to_string(), 0),
        ("tab\tand\nnewline".to_string(), 3),
        ("users".to_string(), n),
    ];
    assert_eq!(per, want);
    assert_eq!(total, 2 * n + 3);
    let plain = ok(lamina_run(&["count", &src]));
    assert_eq!(
        String::from_utf8(plain).unwrap(),
        format!("{}\n", 2 * n + 3)
    );
    let one = ok(lamina_run(&["count", "--keyspace", "users", &src]));
    assert_eq!(String::from_utf8(one).unwrap(), format!("{n}\n"));
    let default = ok(lamina_run(&["count", "--keyspace", "", &src]));
    assert_eq!(String::from_utf8(default).unwrap(), format!("{n}\n"));
    let missing = lamina_run(&["count", "--keyspace", "nope", &src]);
    assert_eq!(code(&missing), 1);
    assert!(
        stderr(&missing).contains("no keyspace named \"nope\"")
            && stderr(&missing).contains("its keyspaces are empty, tab\tand\nnewline, users"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn every_format_round_trips_every_keyspace() {
    let tmp = tempdir();
    let src = source(tmp.path());
    let want = contents(&src);
    assert_eq!(want.len(), 4);
    assert!(
        want[0].1.starts_with("\t010"),
        "the empty key: {}",
        want[0].1
    );
    for format in ["gdbm", "bdb", "bdb-print", "tsv"] {
        let file = path(tmp.path(), &format!("dump.{format}"));
        ok(lamina_run(&["dump", &src, &file, "--format", format]));
        let dst = path(tmp.path(), &format!("db-{format}"));
        ok(lamina_run(&["-q", "load", &dst, &file]));
        assert_eq!(contents(&dst), want, "{format}");
        assert_eq!(counts(&dst), counts(&src), "{format}");
    }
}

#[test]
fn one_keyspace_dumps_and_loads_into_it() {
    let tmp = tempdir();
    let src = source(tmp.path());
    let want = contents(&src);
    for format in ["gdbm", "bdb", "tsv"] {
        let file = path(tmp.path(), &format!("users.{format}"));
        ok(lamina_run(&[
            "dump",
            "--keyspace",
            "users",
            &src,
            &file,
            "--format",
            format,
        ]));
        // The section header names the keyspace: a plain load restores it.
        let dst = path(tmp.path(), &format!("users-{format}"));
        ok(lamina_run(&["-q", "load", &dst, &file]));
        let got = contents(&dst);
        assert_eq!(got.len(), 2, "{format}: {got:?}");
        assert_eq!(got[0], (String::new(), String::new()));
        assert_eq!(got[1], want[3], "{format}");
    }
    // A dump of every keyspace cannot be loaded into one.
    let all = path(tmp.path(), "all.tsv");
    ok(lamina_run(&["dump", &src, &all, "--format", "tsv"]));
    let dst = path(tmp.path(), "one");
    let out = lamina_run(&["-q", "load", "--keyspace", "users", &dst, &all]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the dump holds keyspace \"empty\", and --keyspace loads into one keyspace; load without --keyspace to restore every keyspace"),
        "{}",
        stderr(&out)
    );
    let missing = lamina_run(&["dump", "--keyspace", "nope", &src]);
    assert_eq!(code(&missing), 1);
    assert!(stderr(&missing).contains("no keyspace named \"nope\""));
}

#[test]
fn get_put_delete_scan_take_a_keyspace() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "k", "default"]));
    ok(lamina_run(&["put", "--keyspace", "ks", &db, "k", "named"]));
    ok(lamina_run(&[
        "put",
        "--keyspace",
        "ks",
        &db,
        "",
        "empty key",
    ]));
    assert_eq!(ok(lamina_run(&["get", &db, "k"])), b"default\n");
    assert_eq!(
        ok(lamina_run(&["get", "--keyspace", "ks", &db, "k"])),
        b"named\n"
    );
    assert_eq!(
        ok(lamina_run(&["scan", "--keyspace", "ks", &db])),
        b"\tempty key\nk\tnamed\n"
    );
    ok(lamina_run(&[
        "delete",
        "--keyspace",
        "ks",
        "--must-exist",
        &db,
        "",
    ]));
    assert_eq!(ok(lamina_run(&["count", &db])), b"2\n");
    let gone = lamina_run(&["get", "--keyspace", "ks", &db, ""]);
    assert_eq!(code(&gone), 1);
}

/// gdbm_load reads a lamina dump of several keyspaces (it ignores the
/// section headers and loads every record into one file).
#[test]
fn gdbm_load_accepts_keyspace_headers() {
    if !have("gdbm_load", "gdbm_load_accepts_keyspace_headers") {
        return;
    }
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "a", "1"]));
    ok(lamina_run(&["put", "--keyspace", "ks", &db, "b", "2"]));
    let file = path(tmp.path(), "dump");
    ok(lamina_run(&["dump", &db, &file]));
    let gdbm = path(tmp.path(), "x.gdbm");
    let out = std::process::Command::new("gdbm_load")
        .args([&file, &gdbm])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// db_load makes one sub-database per named keyspace of a Berkeley DB dump
/// (the default keyspace is empty here, so the dump has no main database,
/// which Berkeley DB could not hold beside named ones).
#[test]
fn db_load_makes_a_database_per_keyspace() {
    if !have("db5.3_load", "db_load_makes_a_database_per_keyspace") {
        return;
    }
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", "--keyspace", "a b", &db, "k", "1"]));
    ok(lamina_run(&[
        "put",
        "--keyspace",
        "c",
        &db,
        "",
        "empty key",
    ]));
    let file = path(tmp.path(), "dump");
    ok(lamina_run(&["dump", "--format", "bdb-print", &db, &file]));
    let bdb = path(tmp.path(), "x.bdb");
    let load = std::process::Command::new("db5.3_load")
        .args(["-f", &file, &bdb])
        .output()
        .unwrap();
    assert!(load.status.success(), "{}", stderr(&load));
    let list = std::process::Command::new("db5.3_dump")
        .args(["-l", &bdb])
        .output()
        .unwrap();
    assert_eq!(stdout(&list), "a b\nc\n");
    let one = std::process::Command::new("db5.3_dump")
        .args(["-p", "-s", "c", &bdb])
        .output()
        .unwrap();
    assert!(
        stdout(&one).contains("HEADER=END\n \n empty key\nDATA=END"),
        "{}",
        stdout(&one)
    );
}
