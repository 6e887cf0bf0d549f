//! Large values in blob files as the CLI shows them: `stat` reports the blob
//! files and the threshold, `inspect blob` lists one file's records.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

#[test]
fn stat_and_inspect_show_blob_files() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let big = vec![b'x'; 20_000];
    ok(lamina_with_input(&["put", &db, "big"], &big));
    ok(lamina_run(&["put", &db, "small", "v"]));
    // Opening replays the WAL into a table; the large value goes to a blob file.
    ok(lamina_run(&["compact", &db]));
    let stat = String::from_utf8(ok(lamina_run(&["stat", &db]))).unwrap();
    let line = stat
        .lines()
        .find(|l| l.starts_with("blob files"))
        .unwrap_or_else(|| panic!("no blob line in:\n{stat}"));
    assert!(line.contains("1 files"), "{line}");
    assert!(line.contains("values of 4.0 KiB or more"), "{line}");
    let json: serde_json::Value =
        serde_json::from_slice(&ok(lamina_run(&["stat", "--json", &db]))).unwrap();
    assert_eq!(json["blobs"]["files"], 1);
    assert_eq!(json["blobs"]["value_bytes"], 20_000);
    assert_eq!(json["blobs"]["threshold"], 4096);
    let blob = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "blob"))
        .expect("a blob file");
    let listing = stdout(&lamina_run(&["inspect", "blob", blob.to_str().unwrap()]));
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    assert!(lines[1].starts_with("ks 0 big\toffset "), "{listing}");
    assert!(lines[1].contains(" length 20000 "), "{listing}");
    assert_eq!(lines[2], "footer: 1 records, 20000 value bytes");
    let table = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .expect("a table");
    let dump = stdout(&lamina_run(&["inspect", "table", table.to_str().unwrap()]));
    let name = blob.file_name().unwrap().to_str().unwrap();
    assert!(
        dump.lines().any(|l| l.starts_with("ks 0 big @")
            && l.contains("Blob")
            && l.contains(&format!("-> {name} offset 39 length 20000"))),
        "{dump}"
    );
    let got = ok(lamina_run(&["get", &db, "big"]));
    assert_eq!(got.len(), 20_001, "the value and a newline");
}

/// Found by a hostile test: a value written with `lamina put` (a `Sync`
/// commit) lives in a blob file written at commit until the next open
/// flushes it. With that file deleted, `check` exited 6, but the next
/// command that opened the database read-write took the value for a write
/// torn by a crash, retired the log, and went on; `check` then said OK and
/// the acknowledged value was gone for good. Now every open refuses, as
/// `check` does, and nothing is truncated.
#[test]
fn a_deleted_blob_file_of_a_synced_put_is_damage_at_every_command() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_with_input(&["put", &db, "big"], &vec![b'x'; 20_000]));
    let blob = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "blob"))
        .expect("the blob file written at commit");
    let name = blob.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::remove_file(&blob).unwrap();
    let files = || {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&db)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !p.ends_with("LOCK"))
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                (p.file_name().unwrap().to_str().unwrap().to_string(), bytes)
            })
            .collect();
        v.sort();
        v
    };
    let before = files();
    for args in [
        &["check", &db][..],
        &["put", &db, "other", "v"],
        &["get", &db, "big"],
        &["check", &db],
    ] {
        let out = lamina_run(args);
        assert_eq!(code(&out), 6, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&name), "{args:?}: {}", stderr(&out));
        assert!(files() == before, "{args:?} changed a file");
    }
}
