//! Recovery of values written to a blob file at commit
//! (docs/format.md#blob-files-written-at-commit): a value missing from its
//! blob file is a torn tail of the log only where a crash could have torn
//! it, past the last durable point of that file. A value a sync made
//! durable (a `Sync` commit, `sync()`, `close()`) that is missing or cut
//! is damage: every open, read-only or read-write, reports it as
//! corruption naming the blob file and the offset, `check` says the same,
//! and nothing is truncated, so the next open reports it again.

use lamina::fs::{FileSystem, MemFs};
use lamina::{Batch, Db, Durability, Error, Options};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const DIR: &str = "/db";

fn opts(fs: &MemFs, read_only: bool) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        read_only,
        ..Options::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:03}").into_bytes()
}

/// 20 KB, past the default threshold: written to the blob file at commit.
fn value(i: usize) -> Vec<u8> {
    (0..20_000).map(|j| (i * 31 + j * 7 + 1) as u8).collect()
}

fn after(n: usize) -> Model {
    (0..n).map(|i| (key(i), value(i))).collect()
}

fn contents(db: &Db) -> Model {
    db.iter().collect::<Result<_, _>>().expect("iterate")
}

/// Puts the keys `from..to`, each a commit of its own with `durability`.
fn put(db: &Db, from: usize, to: usize, durability: Durability) {
    for i in from..to {
        let mut b = Batch::new();
        b.put(&key(i), &value(i));
        db.write_with(b, durability).expect("put");
    }
}

/// The one blob file of the database: its name and path.
fn the_blob_file(fs: &MemFs) -> (String, PathBuf) {
    let names: Vec<String> = fs
        .file_names(Path::new(DIR))
        .into_iter()
        .filter(|n| n.ends_with(".blob"))
        .collect();
    let [name] = names.as_slice() else {
        panic!("one blob file, not {names:?}");
    };
    (name.clone(), Path::new(DIR).join(name))
}

/// Every file of the database with its bytes.
fn snapshot(fs: &MemFs) -> BTreeMap<String, Vec<u8>> {
    fs.file_names(Path::new(DIR))
        .into_iter()
        .filter(|n| n != "LOCK")
        .map(|n| {
            let bytes = fs.read_all(&Path::new(DIR).join(&n)).expect("read");
            (n, bytes)
        })
        .collect()
}

/// The database in `fs` as the user of the finding had it: 50 `Sync` puts
/// of 20 KB values, then `close()`. Returns its blob file.
fn fifty_sync_puts_closed(fs: &MemFs) -> (String, PathBuf) {
    let db = Db::open(DIR, opts(fs, false)).expect("open");
    put(&db, 0, 50, Durability::Sync);
    db.close().expect("close");
    the_blob_file(fs)
}

/// Asserts that every open of the damaged database in `fs`, read-only and
/// read-write, twice each, fails with the same corruption naming blob file
/// `name` (and, where given, the offset), and changes no file.
fn every_open_reports(fs: &MemFs, name: &str, offset: Option<u64>) {
    let before = snapshot(fs);
    let mut first: Option<String> = None;
    for round in 0..2 {
        for read_only in [true, false] {
            let what = format!("round {round}, read_only {read_only}");
            let err = Db::open(DIR, opts(fs, read_only))
                .map(|db| contents(&db).len())
                .expect_err(&format!(
                    "{what}: durable values are gone, the open must say so"
                ));
            let Error::Corruption {
                file, offset: at, ..
            } = &err
            else {
                panic!("{what}: not corruption: {err:?}");
            };
            assert!(
                file.ends_with(name),
                "{what}: names {} instead of the blob file: {err}",
                file.display()
            );
            if let Some(o) = offset {
                assert_eq!(*at, o, "{what}: {err}");
            }
            let text = err.to_string();
            match &first {
                None => first = Some(text),
                Some(f) => assert_eq!(&text, f, "{what}: every open says the same"),
            }
            assert_eq!(snapshot(fs), before, "{what}: the open changed a file");
        }
    }
}

/// Found by a hostile test of the Python module: 50 `Sync` puts of 20 KB
/// values (`lamina.open(path, 'ns')`), `close()`, then the blob file of
/// the unflushed memtable deleted. A read-only open succeeded and all 50
/// values were gone: recovery took the missing value of the first WAL
/// record for a write torn by a power loss and ended the log there. The
/// next read-write open made the loss permanent (the log was retired and
/// `check` then said OK). Every one of those writes had been acknowledged
/// durable, its value synced before its WAL record.
#[test]
fn a_deleted_blob_file_of_synced_puts_is_corruption_at_every_open() {
    let fs = MemFs::new();
    let (name, path) = fifty_sync_puts_closed(&fs);
    fs.remove_file(&path).expect("remove");
    every_open_reports(&fs, &name, None);
}

/// The same database with its blob file cut in the middle of value 30:
/// before the fix 30 values came back and 20 were silently dropped, the
/// cut taken for a write a crash did not finish.
#[test]
fn a_blob_file_of_synced_puts_cut_mid_value_is_corruption_at_every_open() {
    let fs = MemFs::new();
    let (name, path) = fifty_sync_puts_closed(&fs);
    // Record 30's value starts after 30 records of 16 + 10 + 20,000 bytes
    // (header, tree key `00000000 key030`... 4 + 6, value) and the file's
    // 16-byte header, and its own 26 bytes of record header and key.
    let record = 16 + 4 + 6 + 20_000;
    let value_30 = (16 + 30 * record + 26) as u64;
    fs.truncate(&path, value_30 + 7_000).expect("cut");
    every_open_reports(&fs, &name, Some(value_30));
}

/// `Sync` puts and no `close()`: a power loss keeps every one (their
/// values were synced before their WAL records). The blob file deleted
/// afterwards is damage, not a torn tail: the WAL holds the proof that it
/// was synced.
#[test]
fn a_deleted_blob_file_of_synced_puts_is_corruption_after_a_power_loss() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs, false)).expect("open");
    put(&db, 0, 10, Durability::Sync);
    let crashed = fs.crash_clone();
    drop(db);
    {
        let db = Db::open(DIR, opts(&crashed.crash_clone(), true)).expect("intact");
        assert_eq!(contents(&db), after(10), "a power loss keeps synced puts");
    }
    let (name, path) = the_blob_file(&crashed);
    crashed.remove_file(&path).expect("remove");
    every_open_reports(&crashed, &name, None);
}

/// What a killed process leaves: every byte handed to the kernel, synced
/// or not (the page cache outlives the process), in a file system of its own.
fn killed_image(fs: &MemFs) -> MemFs {
    let image = MemFs::new();
    image.create_dir_all(Path::new(DIR)).expect("mkdir");
    for (name, bytes) in snapshot(fs) {
        let mut f = image.create(&Path::new(DIR).join(name)).expect("create");
        f.append(&bytes).expect("write");
        f.sync_data().expect("sync");
    }
    image.sync_dir(Path::new(DIR)).expect("sync dir");
    image
}

/// Values past the last sync are what a crash may tear: after 10 `Sync`
/// puts and 10 `Os` ones, the process killed and the blob file cut inside
/// value 15 (never synced), the log ends there, quietly, at every open,
/// and a read-only handle's `check` notes the tear rather than calling it
/// damage (before, it called it damage while the open dropped it); cut
/// inside value 5 (synced), it is corruption at every open.
#[test]
fn only_values_past_the_last_sync_may_be_torn() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs, false)).expect("open");
    put(&db, 0, 10, Durability::Sync);
    put(&db, 10, 20, Durability::Os);
    let image = killed_image(&fs);
    drop(db);
    let (name, path) = the_blob_file(&image);
    let record = 16 + 4 + 6 + 20_000;
    let value_at = |i: usize| (16 + i * record + 26) as u64;

    let torn = image.crash_clone();
    torn.truncate(&path, value_at(15) + 100).expect("cut");
    for read_only in [true, false] {
        let t = torn.crash_clone();
        let db = Db::open(DIR, opts(&t, read_only)).expect("a torn tail opens");
        assert_eq!(contents(&db), after(15), "read_only {read_only}");
        let report = db.check().expect("check");
        assert!(
            report.is_ok(),
            "read_only {read_only}: a torn tail is not damage: {:?}",
            report.problems
        );
        if read_only {
            assert!(
                report.notes.iter().any(|n| n.contains(&name)),
                "the torn value is noted: {:?}",
                report.notes
            );
        }
    }

    let damaged = image.crash_clone();
    damaged.truncate(&path, value_at(5) + 100).expect("cut");
    every_open_reports(&damaged, &name, Some(value_at(5)));
}
