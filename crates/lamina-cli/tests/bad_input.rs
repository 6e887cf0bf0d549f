//! Bad input gets a clear message, a documented exit code, and leaves a
//! database that opens and holds every record before the bad one.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

fn count(db: &str) -> u64 {
    String::from_utf8(ok(lamina_run(&["count", db])))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn binary_junk_on_stdin_is_reported_and_skipped() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let mut input = b"store before 1\n".to_vec();
    let mut x = 7u32;
    for _ in 0..20_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        input.push((x >> 16) as u8);
    }
    input.extend_from_slice(b"\nstore after 2\n");
    let out = lamina_with_input(&["shell", &db], &input);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("lamina: stdin:"),
        "{}",
        stderr(&out)
    );
    let got = ok(lamina_run(&["get", &db, "before"]));
    assert_eq!(got, b"1\n");
    assert_eq!(ok(lamina_run(&["get", &db, "after"])), b"2\n");
}

#[test]
fn stop_on_error_stops_at_the_first_failing_command() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_with_input(&["shell", "-e", &db], b"store a 1\nfetch b\nstore c 3\n");
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out),
        "lamina: stdin:2.1-8: No such item found\nlamina: stopped at the first error (--stop-on-error)\n"
    );
    assert_eq!(tsv_of(&db), "a\t1\n");
}

const GDBM_DUMP: &str = "# GDBM dump file created by test\n#:version=1.1\n#:format=standard\n\
# End of header\n#:len=1\nYQ==\n#:len=1\nMQ==\n#:len=1\nYg==\n#:len=1\nMg==\n#:count=2\n# End of data\n";

fn load_fails(input: &str, message: &str, kept: u64) {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_with_input(&["-q", "load", &db], input.as_bytes());
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    if kept == 0 {
        // A load that kept nothing removes the database it created.
        assert_eq!(
            stderr(&out),
            format!("lamina: {message}; the new database was removed\n")
        );
        assert!(!std::path::Path::new(&db).exists());
        return;
    }
    assert_eq!(stderr(&out), format!("lamina: {message}\n"));
    // The database opens and holds the records before the damage.
    assert_eq!(count(&db), kept);
}

#[test]
fn damaged_gdbm_dumps() {
    let cut: String = GDBM_DUMP
        .lines()
        .take(11)
        .map(|l| format!("{l}\n"))
        .collect();
    load_fails(
        &cut,
        "line 11: truncated dump: the input ends inside a record; the record before it was loaded",
        1,
    );
    load_fails(
        &GDBM_DUMP.replacen("#:len=1\nYQ==", "#:len=2\nYQ==", 1),
        "line 6: record at line 5 decodes to 1 bytes, not its #:len=2; no record was loaded",
        0,
    );
    load_fails(
        &GDBM_DUMP.replacen("#:len=1\nYg==", "#:len=7\nYg==", 1),
        "line 11: record at line 9 is shorter than its #:len=7; the record before it was loaded",
        1,
    );
    load_fails(
        &GDBM_DUMP.replacen("Yg==", "Y*==", 1),
        "line 10: bad base64: Invalid symbol 42, offset 1; the record before it was loaded",
        1,
    );
    load_fails(
        &GDBM_DUMP.replacen("#:count=2", "#:count=5", 1),
        "line 13: the dump says #:count=5 but holds 2 records; the 2 records before it were loaded",
        2,
    );
}

#[test]
fn damaged_berkeley_db_and_tsv_input() {
    load_fails(
        "VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n 61\n 31\n 62\n",
        "line 7: truncated dump: the input ends after a key, without its value (no DATA=END); \
         the record before it was loaded",
        1,
    );
    load_fails(
        "VERSION=3\nformat=print\ntype=btree\nHEADER=END\n a\n \\zz\nDATA=END\n",
        "line 6: bad escape (expected \\\\ or \\ and two hex digits); no record was loaded",
        0,
    );
    load_fails(
        "a\t1\nb 2\n",
        "line 2: expected one tab between key and value; the record before it was loaded",
        1,
    );
    load_fails(
        &format!("\t1\n{}\t2\n", "k".repeat(65_537)),
        "record 2: key of 65537 bytes is longer than 65536; the record before it was loaded",
        1,
    );
}

#[test]
fn gdbm_binary_dumps_are_refused_with_advice() {
    let tmp = tempdir();
    let out = lamina_with_input(
        &["load", &path(tmp.path(), "db")],
        b"!\r\n! GDBM FLAT FILE DUMP -- THIS IS NOT A TEXT FILE\r\n",
    );
    assert_eq!(code(&out), 3);
    assert!(
        stderr(&out).contains("gdbm_dump --format=ascii"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_database_path_that_is_a_file() {
    let tmp = tempdir();
    let file = path(tmp.path(), "file");
    std::fs::write(&file, b"not a database").unwrap();
    for args in [
        vec!["shell", file.as_str()],
        vec!["shell", "--newdb", file.as_str()],
        vec!["load", file.as_str()],
        vec!["get", file.as_str(), "k"],
        vec!["stat", file.as_str()],
    ] {
        let out = lamina_run(&args);
        assert_eq!(code(&out), 4, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("is not a lamina database"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"not a database",
        "--newdb must not replace a file"
    );
}

#[test]
fn a_missing_database_for_reading() {
    let tmp = tempdir();
    let out = lamina_run(&["get", &path(tmp.path(), "missing"), "k"]);
    assert_eq!(code(&out), 4);
    assert!(
        !tmp.path().join("missing").exists(),
        "reading must not create a database"
    );
}

#[test]
fn a_database_locked_by_another_process() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "k", "v"]));
    // A shell that holds the database open until its input ends.
    let mut shell = lamina()
        .args(["shell", &db])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = shell.stdin.take().unwrap();
    use std::io::Write;
    stdin.write_all(b"store k2 v2\nsync\n").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let out = lamina_run(&["put", &db, "k3", "v3"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert!(stderr(&out).contains("locked"), "{}", stderr(&out));
    // Readers need no lock.
    assert_eq!(ok(lamina_run(&["get", &db, "k"])), b"v\n");
    drop(stdin);
    assert!(shell.wait().unwrap().success());
    assert_eq!(ok(lamina_run(&["get", &db, "k2"])), b"v2\n");
}

/// `lamina put` through a database path that is a symbolic link to a
/// missing directory said "I/O error on DB: File exists (os error 17)":
/// the system's `mkdir` finds the link, which exists, and lamina passed
/// its errno on. Now it says the path is a link to something missing, and
/// what to do. Before the fix the message was "File exists (os error 17)".
#[test]
fn a_database_path_that_is_a_link_to_nothing() {
    let tmp = tempdir();
    let missing = tmp.path().join("missing").join("db");
    let link = path(tmp.path(), "link");
    std::os::unix::fs::symlink(&missing, &link).unwrap();
    let out = lamina_run(&["put", &link, "k", "v"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "lamina: cannot open database {link}: I/O error on {link}: the path is a symbolic \
             link to {}, which does not exist; create it, or remove the link\n",
            missing.display()
        )
    );
    // A link to nothing further up the path is named.
    let under = format!("{link}/inner");
    let out = lamina_run(&["put", &under, "k", "v"]);
    assert!(
        stderr(&out).contains(&format!("{link} is a symbolic link to ")),
        "{}",
        stderr(&out)
    );
    assert!(!missing.exists(), "nothing is created through the link");
}

/// `lamina dump DB DB/000088.wal` wrote the dump into the database
/// directory, where the next open took it for a log segment and reported
/// corruption. An output path inside the database directory is refused
/// (exit code 2) before anything is written, for `dump` and for the
/// shell's `export`. Before the fix the dump was written there.
#[test]
fn a_dump_into_the_database_directory_is_refused() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "k", "v"]));
    for target in [format!("{db}/000088.wal"), format!("{db}/../db/dump.txt")] {
        let out = lamina_run(&["dump", &db, &target]);
        assert_eq!(code(&out), 2, "{target}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "lamina: {target} is inside the database directory {db}: lamina would take a \
                 file written there for one of the database's; write it elsewhere\n"
            )
        );
    }
    let out = lamina_with_input(
        &["shell", &db],
        format!("export {db}/000089.wal\n").as_bytes(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("export: ")
            && stderr(&out).contains("is inside the database directory"),
        "{}",
        stderr(&out)
    );
    for name in ["000088.wal", "dump.txt", "000089.wal"] {
        assert!(!tmp.path().join("db").join(name).exists(), "{name} written");
    }
    ok(lamina_run(&["check", &db]));
    assert_eq!(ok(lamina_run(&["get", &db, "k"])), b"v\n");
    // Beside the database is fine.
    ok(lamina_run(&["dump", &db, &path(tmp.path(), "dump.txt")]));
}

/// `lamina gen numbers 3000 --from 5000` printed nothing and exited 0: a
/// range that holds no record is bad input (exit code 3), said in words.
/// Before the fix it succeeded silently.
#[test]
fn gen_refuses_an_empty_range() {
    let out = lamina_run(&["gen", "numbers", "3000", "--from", "5000"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        "lamina: --from 5000 is past the last record, 3000: the range holds no record \
         (gen numbers N makes records 5000 through N)\n"
    );
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_run(&["gen", "numbers", "3", "--from", "4", "--into", &db]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        !tmp.path().join("db").exists(),
        "no database made for nothing"
    );
    assert_eq!(
        ok(lamina_run(&["gen", "numbers", "7", "--from", "7"])),
        b"store 7 \"seven\"\n"
    );
}
