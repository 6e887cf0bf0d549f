//! The single-purpose subcommands: get, put, delete, scan, count, compact,
//! backup, check, stat, and progress output when stderr is not a terminal.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

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

#[test]
fn get_put_delete() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "k", "v"]));
    ok(lamina_with_input(
        &["put", &db, "from-stdin"],
        b"line 1\nline 2\n",
    ));
    ok(lamina_run(&["put", "--hex", &db, "00ff", "0a0b"]));
    assert_eq!(ok(lamina_run(&["get", &db, "k"])), b"v\n");
    assert_eq!(
        ok(lamina_run(&["get", &db, "from-stdin"])),
        b"line 1\nline 2\n\n"
    );
    assert_eq!(ok(lamina_run(&["get", "--hex", &db, "00ff"])), b"0a0b\n");
    let missing = lamina_run(&["get", &db, "nope"]);
    assert_eq!(
        (code(&missing), stderr(&missing).as_str()),
        (1, "lamina: no such key: nope\n")
    );
    ok(lamina_run(&["delete", &db, "k", "nope"]));
    let strict = lamina_run(&["delete", "--must-exist", &db, "from-stdin", "nope"]);
    assert_eq!(code(&strict), 1);
    assert_eq!(ok(lamina_run(&["count", &db])), b"1\n");
    // The empty key is a key like any other.
    ok(lamina_run(&["put", &db, "", "v"]));
    assert_eq!(ok(lamina_run(&["get", &db, ""])), b"v\n");
    assert_eq!(ok(lamina_run(&["count", &db])), b"2\n");
    ok(lamina_run(&["delete", "--must-exist", &db, ""]));
    assert_eq!(ok(lamina_run(&["count", &db])), b"1\n");
}

#[test]
fn scan_ranges_prefixes_reverse_limit() {
    let tmp = tempdir();
    let db = numbers_db(&tmp, 1200);
    let scan = |args: &[&str]| {
        let mut all = vec!["scan", db.as_str()];
        all.extend_from_slice(args);
        String::from_utf8(ok(lamina_run(&all))).unwrap()
    };
    assert_eq!(scan(&["--limit", "3"]), "0\tzero\n1\tone\n10\tten\n");
    assert_eq!(
        scan(&["--from", "1199", "-k", "-l", "3"]),
        "1199\n12\n120\n"
    );
    assert_eq!(
        scan(&["--from", "119", "--to", "1191", "-k"]),
        "119\n1190\n"
    );
    assert_eq!(
        scan(&["--prefix", "115", "-k"]),
        "115\n1150\n1151\n1152\n1153\n1154\n1155\n1156\n1157\n1158\n1159\n"
    );
    assert_eq!(
        scan(&["--reverse", "--limit", "2"]),
        "999\tnine hundred ninety-nine\n998\tnine hundred ninety-eight\n"
    );
    assert_eq!(
        scan(&["--prefix", "12", "--reverse", "-k", "-l", "2"]),
        "129\n128\n"
    );
    assert_eq!(ok(lamina_run(&["count", &db, "--prefix", "11"])), b"111\n");
}

#[test]
fn compact_backup_check_stat() {
    let tmp = tempdir();
    let db = numbers_db(&tmp, 20_000);
    let out = String::from_utf8(ok(lamina_run(&["-q", "compact", &db]))).unwrap();
    assert!(out.starts_with("compacted "), "{out}");
    let copy = path(tmp.path(), "copy");
    ok(lamina_run(&["backup", &db, &copy]));
    assert!(tsv_bytes_of(&copy) == tsv_bytes_of(&db));
    let again = lamina_run(&["backup", &db, &copy]);
    assert_eq!(code(&again), 2, "a backup never overwrites");
    let check = String::from_utf8(ok(lamina_run(&["-q", "check", &copy]))).unwrap();
    assert!(check.contains(": OK ("), "{check}");
    assert!(check.contains("20,001 entries"), "{check}");
    let stat = String::from_utf8(ok(lamina_run(&["stat", &db]))).unwrap();
    for part in [
        "level  tables",
        "average key",
        "compression",
        "filters",
        "space amp.",
        "write amp.",
        "advice:",
    ] {
        assert!(stat.contains(part), "missing {part:?} in\n{stat}");
    }
}

#[test]
fn check_reports_damage_with_exit_code_6() {
    let tmp = tempdir();
    let db = numbers_db(&tmp, 5000);
    let table = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .expect("a table");
    let mut bytes = std::fs::read(&table).unwrap();
    let mid = bytes.len() / 3;
    bytes[mid] ^= 0x55;
    std::fs::write(&table, &bytes).unwrap();
    let out = lamina_run(&["-q", "check", &db]);
    assert_eq!(code(&out), 6, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lamina: damage: "),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(".sst"),
        "the message names the file: {}",
        stderr(&out)
    );
}

#[test]
fn progress_lines_when_stderr_is_not_a_terminal() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let input = ok(lamina_run(&["gen", "numbers", "30000"]));
    let out = lamina_with_input(
        &[
            "--progress-interval",
            "0",
            "shell",
            "--progress",
            "--total",
            "30001",
            &db,
        ],
        &input,
    );
    let err = stderr(&ok_keep(out));
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() >= 2, "{err}");
    assert!(lines[0].starts_with("lamina shell: "), "{err}");
    assert!(
        lines[0].contains("records/s") && lines[0].contains("ETA"),
        "{err}"
    );
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("lamina shell: done: 30,001 records"),
        "{err}"
    );
    // Without --progress, nothing.
    let quiet = lamina_with_input(&["shell", &db], b"store a b\n");
    assert_eq!(stderr(&quiet), "");
}

fn ok_keep(out: std::process::Output) -> std::process::Output {
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn inspect_wal_table_and_manifest() {
    let tmp = tempdir();
    let db = numbers_db(&tmp, 300);
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let find = |pred: &dyn Fn(&str) -> bool| {
        files
            .iter()
            .find(|p| pred(&p.file_name().unwrap().to_string_lossy()))
            .unwrap()
            .clone()
    };
    let table = find(&|n| n.ends_with(".sst"));
    let text = String::from_utf8(ok(lamina_run(&[
        "inspect",
        "table",
        table.to_str().unwrap(),
    ])))
    .unwrap();
    assert!(text.starts_with("table "), "{text}");
    assert!(text.contains("\nks 0 0 @1 Put\tzero\n"), "{text}");
    assert_eq!(text.lines().count(), 1 + 301);
    let manifest = find(&|n| n.starts_with("MANIFEST-"));
    let text = String::from_utf8(ok(lamina_run(&[
        "inspect",
        "manifest",
        manifest.to_str().unwrap(),
    ])))
    .unwrap();
    assert!(text.starts_with("edit 0: VersionEdit {"), "{text}");

    // A WAL with records: a shell holds the database open after a sync.
    let mut shell = lamina()
        .args(["shell", &db])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = shell.stdin.take().unwrap();
    use std::io::Write;
    stdin
        .write_all(b"store a 1\nsync\nstore b 2\nsync\n")
        .unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut wals: Vec<std::path::PathBuf> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wal"))
        .collect();
    wals.sort();
    let text = String::from_utf8(ok(lamina_run(&[
        "inspect",
        "wal",
        wals.last().unwrap().to_str().unwrap(),
    ])))
    .unwrap();
    drop(stdin);
    assert!(shell.wait().unwrap().success());
    assert!(text.contains("record 0: "), "{text}");
    assert!(text.contains("1 operations"), "{text}");
    assert!(text.contains("end at offset"), "{text}");
}
