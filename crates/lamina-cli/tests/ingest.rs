//! `lamina ingest DB FILE...`: tables from a table writer land whole, or not
//! at all with a message naming the damaged file.

mod common;

use common::{code, lamina_run, ok, path, stderr, tempdir};
use lamina::{TableWriter, TableWriterOptions};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

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
    assert_eq!(code(&out), 3, "malformed input: {}", stderr(&out));
    assert!(stderr(&out).contains("b.sst"), "{}", stderr(&out));
    assert_eq!(stdout_of(&["count", &db]).trim_end(), "0");
    assert!(Path::new(&a).exists());
}

fn stdout_of(args: &[&str]) -> String {
    String::from_utf8(ok(lamina_run(args))).expect("utf-8")
}

/// The `.sst` files in the database directory `db`.
fn tables_of(db: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(db)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    names.sort();
    names
}

/// Found by a hostile test: `lamina ingest DB DB/000003.sst --move`, naming
/// a table the database lists (a writer's table linked in by an earlier
/// `--move`, so it passes every check of a writer's table), exited 0 after
/// linking it in again and removing the name given — the live table. The
/// database no longer opened ("table 000003.sst listed in the manifest is
/// missing"). Now a file of the database is refused for `--move` by any
/// path that reaches it (`DB/../DB/...`, a symbolic link, a hard link), with
/// exit code 3, and nothing is removed. This failed before the fix (exit 0,
/// then the database did not open).
#[test]
fn moving_a_table_of_the_database_is_refused() {
    let dir = tempdir();
    let (a, db) = (path(dir.path(), "a.sst"), path(dir.path(), "db"));
    write(Path::new(&a), 0, 100, "a");
    let out = stdout_of(&["ingest", &db, &a, "--move"]);
    assert!(out.contains("(linked)"), "{out}");
    let [own] = tables_of(&db).try_into().expect("one table");
    let symlink = path(dir.path(), "link.sst");
    std::os::unix::fs::symlink(format!("{db}/{own}"), &symlink).expect("symlink");
    let hard = path(dir.path(), "hard.sst");
    std::fs::hard_link(format!("{db}/{own}"), &hard).expect("hard link");
    for (given, want) in [
        (format!("{db}/{own}"), "in the database directory"),
        (format!("{db}/../db/{own}"), "in the database directory"),
        (symlink, "in the database directory"),
        (hard, "another name of the database's file"),
    ] {
        let out = lamina_run(&["ingest", &db, &given, "--move"]);
        assert_eq!(code(&out), 3, "{given}: {}", stderr(&out));
        assert!(stderr(&out).contains(&given), "{}", stderr(&out));
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
    }
    assert_eq!(tables_of(&db), [own]);
    assert_eq!(stdout_of(&["count", &db]).trim_end(), "100");
    assert_eq!(code(&lamina_run(&["check", &db])), 0);
}

/// Found by a hostile test: `lamina ingest DB pipe.sst` where `pipe.sst` is
/// a FIFO blocked forever, opening it for reading until some writer came.
/// Now the file's type is looked at before it is opened, and anything but
/// a regular file is refused at once (exit 3). Before the fix this test
/// failed on its timeout.
#[test]
fn a_fifo_is_refused_at_once() {
    let dir = tempdir();
    let (fifo, db) = (path(dir.path(), "pipe.sst"), path(dir.path(), "db"));
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let mut child = common::lamina()
        .args(["ingest", &db, &fifo])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().expect("kill");
            let _ = child.wait();
            panic!("lamina ingest of a FIFO still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("pipe.sst"), "{}", stderr(&out));
    assert!(stderr(&out).contains("FIFO"), "{}", stderr(&out));
}

/// Found by a hostile test: `lamina ingest DB garbage.sst` exited 6, "the
/// database is damaged", though only the input was bad and the database
/// was fine. A damaged or garbage input table is malformed input: exit 3,
/// naming the file. This failed before the fix (exit 6).
#[test]
fn a_garbage_table_is_malformed_input() {
    let dir = tempdir();
    let (garbage, db) = (path(dir.path(), "garbage.sst"), path(dir.path(), "db"));
    std::fs::write(&garbage, vec![0x5a_u8; 300]).expect("write");
    let out = lamina_run(&["ingest", &db, &garbage]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("garbage.sst: it is damaged or not a table"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout_of(&["count", &db]).trim_end(), "0");
    assert!(Path::new(&garbage).exists());
}

/// `--move` of a relative symbolic link to a table: the link used to be
/// made to the symbolic link itself, so the database's new table was a
/// symbolic link naming a file relative to the database directory, which
/// is not there. The table's file is linked in, and the name given removed.
/// This failed before the fix (the database could not read the table).
#[test]
fn moving_a_symbolic_link_links_the_table_it_names() {
    let dir = tempdir();
    let src = path(dir.path(), "src");
    std::fs::create_dir(&src).expect("mkdir");
    let (a, link, db) = (
        path(Path::new(&src), "a.sst"),
        path(Path::new(&src), "link.sst"),
        path(dir.path(), "db"),
    );
    write(Path::new(&a), 0, 100, "a");
    std::os::unix::fs::symlink("a.sst", &link).expect("symlink");
    let out = stdout_of(&["ingest", &db, &link, "--move"]);
    assert!(out.contains("(linked)"), "{out}");
    assert!(!Path::new(&link).exists(), "the name given is removed");
    let [own] = tables_of(&db).try_into().expect("one table");
    let meta = std::fs::symlink_metadata(format!("{db}/{own}")).expect("stat");
    assert!(meta.file_type().is_file(), "a regular file, not a link");
    assert_eq!(stdout_of(&["get", &db, "k0042"]).trim_end(), "a42");
    assert_eq!(code(&lamina_run(&["check", &db])), 0);
}
