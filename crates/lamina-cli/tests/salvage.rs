//! `lamina salvage DAMAGED NEW`: every readable record of a damaged
//! database into a new one that opens and passes `check`, each skipped part
//! reported with its file and offset. Before, a damaged database had no
//! path out but a restore (`lamina dump` stops at the first damage).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use lamina::{Db, Options};
use std::path::Path;

/// A database with a large table (`gen numbers 20000`), a named keyspace,
/// values in a blob file, and writes still only in the WAL.
fn damaged_candidate(dir: &Path) -> String {
    let db = path(dir, "db");
    ok(lamina_run(&[
        "-q", "gen", "numbers", "20000", "--into", &db,
    ]));
    let d = Db::open(&db, Options::default()).unwrap();
    let ks = d.keyspace("colours").unwrap();
    ks.put(b"red", b"ff0000").unwrap();
    d.put(b"big", &vec![7u8; 10_000]).unwrap();
    d.delete(b"0").unwrap();
    d.flush().unwrap();
    d.put(b"in the wal", b"only").unwrap();
    d.close().unwrap();
    db
}

fn files(db: &str, ext: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn scribble(file: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(b"XXXXXXXXXXXXXXXXXXXXXXXX", at).unwrap();
}

#[test]
fn a_healthy_database_is_copied_whole() {
    let tmp = tempdir();
    let db = damaged_candidate(tmp.path());
    let new = path(tmp.path(), "new");
    let out = lamina_run(&["salvage", &db, &new]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("0 damaged parts skipped"),
        "{}",
        stdout(&out)
    );
    assert_eq!(tsv_of(&new), tsv_of(&db));
    ok(lamina_run(&["check", &new]));
}

#[test]
fn a_damaged_block_is_skipped_and_reported_with_file_and_offset() {
    let tmp = tempdir();
    let db = damaged_candidate(tmp.path());
    let big = files(&db, "sst")
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let len = std::fs::metadata(&big).unwrap().len();
    scribble(&big, len / 2);
    let dump = lamina_run(&["dump", &db]);
    assert_ne!(code(&dump), 0, "the damage is real");
    let new = path(tmp.path(), "new");
    let out = lamina_run(&["salvage", &db, &new]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    let name = big.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        err.contains(&format!("skipped {}", big.display())) && err.contains(" at offset "),
        "{err}"
    );
    assert!(err.contains(&name) && err.contains("checksum"), "{err}");
    ok(lamina_run(&["check", &new]));
    let got = tsv_of(&new);
    // What the damage spared: the keys before it, the other files' records.
    assert!(got.contains("1\tone\n"), "the table's first keys");
    assert!(got.contains("in the wal\tonly\n"));
    assert!(
        !got.starts_with("0\t"),
        "the deletion of 0 is newer than its put"
    );
    assert_eq!(
        ok(lamina_run(&["get", "--keyspace", "colours", &new, "red"])),
        b"ff0000\n"
    );
    let n: u64 = stdout(&lamina_run(&["count", &new]))
        .trim()
        .parse()
        .unwrap();
    assert!(n > 5000 && n < 20_000 + 3, "{n} records salvaged");
}

#[test]
fn a_damaged_wal_record_and_blob_value_are_skipped() {
    let tmp = tempdir();
    let db = damaged_candidate(tmp.path());
    let wal = files(&db, "wal").pop().unwrap();
    scribble(&wal, 50);
    let blob = files(&db, "blob").pop().unwrap();
    scribble(&blob, 100);
    let new = path(tmp.path(), "new");
    let out = lamina_run(&["salvage", &db, &new]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("skipped {}", wal.display())), "{err}");
    assert!(
        err.contains(&format!("skipped {}", blob.display())),
        "{err}"
    );
    ok(lamina_run(&["check", &new]));
    let got = tsv_of(&new);
    assert!(!got.contains("in the wal"), "{got}");
    assert!(!got.contains("big\t"));
    assert!(got.contains("20000\ttwenty thousand\n"));
}

#[test]
fn an_existing_destination_is_refused() {
    let tmp = tempdir();
    let db = damaged_candidate(tmp.path());
    let new = path(tmp.path(), "new");
    std::fs::create_dir(&new).unwrap();
    std::fs::write(Path::new(&new).join("mine"), b"keep").unwrap();
    let out = lamina_run(&["salvage", &db, &new]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("already exists; salvage writes a new database"));
    assert_eq!(
        std::fs::read(Path::new(&new).join("mine")).unwrap(),
        b"keep"
    );
}
