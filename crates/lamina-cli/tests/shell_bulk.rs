//! `lamina shell --newdb --bulk`: stores are gathered and ingested in one
//! step, skipping the WAL, yet gdbmtool's semantics hold — every command
//! that reads sees every earlier store, so a script prints exactly what it
//! prints without `--bulk` and leaves the same database.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

/// Runs `script` through `lamina shell --newdb` with `extra` options;
/// returns (exit code, stdout, stderr, the database as TSV).
fn shell(
    dir: &std::path::Path,
    name: &str,
    extra: &[&str],
    script: &[u8],
) -> (i32, String, String, String) {
    let db = path(dir, name);
    let mut args = vec!["-q", "shell", "--newdb"];
    args.extend_from_slice(extra);
    args.push(&db);
    let out = lamina_with_input(&args, script);
    (code(&out), stdout(&out), stderr(&out), tsv_of(&db))
}

/// Bytes the database ever took through its write path (WAL and
/// memtable), from `lamina stat --json`.
fn user_bytes(db: &str) -> u64 {
    let text = ok(lamina_run(&["stat", "--json", db]));
    let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
    v["lifetime"]["user_bytes"].as_u64().unwrap()
}

#[test]
fn the_seed_pipeline_skips_the_wal_and_builds_the_same_database() {
    let tmp = tempdir();
    let input = ok(lamina_run(&["gen", "numbers", "5000"]));
    let plain = shell(tmp.path(), "plain", &[], &input);
    let bulk = shell(tmp.path(), "bulk", &["--bulk", "--memory", "16K"], &input);
    assert_eq!(plain.0, 0, "{}", plain.2);
    assert_eq!(bulk.0, 0, "{}", bulk.2);
    assert_eq!(bulk.3.lines().count(), 5001);
    assert!(bulk.3 == plain.3, "the databases differ");
    // No store went through the WAL and the memtable.
    assert_eq!(user_bytes(&path(tmp.path(), "bulk")), 0);
    assert!(user_bytes(&path(tmp.path(), "plain")) > 100_000);
    let check = lamina_run(&["check", &path(tmp.path(), "bulk")]);
    assert_eq!(code(&check), 0, "{}", stdout(&check));
}

#[test]
fn every_read_sees_every_earlier_store() {
    let tmp = tempdir();
    // Reads of every kind between stores; repeated keys; the empty key.
    let script = b"store b 1\nstore a 2\nstore b 3\nstore \"\" empty\ncount\nfetch b\n\
store c 4\nstore a 5\nfirst\nnext\nstore d 6\nlist\nstore e 7\ndelete d\nfetch d\n\
store f 8\nstore a 9\nnext c\nversion\nstore g 10\ncount\nstore a last\n";
    let plain = shell(tmp.path(), "plain", &[], script);
    let bulk = shell(tmp.path(), "bulk", &["--bulk"], script);
    assert_eq!(bulk, plain);
    assert!(
        plain
            .1
            .starts_with("There are 3 items in the database.\n3\n"),
        "{}",
        plain.1
    );
    assert!(plain.1.contains("\na 5\nb 3\nc 4\nd 6\n"), "{}", plain.1);
    assert!(
        plain.1.ends_with("There are 7 items in the database.\n"),
        "{}",
        plain.1
    );
    assert_eq!(plain.3, "\tempty\na\tlast\nb\t3\nc\t4\ne\t7\nf\t8\ng\t10\n");
    // Stores before the first read only: all of them ingested, none in the WAL.
    let only = shell(
        tmp.path(),
        "only",
        &["--bulk"],
        b"store x 1\nstore y 2\nstore x 3\nexport ",
    );
    assert_eq!(only.0, 1, "an export without a file fails: {}", only.2);
    assert_eq!(only.3, "x\t3\ny\t2\n");
}

#[test]
fn an_export_sees_the_gathered_stores() {
    let tmp = tempdir();
    let file = path(tmp.path(), "out.dump");
    let script = format!("store k1 v1\nstore k2 v2\nexport {file}\nstore k3 v3\n");
    let bulk = shell(tmp.path(), "bulk", &["--bulk"], script.as_bytes());
    assert_eq!(bulk.0, 0, "{}", bulk.2);
    let loaded = path(tmp.path(), "loaded");
    ok(lamina_run(&["-q", "load", &loaded, &file]));
    assert_eq!(tsv_of(&loaded), "k1\tv1\nk2\tv2\n");
    assert_eq!(bulk.3, "k1\tv1\nk2\tv2\nk3\tv3\n");
}

#[test]
fn a_full_disk_keeps_no_gathered_store() {
    let tmp = tempdir();
    let input = ok(lamina_run(&["gen", "numbers", "20000"]));
    let mut failures = 0;
    // Failures in the sorted runs, the merged table and the ingest.
    for n in [5u64, 13, 21, 27, 31, 33, 35] {
        let db = path(tmp.path(), &format!("db{n}"));
        let mut cmd = lamina();
        cmd.args(["-q", "shell", "--newdb", "--bulk", "--memory", "64K", &db])
            .env("LAMINA_INJECT_FAULT", format!("write:{n}"));
        let out = run_with_input(cmd, &input);
        let err = stderr(&out);
        if code(&out) == 0 {
            assert_eq!(ok(lamina_run(&["count", &db])), b"20001\n");
            continue;
        }
        if err.contains("the 20,001 stores the engine acknowledged before it are kept") {
            // The fault hit after the ingest (closing the log): all kept, and said so.
            assert_eq!(code(&out), 5, "write:{n}: {err}");
            assert_eq!(ok(lamina_run(&["count", &db])), b"20001\n", "write:{n}");
            continue;
        }
        failures += 1;
        assert_eq!(code(&out), 5, "write:{n}: {err}");
        assert!(
            err.contains("No space left on device") && err.contains("stopped: no store was kept"),
            "write:{n}: {err}"
        );
        assert_eq!(ok(lamina_run(&["count", &db])), b"0\n", "write:{n}");
    }
    assert!(failures >= 3, "the fault was hit {failures} times");
}

#[test]
fn bulk_needs_a_new_database_and_no_synchronize() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_with_input(&["shell", "--bulk", &db], b"store a 1\n");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let out = lamina_with_input(&["shell", "--newdb", "--bulk", "-s", &db], b"store a 1\n");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}
