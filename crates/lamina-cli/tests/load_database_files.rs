//! `lamina load DB FILE` with a gdbm or Berkeley DB database file (not a
//! dump): converted in one command through the library's dump tool, and a
//! failed load leaves no database behind that it created.
//!
//! Before: the file was read as tab-separated text ("line 1: expected one
//! tab between key and value"), exit code 3, and an empty database stayed.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use std::path::Path;

/// A gdbm database made by gdbmtool from `lamina gen numbers 500` and a few
/// binary records.
fn gdbm_file(dir: &Path) -> String {
    let file = path(dir, "x.gdbm");
    let mut input = ok(lamina_run(&["gen", "numbers", "500"]));
    for b in 1..=255u8 {
        input.extend_from_slice(b"store ");
        input.extend_from_slice(&quote(&[b'k', b]));
        input.push(b' ');
        input.extend_from_slice(&quote(&[b, b'v']));
        input.push(b'\n');
    }
    let mut cmd = std::process::Command::new("gdbmtool");
    cmd.args(["--newdb", &file]);
    let out = run_with_input(cmd, &input);
    assert!(out.status.success(), "gdbmtool: {}", stderr(&out));
    file
}

#[test]
fn a_gdbm_database_file_loads_in_one_command() {
    if !have("gdbmtool", "gdbm files") || !have("gdbm_dump", "gdbm files") {
        return;
    }
    let tmp = tempdir();
    let file = gdbm_file(tmp.path());
    let via_dump = path(tmp.path(), "via-dump");
    let dump = std::process::Command::new("gdbm_dump")
        .arg(&file)
        .output()
        .unwrap();
    assert!(dump.status.success());
    ok(lamina_with_input(&["load", &via_dump], &dump.stdout));
    let direct = path(tmp.path(), "direct");
    let out = lamina_run(&["load", &direct, &file]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("gdbm database through gdbm_dump"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tsv_of(&direct), tsv_of(&via_dump));
    // gen numbers 500 makes records 0 through 500.
    assert_eq!(tsv_of(&direct).lines().count(), 501 + 255);
}

#[test]
fn a_berkeley_db_file_loads_in_one_command_with_its_sub_databases() {
    if !have("db5.3_load", "Berkeley DB files") || !have("db5.3_dump", "Berkeley DB files") {
        return;
    }
    let tmp = tempdir();
    let file = path(tmp.path(), "x.db");
    let dump = "VERSION=3\nformat=bytevalue\ndatabase=one\ntype=btree\nHEADER=END\n 61\n 31\n 00ff\n 0a0d\nDATA=END\n\
                VERSION=3\nformat=bytevalue\ndatabase=two\ntype=hash\nHEADER=END\n 62\n 32\nDATA=END\n";
    let mut cmd = std::process::Command::new("db5.3_load");
    cmd.arg(&file);
    let out = run_with_input(cmd, dump.as_bytes());
    assert!(out.status.success(), "db5.3_load: {}", stderr(&out));
    let db = path(tmp.path(), "db");
    let out = lamina_run(&["load", &db, &file]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        tsv_bytes_of(&db),
        b"#:keyspace=one\n\\x00\xff\t\\n\\r\na\t1\n#:keyspace=two\nb\t2\n"
    );
}

#[test]
fn a_damaged_database_file_leaves_no_database_behind() {
    if !have("gdbmtool", "gdbm files") || !have("gdbm_dump", "gdbm files") {
        return;
    }
    let tmp = tempdir();
    let file = gdbm_file(tmp.path());
    let bytes = std::fs::read(&file).unwrap();
    let cut = path(tmp.path(), "cut.gdbm");
    std::fs::write(&cut, &bytes[..bytes.len().min(9000)]).unwrap();
    let db = path(tmp.path(), "db");
    let out = lamina_run(&["load", &db, &cut]);
    assert_ne!(code(&out), 0);
    let err = stderr(&out);
    assert!(err.contains("gdbm_dump failed"), "{err}");
    assert!(
        err.ends_with("no record was loaded: the new database was removed\n"),
        "{err}"
    );
    assert!(
        !Path::new(&db).exists(),
        "the database the load created is gone"
    );
}

#[test]
fn a_missing_dump_tool_is_named_with_its_package() {
    if !have("gdbmtool", "gdbm files") {
        return;
    }
    let tmp = tempdir();
    let file = gdbm_file(tmp.path());
    let db = path(tmp.path(), "db");
    let empty = tempdir();
    let out = lamina()
        .env("PATH", empty.path())
        .args(["load", &db, &file])
        .output()
        .unwrap();
    assert_eq!(code(&out), 4);
    let err = stderr(&out);
    assert!(
        err.contains(
            "is a gdbm database file; reading it needs gdbm_dump, from Debian's gdbmtool package"
        ),
        "{err}"
    );
    assert!(!Path::new(&db).exists());
}

#[test]
fn a_malformed_dump_leaves_no_new_database_behind() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_with_input(&["-q", "load", &db], b"no tab here\n");
    assert_eq!(code(&out), 3);
    assert_eq!(
        stderr(&out),
        "lamina: line 1: expected one tab between key and value; no record was loaded; \
         the new database was removed\n"
    );
    assert!(!Path::new(&db).exists());
    // Into an existing database, what came before is kept, as always.
    ok(lamina_run(&["put", &db, "k", "v"]));
    let out = lamina_with_input(&["-q", "load", &db], b"no tab here\n");
    assert_eq!(code(&out), 3);
    assert_eq!(tsv_of(&db), "k\tv\n");
}

#[test]
fn a_database_file_on_standard_input_is_refused_with_advice() {
    if !have("gdbmtool", "gdbm files") {
        return;
    }
    let tmp = tempdir();
    let file = gdbm_file(tmp.path());
    let db = path(tmp.path(), "db");
    let out = lamina_with_input(&["load", &db], &std::fs::read(&file).unwrap());
    assert_eq!(code(&out), 3);
    assert!(
        stderr(&out).contains("standard input holds a gdbm database file"),
        "{}",
        stderr(&out)
    );
    assert!(!Path::new(&db).exists());
}
