//! `lamina load --bulk`: a dump loaded through sorted tables ingested in one
//! step, without the WAL. Every format and every keyspace round-trips
//! exactly; the last value of a repeated key wins; a failure (a full disk,
//! a malformed record) leaves the database's records as they were.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

/// Shell commands storing `records`.
fn stores(records: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in records {
        out.extend_from_slice(b"store ");
        out.extend_from_slice(&quote(k));
        out.push(b' ');
        out.extend_from_slice(&quote(v));
        out.push(b'\n');
    }
    out
}

/// A database with the default keyspace, two named ones with records and
/// an empty one, written the ordinary way.
fn source(dir: &std::path::Path) -> String {
    let src = path(dir, "src");
    ok(lamina_with_input(
        &["-q", "shell", &src],
        &stores(&binary_records(1, 5)),
    ));
    let users = path(dir, "users.tsv");
    let mut tsv = Vec::new();
    for (k, v) in binary_records(2, 5) {
        tsv.extend_from_slice(&escape(&k));
        tsv.push(b'\t');
        tsv.extend_from_slice(&escape(&v));
        tsv.push(b'\n');
    }
    std::fs::write(&users, tsv).unwrap();
    ok(lamina_run(&[
        "-q",
        "load",
        "--keyspace",
        "users",
        &src,
        &users,
    ]));
    ok(lamina_run(&[
        "put",
        "--keyspace",
        "tab\tname",
        &src,
        "k",
        "v",
    ]));
    ok(lamina_run(&["put", "--keyspace", "empty", &src, "k", "v"]));
    ok(lamina_run(&["delete", "--keyspace", "empty", &src, "k"]));
    src
}

/// TSV escapes (`\xHH` for everything but plain printable ASCII).
fn escape(d: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &b) in d.iter().enumerate() {
        if (b.is_ascii_alphanumeric() || b == b'=' || b == b'_') && !(i == 0 && b == b'V') {
            out.push(b);
        } else {
            out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
        }
    }
    out
}

fn dump(db: &str, format: &str) -> Vec<u8> {
    ok(lamina_run(&["dump", db, "--format", format]))
}

#[test]
fn every_format_round_trips_every_keyspace_exactly() {
    let tmp = tempdir();
    let src = source(tmp.path());
    let want = dump(&src, "tsv");
    let text = String::from_utf8_lossy(&want);
    assert!(
        text.contains("#:keyspace=empty\n#:keyspace=tab\\tname\nk\tv\n#:keyspace=users\n\t\\x02"),
        "the source: {text}"
    );
    for format in ["gdbm", "bdb", "bdb-print", "tsv"] {
        let file = path(tmp.path(), &format!("dump.{format}"));
        ok(lamina_run(&["dump", &src, &file, "--format", format]));
        let dst = path(tmp.path(), &format!("db-{format}"));
        let out = lamina_run(&["load", "--bulk", "--memory", "4K", &dst, &file]);
        let err = stderr(&out);
        ok(out);
        assert!(
            err.contains("without the WAL"),
            "{format}: the load says how it loaded: {err}"
        );
        assert_eq!(dump(&dst, format), dump(&src, format), "{format}");
        assert_eq!(dump(&dst, "tsv"), want, "{format}");
        let total = binary_records(1, 5).len() + binary_records(2, 5).len() + 1;
        assert!(
            err.contains(&format!("kept {total} records")),
            "{format}: {err}"
        );
        let after = lamina_run(&["check", &dst]);
        assert_eq!(code(&after), 0, "{format}: {}", stdout(&after));
        // The records went to tables, not through the WAL and the memtable.
        let stat = ok(lamina_run(&["stat", "--json", &dst]));
        let stat: serde_json::Value = serde_json::from_slice(&stat).unwrap();
        assert_eq!(stat["lifetime"]["user_bytes"].as_u64(), Some(0), "{format}");
    }
}

#[test]
fn the_last_value_of_a_repeated_key_wins_and_existing_records_stay() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "old", "kept"]));
    ok(lamina_run(&["put", &db, "a", "replaced"]));
    let input = b"a\t1\nb\t2\na\t3\n\tempty key\nb\t4\na\t5\n";
    let out = lamina_with_input(&["load", "--bulk", &db, "-"], input);
    let err = stderr(&out);
    ok(out);
    assert!(
        err.contains("kept 3 records (6 read; a repeated key keeps its last value)"),
        "{err}"
    );
    assert_eq!(tsv_of(&db), "\tempty key\na\t5\nb\t4\nold\tkept\n");
}

#[test]
fn a_full_disk_leaves_the_database_as_it_was() {
    full_disk_into_keyspace_ks(true);
}

/// Before the fix: the ingest created keyspace `ks` before it wrote the
/// tables, and a full disk after that left `ks` in the database, empty —
/// a failed load that changed the database.
#[test]
fn a_full_disk_leaves_no_keyspace_the_load_named() {
    full_disk_into_keyspace_ks(false);
}

/// Loads 20,001 records into keyspace `ks` (which exists first if
/// `ks_exists`) with a write failing at several points; a failed load
/// leaves the dump of the database as it was.
fn full_disk_into_keyspace_ks(ks_exists: bool) {
    let tmp = tempdir();
    let input = path(tmp.path(), "n.tsv");
    let mut text = ok(lamina_run(&["gen", "numbers", "20000", "--format", "tsv"]));
    text.splice(0..0, b"#:keyspace=ks\n".iter().copied());
    std::fs::write(&input, &text).unwrap();
    let mut failures = 0;
    // Failures in the sorted runs, the merged tables, the ingest and the
    // close: every other write of the load.
    for n in (1u64..=61).step_by(2) {
        let db = path(tmp.path(), &format!("db{n}"));
        ok(lamina_run(&["put", &db, "old", "kept"]));
        if ks_exists {
            ok(lamina_run(&["put", "--keyspace", "ks", &db, "7", "before"]));
        }
        let before = dump(&db, "tsv");
        let mut cmd = lamina();
        cmd.args(["-q", "load", "--bulk", "--memory", "64K", &db, &input])
            .env("LAMINA_INJECT_FAULT", format!("write:{n}"));
        let out = run_with_input(cmd, b"");
        let err = stderr(&out);
        if code(&out) == 0 {
            assert_eq!(
                ok(lamina_run(&["count", "--keyspace", "ks", &db])),
                b"20001\n"
            );
            continue;
        }
        failures += 1;
        assert_eq!(code(&out), 5, "write:{n}: {err}");
        // A failure after the ingest (closing the WAL segment at close) keeps
        // everything, and says so.
        if err.contains("the records were loaded before the failure") {
            assert_eq!(
                ok(lamina_run(&["count", "--keyspace", "ks", &db])),
                b"20001\n"
            );
            continue;
        }
        assert!(
            err.contains("No space left on device")
                && err.contains("no record was loaded (a bulk load keeps all records or none)"),
            "write:{n}: {err}"
        );
        assert_eq!(dump(&db, "tsv"), before, "write:{n}: {err}");
        let leftovers: Vec<_> = std::fs::read_dir(&db)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "write:{n}: {leftovers:?}");
    }
    assert!(failures >= 3, "the fault was hit {failures} times");
}

#[test]
fn a_malformed_record_loads_nothing() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "old", "kept"]));
    let out = lamina_with_input(
        &["load", "--bulk", "--format", "tsv", &db, "-"],
        b"a\t1\nb\t2\nno tab here\nc\t3\n",
    );
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("line 3")
            && stderr(&out)
                .contains("no record was loaded (a bulk load keeps all records or none)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tsv_of(&db), "old\tkept\n");
}

#[test]
fn no_replace_and_memory_without_bulk_are_refused() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_run(&["load", "--bulk", "--no-replace", &db]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let out = lamina_run(&["load", "--memory", "1M", &db]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}
