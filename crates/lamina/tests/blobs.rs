//! Key-value separation: large values live in blob files, read back whole
//! through pointers, survive reopen, are never read to be deleted or
//! overwritten, fail loudly when damaged, and their space is reclaimed.

use lamina::binding::{Cached, NonBlocking};
use lamina::fs::MemFs;
use lamina::{Db, Error, KeptBytes, Options};
use std::path::Path;
use std::sync::Arc;

const DIR: &str = "/blobs";

fn opts(fs: &MemFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        memtable_size: 4 << 20,
        l0_compaction_trigger: 8,
        blob_threshold: 1000,
        ..Options::default()
    }
}

fn value(i: u64, round: u64, len: usize) -> Vec<u8> {
    let mut v = format!("value {i} round {round} ").into_bytes();
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ round;
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x as u8);
    }
    v
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A file's size; 0 for one the background thread deleted after it was
/// listed (an obsolete file, removed once no version lists it).
fn size(fs: &MemFs, path: &Path) -> u64 {
    lamina::fs::FileSystem::file_size(fs, path).unwrap_or(0)
}

/// What `measure` returns once `done` holds for it, or after five seconds.
/// A file retired while another thread still pinned the version listing it
/// (the background thread between two steps) is removed when the pin goes,
/// at the background thread's next wake (every 200 ms), not by the call
/// that retired it.
fn settled<T>(measure: impl Fn() -> T, done: impl Fn(&T) -> bool) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let now = measure();
        if done(&now) || std::time::Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn blob_files(fs: &MemFs) -> Vec<String> {
    let mut v: Vec<String> = fs
        .file_names(Path::new(DIR))
        .into_iter()
        .filter(|n| n.ends_with(".blob"))
        .collect();
    v.sort();
    v
}

#[test]
fn large_values_go_to_blob_files_and_read_back() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    for i in 0..40 {
        let len = if i % 2 == 0 { 5000 } else { 100 };
        db.put(&key(i), &value(i, 0, len)).expect("put");
    }
    db.flush().expect("flush");
    let stats = db.stats();
    assert_eq!(stats.blob_files, 1, "one flush writes one blob file");
    assert_eq!(stats.blob_value_bytes, 20 * 5000);
    assert!(
        stats.total_table_bytes < 20 * 5000,
        "the tables hold pointers, not the large values ({} bytes)",
        stats.total_table_bytes
    );
    let check = |db: &Db| {
        for i in 0..40 {
            let len = if i % 2 == 0 { 5000 } else { 100 };
            assert_eq!(
                db.get(&key(i)).expect("get"),
                Some(value(i, 0, len)),
                "key {i}"
            );
        }
        let all: Vec<_> = db.iter().collect::<Result<_, _>>().expect("iter");
        assert_eq!(all.len(), 40);
        assert_eq!(all[2], (key(2), value(2, 0, 5000)));
        let back: Vec<_> = db.iter().rev().collect::<Result<_, _>>().expect("rev");
        assert_eq!(back[1], (key(38), value(38, 0, 5000)));
        let lazy = db.get_lazy(&key(4)).expect("get_lazy").expect("present");
        assert!(lazy.is_separated());
        let mut buf = vec![0u8; lazy.len()];
        lazy.read_into(&mut buf).expect("read_into");
        assert_eq!(buf, value(4, 0, 5000));
        assert!(!db
            .get_lazy(&key(5))
            .expect("get")
            .expect("present")
            .is_separated());
        let report = db.check().expect("check");
        assert!(report.is_ok(), "{:?}", report.problems);
        assert_eq!((report.blob_files, report.blob_pointers), (1, 20));
    };
    check(&db);
    db.close().expect("close");
    let db = Db::open(DIR, opts(&fs)).expect("reopen");
    check(&db);
}

#[test]
fn snapshots_and_merges_see_blob_values() {
    let fs = MemFs::new();
    let db = Db::open(
        DIR,
        Options {
            merge_operator: Arc::new(lamina::merge::Append),
            ..opts(&fs)
        },
    )
    .expect("open");
    db.put(b"k", &value(1, 0, 3000)).expect("put");
    db.flush().expect("flush");
    let snap = db.snapshot();
    db.merge(b"k", b"+tail").expect("merge");
    db.flush().expect("flush");
    db.compact().expect("compact");
    let mut want = value(1, 0, 3000);
    want.extend_from_slice(b"+tail");
    assert_eq!(db.get(b"k").expect("get"), Some(want.clone()));
    assert_eq!(
        snap.get(b"k").expect("snapshot get"),
        Some(value(1, 0, 3000))
    );
    drop(snap);
    db.compact().expect("compact");
    assert_eq!(db.get(b"k").expect("get"), Some(want));
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[test]
fn deleting_or_overwriting_a_large_value_never_reads_it() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    for i in 0..10 {
        db.put(&key(i), &value(i, 0, 4000)).expect("put");
    }
    db.flush().expect("flush");
    // Damage every value: any read of one would fail with Corruption.
    let blob = blob_files(&fs).pop().expect("a blob file");
    let path = Path::new(DIR).join(&blob);
    let len = size(&fs, &path);
    for off in (100..len - 100).step_by(500) {
        fs.corrupt_byte(&path, off).expect("corrupt");
    }
    for i in 0..5 {
        db.delete(&key(i)).expect("delete");
    }
    for i in 5..10 {
        assert!(db.contains_key(&key(i)).expect("contains"));
        db.put(&key(i), b"small now").expect("overwrite");
    }
    db.compact()
        .expect("compact drops the pointers without reading the values");
    assert_eq!(db.get(&key(7)).expect("get"), Some(b"small now".to_vec()));
    assert_eq!(
        db.stats().blob_files,
        0,
        "a blob file with no live value is removed"
    );
    assert!(settled(|| blob_files(&fs), |f| f.is_empty()).is_empty());
}

#[test]
fn a_flipped_byte_in_a_blob_value_is_corruption_naming_file_and_offset() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    db.put(b"big", &value(1, 0, 4000)).expect("put");
    db.put(b"other", &value(2, 0, 4000)).expect("put");
    db.flush().expect("flush");
    let blob = blob_files(&fs).pop().expect("a blob file");
    let path = Path::new(DIR).join(&blob);
    // The first record's value starts after the 16-byte file header, the
    // 16-byte record header and the 7-byte tree key of "big".
    let value_at = 16 + 16 + 7;
    fs.corrupt_byte(&path, value_at + 1000).expect("corrupt");
    match db.get(b"big") {
        Err(Error::Corruption {
            file,
            offset,
            reason,
        }) => {
            assert_eq!(file, path);
            assert_eq!(offset, value_at);
            assert!(reason.contains("checksum"), "{reason}");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    assert_eq!(
        db.get(b"other").expect("undamaged value"),
        Some(value(2, 0, 4000))
    );
    let first = db.iter().next().expect("an item");
    assert!(matches!(first, Err(Error::Corruption { .. })), "{first:?}");
    let report = db.check().expect("check");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains(&blob) && p.contains("checksum")),
        "{:?}",
        report.problems
    );
}

#[test]
fn a_value_read_again_is_kept_verified_and_never_served_damaged() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    db.put(b"hot", &value(1, 0, 4000)).expect("put");
    db.put(b"once", &value(2, 0, 4000)).expect("put");
    db.flush().expect("flush");
    for _ in 0..2 {
        assert_eq!(db.get(b"hot").expect("get"), Some(value(1, 0, 4000)));
    }
    assert_eq!(db.get(b"once").expect("get"), Some(value(2, 0, 4000)));
    // Damage both values in the file: header 16, record header 16, tree
    // key 7 ("hot"), value 4000, then "once"'s record header and key (8).
    let blob = blob_files(&fs).pop().expect("a blob file");
    let path = Path::new(DIR).join(&blob);
    let hot_at = 16 + 16 + 7;
    let once_at = hot_at + 4000 + 16 + 8;
    fs.corrupt_byte(&path, hot_at + 10).expect("corrupt");
    fs.corrupt_byte(&path, once_at + 10).expect("corrupt");
    // Read twice, the value was kept in memory as verified: the damage that
    // came later is not in it.
    assert_eq!(db.get(b"hot").expect("kept"), Some(value(1, 0, 4000)));
    // Read once, it was not kept: its file is read, and fails its checksum.
    match db.get(b"once") {
        Err(Error::Corruption { offset, .. }) => assert_eq!(offset, once_at),
        other => panic!("expected corruption, got {other:?}"),
    }
    // A check reads the file itself, from the first damaged value.
    let report = db.check().expect("check");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains(&blob) && p.contains(&format!("offset {hot_at}"))),
        "{:?}",
        report.problems
    );
    drop(db);
    let db = Db::open(DIR, opts(&fs)).expect("reopen");
    match db.get(b"hot") {
        Err(Error::Corruption { offset, .. }) => assert_eq!(offset, hot_at),
        other => panic!("expected corruption after reopen, got {other:?}"),
    }
}

/// A lookup that may not wait for the disk answers a blob value kept in
/// memory (read twice), and never a value its key no longer holds: after
/// an overwrite, a flush, a compaction and a delete. Two keys far apart are
/// read in turn, as a hot set is (not in order: the remembered rows serve
/// them, pointers to blob values among them).
#[test]
fn a_kept_value_answers_lookups_that_may_not_wait_until_its_key_changes() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    let copy = |v: &[u8]| v.to_vec();
    for i in 0..3000 {
        db.put(&key(i), &value(i, 0, 1200)).expect("put");
    }
    db.flush().expect("flush");
    let (a, b) = (key(0), key(2999));
    assert_eq!(db.try_get_with(&a, copy).expect("try"), Cached::NeedsIo);
    let read_both = |round: u64| {
        for _ in 0..4 {
            assert_eq!(db.get(&a).expect("get"), Some(value(0, round, 1200)));
            assert_eq!(db.get(&b).expect("get"), Some(value(2999, 0, 1200)));
        }
    };
    read_both(0);
    assert_eq!(
        db.try_get_with(&a, copy).expect("try"),
        Cached::Answered(Some(value(0, 0, 1200)))
    );
    db.put(&a, &value(0, 1, 1200)).expect("overwrite");
    assert_eq!(db.try_get_with(&a, copy).expect("try"), Cached::NeedsIo);
    read_both(1);
    db.flush().expect("flush");
    read_both(1);
    db.compact_range(None, None).expect("compact");
    read_both(1);
    assert_eq!(
        db.try_get_with(&a, copy).expect("try"),
        Cached::Answered(Some(value(0, 1, 1200)))
    );
    db.delete(&a).expect("delete");
    assert_eq!(
        db.try_get_with(&a, copy).expect("try"),
        Cached::Answered(None)
    );
    db.flush().expect("flush");
    assert_eq!(db.get(&a).expect("get"), None);
    assert!(!db.contains_key(&a).expect("contains"));
}

/// A lookup that may not wait hands out a blob value unread when its file
/// is open, and a reader's own object, offered for a value it read, once
/// kept (on the value's second read).
#[test]
fn a_lookup_that_may_not_wait_hands_out_blob_values_unread_or_kept() {
    struct Mine(Vec<u8>);
    impl KeptBytes for Mine {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
    }
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    db.put(b"big", &value(7, 0, 3000)).expect("put");
    db.flush().expect("flush");
    let read = |db: &Db| {
        let lazy = db.get_lazy(b"big").expect("get").expect("present");
        let mut buf = vec![std::mem::MaybeUninit::uninit(); lazy.len()];
        let bytes = lazy
            .read_into_uninit_unkept(&mut buf)
            .expect("read")
            .to_vec();
        lazy.keep(|| Arc::new(Mine(bytes.clone())));
        bytes
    };
    // What a lookup that may not wait hands out: whether the value is held
    // in the reader's own object, and the value read from what it got.
    let lazy = |db: &Db| {
        db.try_get_with_lazy(
            b"big",
            |_| None,
            |v| {
                let mine = v.kept().is_some_and(|k| {
                    let any: &dyn std::any::Any = &**k;
                    any.downcast_ref::<Mine>().is_some()
                });
                let mut buf = vec![std::mem::MaybeUninit::uninit(); v.len()];
                let bytes = v.read_into_uninit_unkept(&mut buf).expect("read").to_vec();
                Some((mine, bytes))
            },
        )
        .expect("try")
    };
    let unread = |mine| Cached::Answered(Some(Some((mine, value(7, 0, 3000)))));
    assert_eq!(read(&db), value(7, 0, 3000));
    assert_eq!(
        lazy(&db),
        unread(false),
        "read once: in a file open, not kept"
    );
    assert_eq!(read(&db), value(7, 0, 3000));
    assert_eq!(lazy(&db), unread(true), "read twice: the reader's object");
    // Every other way of reading it reads the object's bytes.
    assert_eq!(db.get(b"big").expect("get"), Some(value(7, 0, 3000)));
    assert_eq!(
        db.try_get_with(b"big", <[u8]>::to_vec).expect("try"),
        Cached::Answered(Some(value(7, 0, 3000)))
    );
    // Opened again, the file is not open until a read opens it.
    drop(db);
    let db = Db::open(DIR, opts(&fs)).expect("reopen");
    assert_eq!(lazy(&db), Cached::NeedsIo);
    assert_eq!(read(&db), value(7, 0, 3000));
    assert_eq!(lazy(&db), unread(false));
}

#[test]
fn damaged_blob_file_header_and_footer_are_reported_by_check() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    db.put(b"big", &value(1, 0, 4000)).expect("put");
    db.flush().expect("flush");
    let blob = blob_files(&fs).pop().expect("a blob file");
    let path = Path::new(DIR).join(&blob);
    let len = size(&fs, &path);
    fs.corrupt_byte(&path, len - 3)
        .expect("corrupt the footer magic");
    let report = db.check().expect("check");
    assert!(
        report.problems.iter().any(|p| p.contains("footer")),
        "{:?}",
        report.problems
    );
    fs.truncate(&path, 40).expect("truncate");
    let err = db.get(b"big").expect_err("a value past the end");
    assert!(err.is_corruption(), "{err}");
}

fn disk_bytes(fs: &MemFs) -> u64 {
    fs.file_names(Path::new(DIR))
        .iter()
        .filter(|n| n.ends_with(".blob") || n.ends_with(".sst"))
        .map(|n| size(fs, &Path::new(DIR).join(n)))
        .sum()
}

#[test]
fn compaction_reclaims_the_space_of_overwritten_values() {
    // The space-amplification target: files on disk at most 1.5 times the
    // live data once compacted.
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    let (n, len) = (200u64, 10_000usize);
    for round in 0..4 {
        for i in 0..n {
            db.put(&key(i), &value(i, round, len)).expect("put");
        }
        db.flush().expect("flush");
    }
    let live = n * len as u64;
    assert!(disk_bytes(&fs) > 3 * live, "four copies before compaction");
    db.compact().expect("compact");
    let after = settled(|| disk_bytes(&fs), |b| *b as f64 <= 1.5 * live as f64);
    assert!(
        (after as f64) <= 1.5 * live as f64,
        "{after} bytes on disk for {live} live bytes"
    );
    let s = db.stats();
    assert!(
        s.blob_space_amplification() < 1.1,
        "{}",
        s.blob_space_amplification()
    );
    for i in (0..n).step_by(17) {
        assert_eq!(db.get(&key(i)).expect("get"), Some(value(i, 3, len)));
    }
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[test]
fn half_dead_blob_files_have_their_live_values_moved() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    let (n, len) = (100u64, 8000usize);
    for i in 0..n {
        db.put(&key(i), &value(i, 0, len)).expect("put");
    }
    db.flush().expect("flush");
    let first = blob_files(&fs);
    // Overwrite 60% of the keys: the first blob file is 60% dead.
    for i in (0..n).filter(|i| i % 5 < 3) {
        db.put(&key(i), &value(i, 1, len)).expect("overwrite");
    }
    db.compact().expect("compact");
    let now = settled(
        || blob_files(&fs),
        |now| first.iter().all(|f| !now.contains(f)),
    );
    assert!(
        first.iter().all(|f| !now.contains(f)),
        "the 60%-dead file {first:?} was collected; files now {now:?}"
    );
    assert!(db.stats().blob_bytes_moved >= 40 * len as u64);
    let limit = 1.5 * (n * len as u64) as f64;
    assert!(settled(|| disk_bytes(&fs), |b| *b as f64 <= limit) as f64 <= limit);
    for i in 0..n {
        let round = u64::from(i % 5 < 3);
        assert_eq!(
            db.get(&key(i)).expect("get"),
            Some(value(i, round, len)),
            "key {i}"
        );
    }
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
    db.close().expect("close");
    let db = Db::open(DIR, opts(&fs)).expect("reopen");
    assert_eq!(db.get(&key(4)).expect("get"), Some(value(4, 0, len)));
}

#[test]
fn values_written_inline_stay_readable_and_move_out_in_compaction() {
    // A database written with every value in the tree (as before blob files
    // existed) opens with a blob threshold and reads the same.
    let fs = MemFs::new();
    let inline = Options {
        blob_threshold: usize::MAX,
        ..opts(&fs)
    };
    let db = Db::open(DIR, inline).expect("open");
    for i in 0..20 {
        db.put(&key(i), &value(i, 0, 5000)).expect("put");
    }
    db.close().expect("close");
    assert!(blob_files(&fs).is_empty());
    let db = Db::open(DIR, opts(&fs)).expect("reopen with blobs");
    assert_eq!(db.get(&key(3)).expect("get"), Some(value(3, 0, 5000)));
    db.compact().expect("compact");
    assert_eq!(
        db.stats().blob_files,
        1,
        "compaction separated the large values"
    );
    for i in 0..20 {
        assert_eq!(db.get(&key(i)).expect("get"), Some(value(i, 0, 5000)));
    }
    db.close().expect("close");
    let db = Db::open(
        DIR,
        Options {
            blob_threshold: usize::MAX,
            ..opts(&fs)
        },
    )
    .expect("reopen without separation");
    assert_eq!(db.get(&key(9)).expect("get"), Some(value(9, 0, 5000)));
}

#[test]
fn a_blob_file_the_manifest_does_not_list_is_removed_on_open() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    db.put(b"k", &value(1, 0, 4000)).expect("put");
    db.close().expect("close");
    {
        use lamina::fs::FileSystem;
        let mut f = fs
            .create(&Path::new(DIR).join("999999.blob"))
            .expect("create");
        f.append(b"leftover of a crash").expect("append");
        f.sync_data().expect("sync");
    }
    let db = Db::open(DIR, opts(&fs)).expect("reopen");
    assert!(!blob_files(&fs).contains(&"999999.blob".to_string()));
    assert_eq!(db.get(b"k").expect("get"), Some(value(1, 0, 4000)));
}

#[test]
fn readers_keep_a_collected_blob_file_until_they_finish() {
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    for i in 0..10 {
        db.put(&key(i), &value(i, 0, 3000)).expect("put");
    }
    db.flush().expect("flush");
    let old = blob_files(&fs);
    let mut iter = db.iter();
    let first = iter.next().expect("an item").expect("read");
    assert_eq!(first, (key(0), value(0, 0, 3000)));
    let lazy = db.get_lazy(&key(9)).expect("get").expect("present");
    for i in 0..10 {
        db.put(&key(i), &value(i, 1, 3000)).expect("overwrite");
    }
    db.compact().expect("compact");
    assert_eq!(db.stats().blob_files, 1, "the old file left the version");
    assert!(
        old.iter().all(|f| blob_files(&fs).contains(f)),
        "but stays on disk while an iterator pins it"
    );
    let rest: Vec<_> = iter.collect::<Result<_, _>>().expect("iterate on");
    assert_eq!(rest.len(), 9);
    assert_eq!(rest[8], (key(9), value(9, 0, 3000)));
    assert_eq!(
        lazy.into_vec().expect("a value found before"),
        value(9, 0, 3000)
    );
    db.compact().expect("compact again");
    // A background thread may hold the old version for a moment (a task it
    // picked, a read view it loaded); the next cleanup after it lets go,
    // at most one background wake-up later, removes the files.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while old.iter().any(|f| blob_files(&fs).contains(f)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        old.iter().all(|f| !blob_files(&fs).contains(f)),
        "removed once no reader pins it: {:?}",
        blob_files(&fs)
    );
    assert_eq!(db.get(&key(9)).expect("get"), Some(value(9, 1, 3000)));
}

#[test]
fn keys_only_iteration_lists_blob_keys_without_reading_them() {
    // A keys-only walk decides presence from the newest entry's kind; a blob
    // pointer is a present value, and its (damaged) value is never read.
    let fs = MemFs::new();
    let db = Db::open(DIR, opts(&fs)).expect("open");
    for i in 0..6 {
        db.put(&key(i), &value(i, 0, 4000)).expect("put");
    }
    db.delete(&key(2)).expect("delete");
    db.flush().expect("flush");
    let blob = blob_files(&fs).pop().expect("a blob file");
    let path = Path::new(DIR).join(&blob);
    for off in (100..size(&fs, &path) - 100).step_by(700) {
        fs.corrupt_byte(&path, off).expect("corrupt");
    }
    let keys: Vec<Vec<u8>> = db
        .iter()
        .keys_only()
        .map(|e| e.map(|(k, _)| k))
        .collect::<Result<_, _>>()
        .expect("keys only");
    assert_eq!(keys, vec![key(0), key(1), key(3), key(4), key(5)]);
    let back: Vec<Vec<u8>> = db
        .iter()
        .keys_only()
        .rev()
        .map(|e| e.map(|(k, _)| k))
        .collect::<Result<_, _>>()
        .expect("keys only, reversed");
    assert_eq!(back.len(), 5);
}
