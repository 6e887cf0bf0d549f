//! Large values written to a blob file at commit
//! (docs/format.md#blob-files-written-at-commit): what a power loss keeps
//! with the default durability (a killed process: tests/kill.rs), damage in a file a crash left open, the
//! read-only and read-write opens of such a file, and the dead bytes of
//! values overwritten before their flush.

use lamina::fs::{FileSystem, MemFs};
use lamina::{Db, Durability, Error, Options};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const DIR: &str = "/db";
const THRESHOLD: usize = 512;

fn opts(fs: &MemFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        blob_threshold: THRESHOLD,
        ..Options::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:03}").into_bytes()
}

/// Every third value is small (kept in the WAL record); the others are
/// separated, of sizes that vary, every seventh of them over 68 KiB (its
/// record runs the file's zeros to a whole 1 MiB, the others' to 256 KiB).
fn value(i: usize) -> Vec<u8> {
    let len = if i % 3 == 2 {
        40
    } else if i.is_multiple_of(7) {
        70_000 + i
    } else {
        THRESHOLD + 97 * i
    };
    (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
}

fn blob_files(fs: &MemFs) -> Vec<String> {
    fs.file_names(Path::new(DIR))
        .into_iter()
        .filter(|n| n.ends_with(".blob"))
        .collect()
}

fn contents(db: &Db) -> Model {
    db.iter().collect::<Result<_, _>>().expect("iterate")
}

/// Writes the keys `from..to` with the default durability (`Os`).
fn write(db: &Db, from: usize, to: usize) {
    for i in from..to {
        db.put(&key(i), &value(i)).expect("put");
    }
}

/// Writes the first `n` keys, syncs, and returns what a power loss then
/// leaves, with the path of its one blob file (written at commit, open).
fn synced_then_crashed(n: usize) -> (MemFs, String, std::path::PathBuf) {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    write(&db, 0, n);
    db.sync().expect("sync");
    let crashed = fs.crash_clone();
    drop(db);
    let names = blob_files(&crashed);
    let [name] = names.as_slice() else {
        panic!("one blob file, not {names:?}");
    };
    let path = Path::new(DIR).join(name);
    (crashed, name.clone(), path)
}

/// Where the records of a blob file written at commit end: the zeros it
/// was extended with follow (the test values end in a non-zero byte).
fn data_end(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1)
}

/// The model after the first `n` writes.
fn after(n: usize) -> Model {
    (0..n).map(|i| (key(i), value(i))).collect()
}

#[test]
fn a_power_loss_keeps_a_prefix_of_the_commits_and_never_a_pointer_without_its_value() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    write(&db, 0, 12);
    db.sync().expect("sync");
    write(&db, 12, 60);
    assert_eq!(blob_files(&fs).len(), 1, "one open blob file");
    let mut prefixes = HashSet::new();
    for seed in 0..300 {
        // Unsynced bytes of the WAL segment and of the blob file survive
        // independently, each a random prefix.
        let crashed = fs.crash_clone_with(seed);
        let db = Db::open(DIR, opts(&crashed))
            .unwrap_or_else(|e| panic!("seed {seed}: reopen failed: {e}"));
        let got = contents(&db);
        let n = (12..=60).find(|&n| after(n) == got).unwrap_or_else(|| {
            panic!(
                "seed {seed}: {} keys, not the first n writes for any n >= 12",
                got.len()
            )
        });
        prefixes.insert(n);
        let report = db.check().expect("check");
        assert!(report.is_ok(), "seed {seed}: {:?}", report.problems);
        db.close().expect("close");
    }
    assert!(
        prefixes.len() > 5,
        "the crashes kept different prefixes: {prefixes:?}"
    );
}

#[test]
fn a_damaged_value_in_a_blob_file_a_crash_left_open_is_corruption_naming_it() {
    let (crashed, name, path) = synced_then_crashed(6);
    let bytes = crashed.read_all(&path).expect("read");
    assert_eq!(
        bytes.len(),
        1 << 20,
        "zeros to a whole 1 MiB after value 0's record"
    );
    // The middle of the records is inside a value (values 0, 1, 3 and 4 are
    // separated, each over 512 bytes).
    crashed
        .corrupt_byte(&path, data_end(&bytes) as u64 / 2)
        .expect("flip");
    let err = Db::open(DIR, opts(&crashed)).expect_err("damage is not a torn tail");
    assert!(matches!(err, Error::Corruption { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains(&name), "{text}");
}

#[test]
fn a_read_only_open_reads_an_open_blob_file_and_a_read_write_open_seals_it() {
    let (crashed, _, path) = synced_then_crashed(20);
    let before = crashed.read_all(&path).expect("read");
    assert!(!before.ends_with(b"LAMNABLB"), "no footer yet");
    {
        let ro = Db::open(
            DIR,
            Options {
                read_only: true,
                ..opts(&crashed)
            },
        )
        .expect("read-only open");
        assert_eq!(contents(&ro), after(20));
        assert_eq!(ro.get(&key(4)).expect("get"), Some(value(4)));
    }
    assert_eq!(crashed.read_all(&path).expect("read"), before, "untouched");
    let rw = Db::open(DIR, opts(&crashed)).expect("read-write open");
    assert_eq!(contents(&rw), after(20));
    let report = rw.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(rw.stats().blob_files, 1, "sealed and named");
    let sealed = crashed.read_all(&path).expect("read");
    assert!(sealed.ends_with(b"LAMNABLB"), "sealed with its footer");
    let end = data_end(&before);
    assert_eq!(
        sealed.len(),
        end + 28,
        "the zeros cut, the footer after the records"
    );
    assert_eq!(&sealed[..end], &before[..end]);
}

#[test]
fn values_overwritten_before_their_flush_are_dead_and_a_wholly_dead_file_goes() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    write(&db, 0, 9);
    // Two of the six separated values overwritten with small ones.
    db.put(&key(0), b"small").expect("put");
    db.put(&key(1), b"small").expect("put");
    db.flush().expect("flush");
    let s = db.stats();
    assert_eq!(s.blob_files, 1);
    let separated: u64 = (0..9)
        .filter(|i| i % 3 != 2)
        .map(|i| value(i).len() as u64)
        .sum();
    assert_eq!(s.blob_value_bytes, separated);
    assert_eq!(
        s.blob_dead_bytes,
        (value(0).len() + value(1).len()) as u64,
        "the overwritten values are dead"
    );
    // A memtable whose separated values are all overwritten before the
    // flush: its file is never listed, and is removed.
    write(&db, 100, 103);
    for i in 100..103 {
        db.delete(&key(i)).expect("delete");
    }
    db.flush().expect("flush");
    assert_eq!(db.stats().blob_files, 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while blob_files(&fs).len() > 1 {
        assert!(
            Instant::now() < deadline,
            "the dead file stayed: {:?}",
            blob_files(&fs)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[test]
fn sync_commits_make_their_values_durable_before_they_return() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    for i in 0..10 {
        let mut b = lamina::Batch::new();
        b.put(&key(i), &value(i));
        db.write_with(b, Durability::Sync).expect("sync write");
        // A power loss now keeps everything acknowledged.
        let crashed = fs.crash_clone();
        let got = contents(&Db::open(DIR, opts(&crashed)).expect("reopen"));
        assert_eq!(got, after(i + 1), "after sync commit {i}");
    }
}

#[test]
fn check_reads_back_every_value_the_wal_points_to() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    write(&db, 0, 6);
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(
        report.blob_pointers, 4,
        "values 0, 1, 3 and 4, from the WAL"
    );
    let names = blob_files(&fs);
    let path = Path::new(DIR).join(&names[0]);
    let end = data_end(&fs.read_all(&path).expect("read")) as u64;
    fs.corrupt_byte(&path, end - 10).expect("flip");
    let report = db.check().expect("check");
    assert!(
        report.problems.iter().any(|p| p.contains(&names[0])),
        "{:?}",
        report.problems
    );
}
