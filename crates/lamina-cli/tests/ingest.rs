//! `lamina ingest DB FILE...`: tables from a table writer land whole, or not
//! at all with a message naming the damaged file.

mod common;

use common::{code, lamina_run, ok, path, stderr, tempdir};
use lamina::{TableWriter, TableWriterOptions};
use std::path::Path;

fn write(file: &Path, from: u32, to: u32, tag: &str) {
    let mut w = TableWriter::create(file, TableWriterOptions::default()).expect("writer");
    for i in from..to {
        w.put(
            format!("k{i:04}").as_bytes(),
            format!("{tag}{i}").as_bytes(),
        )
        .expect("put");
    }
    w.finish().expect("finish");
}

#[test]
fn ingest_adds_every_file_and_a_later_file_wins() {
    let dir = tempdir();
    let (a, b, db) = (
        path(dir.path(), "a.sst"),
        path(dir.path(), "b.sst"),
        path(dir.path(), "db"),
    );
    write(Path::new(&a), 0, 100, "a");
    write(Path::new(&b), 50, 150, "b");
    let out = stdout_of(&["ingest", &db, &a, &b, "--move"]);
    assert!(out.contains("ingested 2 files, 200 records"), "{out}");
    assert_eq!(stdout_of(&["get", &db, "k0010"]).trim_end(), "a10");
    assert_eq!(stdout_of(&["get", &db, "k0060"]).trim_end(), "b60");
    assert_eq!(stdout_of(&["count", &db]).trim_end(), "150");
    assert!(!Path::new(&a).exists(), "--move removes the sources");
}

#[test]
fn a_damaged_file_adds_nothing_and_is_named() {
    let dir = tempdir();
    let (a, b, db) = (
        path(dir.path(), "a.sst"),
        path(dir.path(), "b.sst"),
        path(dir.path(), "db"),
    );
    write(Path::new(&a), 0, 100, "a");
    write(Path::new(&b), 200, 300, "b");
    let mut bytes = std::fs::read(&b).expect("read");
    bytes[10] ^= 0xff;
    std::fs::write(&b, bytes).expect("write");
    let out = lamina_run(&["ingest", &db, &a, &b]);
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("b.sst"), "{}", stderr(&out));
    assert_eq!(stdout_of(&["count", &db]).trim_end(), "0");
    assert!(Path::new(&a).exists());
}

fn stdout_of(args: &[&str]) -> String {
    String::from_utf8(ok(lamina_run(args))).expect("utf-8")
}
