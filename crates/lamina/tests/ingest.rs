//! Tables written by a `TableWriter` and ingested with `Db::ingest`: the
//! writer's checks, atomicity (a damaged file, a crash at every sync point),
//! the overlap rules and levels, snapshots, and moving files.

use lamina::fs::{FileSystem, MemFs, RandomAccessFile, WritableFile};
use lamina::{Db, Error, IngestOptions, Options, TableWriter, TableWriterOptions};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn opts(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        fs,
        memtable_size: 8 << 10,
        block_size: 256,
        ..Options::default()
    }
}

fn writer_opts(fs: &MemFs, keyspace: Option<&str>) -> TableWriterOptions {
    TableWriterOptions {
        fs: Arc::new(fs.clone()),
        block_size: 256,
        keyspace: keyspace.map(str::to_string),
        ..TableWriterOptions::default()
    }
}

/// Writes `entries` (sorted) into a table at `path`.
fn write_table(fs: &MemFs, path: &str, entries: &[(String, String)], ks: Option<&str>) -> PathBuf {
    fs.create_dir_all(Path::new("/src")).expect("mkdir");
    let mut w = TableWriter::create(path, writer_opts(fs, ks)).expect("create writer");
    for (k, v) in entries {
        w.put(k.as_bytes(), v.as_bytes()).expect("put");
    }
    let info = w.finish().expect("finish");
    assert_eq!(info.entries, entries.len() as u64);
    PathBuf::from(path)
}

fn entries(prefix: &str, range: std::ops::Range<u32>, tag: &str) -> Vec<(String, String)> {
    range
        .map(|i| (format!("{prefix}{i:05}"), format!("{tag}-{i}")))
        .collect()
}

fn contents(db: &Db) -> Model {
    db.iter().collect::<Result<_, _>>().expect("iterate")
}

fn levels_of(db: &Db) -> Vec<usize> {
    db.stats().levels.iter().map(|l| l.tables).collect()
}

#[test]
fn writer_refuses_keys_out_of_order_and_names_them() {
    let fs = MemFs::new();
    fs.create_dir_all(Path::new("/src")).expect("mkdir");
    let mut w = TableWriter::create("/src/a.sst", writer_opts(&fs, None)).expect("create");
    w.put(b"b", b"1").expect("put b");
    let e = w.put(b"a", b"2").expect_err("a after b");
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(
        e.to_string()
            .contains("\"a\" sorts before the previous key \"b\""),
        "{e}"
    );
    let e = w.put(b"b", b"3").expect_err("b twice");
    assert!(
        e.to_string().contains("\"b\" repeats the previous key"),
        "{e}"
    );
    w.put(b"c", b"4").expect("put c");
    let info = w.finish().expect("finish");
    assert_eq!(
        (info.smallest.as_slice(), info.largest.as_slice()),
        (&b"b"[..], &b"c"[..])
    );
    assert_eq!(info.entries, 2);
    assert_eq!(
        info.file_size,
        fs.file_size(Path::new("/src/a.sst")).expect("size")
    );

    // Nothing else went in: the ingested database holds b and c only.
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    db.ingest(&["/src/a.sst"], IngestOptions::default())
        .expect("ingest");
    let want: Model = [
        (b"b".to_vec(), b"1".to_vec()),
        (b"c".to_vec(), b"4".to_vec()),
    ]
    .into();
    assert_eq!(contents(&db), want);
}

#[test]
fn unfinished_writer_removes_its_file() {
    let fs = MemFs::new();
    fs.create_dir_all(Path::new("/src")).expect("mkdir");
    let mut w = TableWriter::create("/src/a.sst", writer_opts(&fs, None)).expect("create");
    w.put(b"a", b"1").expect("put");
    drop(w);
    assert!(fs.is_dir(Path::new("/src/a.sst")).expect("stat").is_none());
    // An empty table is refused and leaves nothing behind either.
    let w = TableWriter::create("/src/b.sst", writer_opts(&fs, None)).expect("create");
    assert!(w.finish().is_err());
    assert!(fs.is_dir(Path::new("/src/b.sst")).expect("stat").is_none());
    // An existing file is not overwritten.
    write_table(&fs, "/src/c.sst", &entries("k", 0..3, "v"), None);
    let e = TableWriter::create("/src/c.sst", writer_opts(&fs, None)).expect_err("exists");
    assert!(matches!(e, Error::FileExists(_)), "{e}");
    assert!(
        e.to_string().starts_with("file /src/c.sst already exists"),
        "{e}"
    );
}

#[test]
fn ingest_into_empty_database_goes_to_the_bottom_and_into_its_keyspace() {
    let fs = MemFs::new();
    let a = write_table(&fs, "/src/a.sst", &entries("k", 0..500, "a"), None);
    let b = write_table(&fs, "/src/b.sst", &entries("k", 0..100, "b"), Some("calls"));
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    let done = db
        .ingest(&[&a, &b], IngestOptions::default())
        .expect("ingest");
    assert_eq!(done.len(), 2);
    // Different keyspaces do not overlap: both go to the last level.
    assert_eq!(done.iter().map(|t| t.level).collect::<Vec<_>>(), [6, 6]);
    assert_eq!(done[1].seqno, done[0].seqno + 1);
    assert_eq!(db.get(b"k00042").expect("get"), Some(b"a-42".to_vec()));
    let calls = db.open_keyspace("calls").expect("keyspace created");
    assert_eq!(calls.get(b"k00042").expect("get"), Some(b"b-42".to_vec()));
    assert_eq!(calls.iter().count(), 100);
    assert_eq!(contents(&db).len(), 500);
    assert!(db.check().expect("check").is_ok());
    // The sources are left in place without `move_files`.
    assert!(fs.is_dir(&a).expect("stat").is_some());
    db.close().expect("close");
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("reopen");
    assert_eq!(contents(&db).len(), 500);
    assert_eq!(levels_of(&db)[6], 2);
}

#[test]
fn overlapping_files_later_one_wins_and_newer_data_stays_on_top() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    for i in 0..200u32 {
        db.put(format!("k{i:05}").as_bytes(), b"old").expect("put");
    }
    db.compact().expect("compact");
    // In the memtable, overlapping the ingested range: older than the ingest.
    db.put(b"k00010", b"memtable").expect("put");
    let a = write_table(&fs, "/src/a.sst", &entries("k", 0..50, "a"), None);
    let b = write_table(&fs, "/src/b.sst", &entries("k", 40..60, "b"), None);
    // Does not overlap anything: goes to the bottom.
    let c = write_table(&fs, "/src/c.sst", &entries("z", 0..10, "c"), None);
    let done = db
        .ingest(&[&a, &b, &c], IngestOptions::default())
        .expect("ingest");
    let levels: Vec<usize> = done.iter().map(|t| t.level).collect();
    assert_eq!(levels, [0, 0, 6], "overlapping files go to level 0");
    assert_eq!(db.get(b"k00010").expect("get"), Some(b"a-10".to_vec()));
    assert_eq!(db.get(b"k00045").expect("get"), Some(b"b-45".to_vec()));
    assert_eq!(db.get(b"k00055").expect("get"), Some(b"b-55".to_vec()));
    assert_eq!(db.get(b"k00100").expect("get"), Some(b"old".to_vec()));
    assert_eq!(db.get(b"z00003").expect("get"), Some(b"c-3".to_vec()));
    // A write after the ingest wins over it, before and after compaction.
    db.put(b"k00045", b"after").expect("put");
    assert_eq!(db.get(b"k00045").expect("get"), Some(b"after".to_vec()));
    db.compact().expect("compact");
    assert_eq!(db.get(b"k00045").expect("get"), Some(b"after".to_vec()));
    assert_eq!(db.get(b"k00046").expect("get"), Some(b"b-46".to_vec()));
    assert_eq!(contents(&db).len(), 210);
    assert!(db.check().expect("check").is_ok());
}

#[test]
fn a_file_goes_just_above_the_first_level_it_overlaps() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    for i in 0..100u32 {
        db.put(format!("m{i:05}").as_bytes(), b"old").expect("put");
    }
    db.compact().expect("compact");
    let deepest = levels_of(&db)
        .iter()
        .rposition(|&n| n > 0)
        .expect("a level");
    let a = write_table(&fs, "/src/a.sst", &entries("m", 50..60, "new"), None);
    let done = db.ingest(&[&a], IngestOptions::default()).expect("ingest");
    assert_eq!(done[0].level, deepest - 1);
    assert_eq!(db.get(b"m00055").expect("get"), Some(b"new-55".to_vec()));
    assert_eq!(db.get(b"m00065").expect("get"), Some(b"old".to_vec()));
}

#[test]
fn snapshots_taken_before_an_ingest_do_not_see_it() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    db.put(b"k00001", b"before").expect("put");
    let before = db.snapshot();
    let a = write_table(&fs, "/src/a.sst", &entries("k", 0..20, "a"), None);
    db.ingest(&[&a], IngestOptions::default()).expect("ingest");
    let after = db.snapshot();
    assert_eq!(
        before.get(b"k00001").expect("get"),
        Some(b"before".to_vec())
    );
    assert_eq!(before.get(b"k00002").expect("get"), None);
    assert_eq!(before.iter().count(), 1);
    assert_eq!(after.get(b"k00001").expect("get"), Some(b"a-1".to_vec()));
    assert_eq!(after.iter().count(), 20);
    assert!(after.seqno() > before.seqno());
}

#[test]
fn one_damaged_file_among_several_adds_nothing() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    db.put(b"x", b"1").expect("put");
    let a = write_table(&fs, "/src/a.sst", &entries("a", 0..300, "a"), None);
    let b = write_table(&fs, "/src/b.sst", &entries("b", 0..300, "b"), None);
    let c = write_table(&fs, "/src/c.sst", &entries("c", 0..300, "c"), None);
    fs.corrupt_byte(&b, 100).expect("corrupt");
    let tables_before = db.stats().levels.iter().map(|l| l.tables).sum::<usize>();
    let e = db
        .ingest(&[&a, &b, &c], IngestOptions { move_files: true })
        .expect_err("damaged");
    // The caller's file is damaged, not the database: bad input.
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("/src/b.sst"), "{e}");
    let want: Model = [(b"x".to_vec(), b"1".to_vec())].into();
    assert_eq!(contents(&db), want);
    assert_eq!(
        db.stats().levels.iter().map(|l| l.tables).sum::<usize>(),
        tables_before
    );
    // Nothing was moved either.
    assert!(fs.is_dir(&a).expect("stat").is_some());
    // A table of a database (not a writer's) is refused in words.
    db.flush().expect("flush");
    let own = fs
        .file_names(Path::new("/db"))
        .into_iter()
        .find(|n| n.ends_with(".sst"))
        .expect("a table");
    let e = db
        .ingest(&[Path::new("/db").join(own)], IngestOptions::default())
        .expect_err("not a writer table");
    assert!(
        e.to_string().contains("not written by a table writer"),
        "{e}"
    );
    assert!(db.check().expect("check").is_ok());
}

#[test]
fn a_writer_format_this_build_does_not_know_is_refused() {
    let fs = MemFs::new();
    let a = write_table(&fs, "/src/a.sst", &entries("a", 0..10, "a"), None);
    // Counter 20 (the writer format) set to 2, the block checksum redone.
    let bytes = fs.read_all(&a).expect("read");
    let footer = bytes.len() - 64;
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    let (props, size) = (u64_at(footer + 16) as usize, u64_at(footer + 24) as usize);
    let mut patched = bytes.clone();
    patched[props + 4 + 8 * 20] = 2;
    let crc = crc32c::crc32c(&patched[props..props + size + 1]);
    let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
    patched[props + size + 1..props + size + 5].copy_from_slice(&masked.to_le_bytes());
    let mut f = fs.create(Path::new("/src/new.sst")).expect("create");
    f.append(&patched).expect("write");
    f.sync_data().expect("sync");
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    let e = db
        .ingest(&["/src/new.sst"], IngestOptions::default())
        .expect_err("format 2");
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("table writer of format 2"), "{e}");
    assert_eq!(contents(&db).len(), 0);
}

#[test]
fn move_files_links_a_file_that_overlaps_nothing_and_removes_the_sources() {
    let fs = MemFs::new();
    let a = write_table(&fs, "/src/a.sst", &entries("a", 0..10, "a"), None);
    let bytes = fs.read_all(&a).expect("read");
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    let done = db
        .ingest(&[&a], IngestOptions { move_files: true })
        .expect("ingest");
    assert!(done[0].linked, "{done:?}");
    assert_eq!((done[0].seqno, done[0].level), (0, 6));
    assert!(fs.is_dir(&a).expect("stat").is_none());
    let table = Path::new("/db").join(format!("{:06}.sst", done[0].file_number));
    assert_eq!(
        fs.read_all(&table).expect("read"),
        bytes,
        "the file as written"
    );
    assert_eq!(contents(&db).len(), 10);

    // Overlapping what is there: rewritten with a seqno.
    let b = write_table(&fs, "/src/b.sst", &entries("a", 5..15, "b"), None);
    let done = db
        .ingest(&[&b], IngestOptions { move_files: true })
        .expect("ingest");
    assert!(!done[0].linked && done[0].seqno > 0, "{done:?}");
    assert_eq!(db.get(b"a00007").expect("get"), Some(b"b-7".to_vec()));

    // Overlapping nothing, but a snapshot is live: rewritten, and unseen by it.
    let snap = db.snapshot();
    let c = write_table(&fs, "/src/c.sst", &entries("c", 0..5, "c"), None);
    let done = db
        .ingest(&[&c], IngestOptions { move_files: true })
        .expect("ingest");
    assert!(!done[0].linked, "{done:?}");
    assert_eq!(snap.get(b"c00001").expect("get"), None);
    assert_eq!(db.get(b"c00001").expect("get"), Some(b"c-1".to_vec()));
    db.compact().expect("compact");
    assert_eq!(contents(&db).len(), 20);
    assert!(db.check().expect("check").is_ok());
    db.close().expect("close");
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("reopen");
    assert_eq!(contents(&db).len(), 20);
}

#[test]
fn writers_to_other_ranges_run_during_an_ingest() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    let a = write_table(&fs, "/src/a.sst", &entries("a", 0..5000, "a"), None);
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 0..2000u32 {
                db.put(format!("w{i:05}").as_bytes(), b"w").expect("put");
            }
        })
    };
    db.ingest(&[&a], IngestOptions::default()).expect("ingest");
    writer.join().expect("writer");
    assert_eq!(contents(&db).len(), 7000);
    assert!(db.check().expect("check").is_ok());
}

#[test]
fn snapshots_taken_while_an_ingest_runs_never_change() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    let files: Vec<PathBuf> = (0..4)
        .map(|f| {
            let path = format!("/src/{f}.sst");
            write_table(&fs, &path, &entries("k", 0..3000, &format!("f{f}")), None)
        })
        .collect();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Writes into the ingested range and snapshots, while the ingests run:
    // every snapshot must read the same before and after.
    let racer = {
        let (db, stop) = (db.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut i = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let k = format!("k{:05}", (i * 7) % 3000);
                db.put(k.as_bytes(), format!("racer-{i}").as_bytes())
                    .expect("put");
                let snap = db.snapshot();
                let got = snap.get(b"k00100").expect("get");
                let count = snap.iter().count();
                seen.push((snap, got, count));
                if seen.len() > 50 {
                    seen.remove(0);
                }
                for (snap, got, count) in &seen {
                    assert_eq!(&snap.get(b"k00100").expect("get"), got);
                    assert_eq!(snap.iter().count(), *count, "a snapshot changed");
                }
                i += 1;
            }
            i
        })
    };
    for f in &files {
        db.ingest(&[f], IngestOptions::default()).expect("ingest");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let writes = racer.join().expect("racer");
    assert!(writes > 0);
    assert_eq!(contents(&db).len(), 3000);
    assert!(db.check().expect("check").is_ok());
}

/// Before the fix: when the manifest's fsync failed while installing rewritten
/// tables, the ingest removed them, though the edit had reached the file; the
/// reopened database listed a missing table.
#[test]
fn a_failure_at_any_write_sync_or_link_of_an_ingest_adds_all_or_nothing() {
    use lamina::fs::{FaultFs, FaultKind};
    for (kind, move_files) in [
        (FaultKind::Sync, false),
        (FaultKind::Write, false),
        (FaultKind::Sync, true),
        (FaultKind::Metadata, true),
    ] {
        for n in 0.. {
            let mem = MemFs::new();
            let faulty = FaultFs::new(Arc::new(mem.clone()));
            let faults = faulty.faults();
            let db = Db::open("/db", opts(Arc::new(faulty))).expect("open");
            db.put(b"base", b"1").expect("put");
            let a = write_table(&mem, "/src/a.sst", &entries("k", 0..300, "a"), None);
            let b = write_table(&mem, "/src/b.sst", &entries("n", 0..200, "b"), None);
            let before = faults.count(kind);
            faults.fail_once_after(kind, n);
            let result = db.ingest(&[&a, &b], IngestOptions { move_files });
            let fired = faults.count(kind) > before + n;
            faults.clear();
            drop(db);
            let db = Db::open("/db", opts(Arc::new(mem.clone()))).expect("reopen");
            let got = contents(&db).len();
            match &result {
                Ok(_) => assert_eq!(got, 501, "{kind:?} after {n}: acknowledged but missing"),
                Err(_) => assert!(got == 1 || got == 501, "{kind:?} after {n}: {got} records"),
            }
            if result.is_err() && got == 1 {
                // Nothing was added, and nothing the caller gave was lost.
                assert!(mem.is_dir(&a).expect("stat").is_some());
            }
            assert!(db.check().expect("check").is_ok(), "{kind:?} after {n}");
            if !fired {
                assert!(result.is_ok(), "{kind:?} after {n}: {result:?}");
                eprintln!("{kind:?} (move {move_files}): {n} operations, each failed once");
                assert!(n >= 2, "{kind:?}: only {n} operations in an ingest");
                break;
            }
        }
    }
}

/// A file system that records what would survive a power loss at each sync.
#[derive(Clone)]
struct SyncTap {
    mem: MemFs,
    armed: Arc<Mutex<bool>>,
    points: Arc<Mutex<Vec<MemFs>>>,
}

impl SyncTap {
    fn record(&self) {
        if *self.armed.lock().expect("lock") {
            let mut p = self.points.lock().expect("lock");
            p.push(self.mem.crash_clone());
            let seed = p.len() as u64;
            p.push(self.mem.crash_clone_with(seed));
        }
    }
}

struct TapFile {
    inner: Box<dyn WritableFile>,
    tap: SyncTap,
}

impl WritableFile for TapFile {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.inner.append(data)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        self.tap.record();
        let r = self.inner.sync_data();
        self.tap.record();
        r
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, data)
    }
}

impl FileSystem for SyncTap {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.mem.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(TapFile {
            inner: self.mem.create(path)?,
            tap: self.clone(),
        }))
    }
    fn reopen(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(TapFile {
            inner: self.mem.reopen(path)?,
            tap: self.clone(),
        }))
    }
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        self.mem.open(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.mem.list_dir(path)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.mem.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.mem.rename(from, to)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.mem.hard_link(from, to)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.record();
        let r = self.mem.sync_dir(path);
        self.record();
        r
    }
    fn is_dir(&self, path: &Path) -> io::Result<Option<bool>> {
        self.mem.is_dir(path)
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        self.mem.file_size(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn lamina::fs::FileLock>> {
        self.mem.lock(path)
    }
}

#[test]
fn a_crash_at_every_sync_point_of_a_linking_ingest_leaves_all_or_nothing() {
    let mem = MemFs::new();
    let tap = SyncTap {
        mem: mem.clone(),
        armed: Arc::new(Mutex::new(false)),
        points: Arc::new(Mutex::new(Vec::new())),
    };
    let db = Db::open("/db", opts(Arc::new(tap.clone()))).expect("open");
    db.put(b"base", b"1").expect("put");
    db.sync().expect("sync");
    let a = write_table(&mem, "/src/a.sst", &entries("k", 0..300, "a"), None);
    let b = write_table(&mem, "/src/b.sst", &entries("n", 0..200, "b"), None);
    *tap.armed.lock().expect("lock") = true;
    let done = db
        .ingest(&[&a, &b], IngestOptions { move_files: true })
        .expect("ingest");
    *tap.armed.lock().expect("lock") = false;
    assert!(done.iter().all(|t| t.linked), "{done:?}");
    let points = std::mem::take(&mut *tap.points.lock().expect("lock"));
    assert!(points.len() >= 4, "only {} sync points", points.len());
    let mut seen_after = false;
    for (i, crashed) in points.into_iter().enumerate() {
        let db = Db::open("/db", opts(Arc::new(crashed.clone()))).expect("reopen after crash");
        let n = contents(&db).len();
        match n {
            501 => seen_after = true,
            1 => assert!(
                !seen_after,
                "sync point {i}: the ingest disappeared after it was durable"
            ),
            n => panic!("sync point {i}: {n} records, neither before (1) nor after (501)"),
        }
        // The sources are never lost: until the ingest is durable they are
        // still where they were.
        if n == 1 {
            assert!(
                crashed.is_dir(&a).expect("stat").is_some(),
                "sync point {i}"
            );
        }
        assert!(db.check().expect("check").is_ok(), "sync point {i}");
    }
    assert!(seen_after, "the ingest never became durable");
}

#[test]
fn a_crash_at_every_sync_point_of_an_ingest_leaves_all_or_nothing() {
    let mem = MemFs::new();
    let tap = SyncTap {
        mem: mem.clone(),
        armed: Arc::new(Mutex::new(false)),
        points: Arc::new(Mutex::new(Vec::new())),
    };
    let db = Db::open("/db", opts(Arc::new(tap.clone()))).expect("open");
    for i in 0..300u32 {
        db.put(format!("k{i:05}").as_bytes(), b"base").expect("put");
    }
    db.sync().expect("sync");
    db.put(b"unsynced", b"written before the ingest")
        .expect("put");
    let a = write_table(&mem, "/src/a.sst", &entries("k", 100..400, "a"), None);
    let b = write_table(&mem, "/src/b.sst", &entries("n", 0..200, "b"), Some("ks"));
    let mut before: Model = (0..300u32)
        .map(|i| (format!("k{i:05}").into_bytes(), b"base".to_vec()))
        .collect();
    // Before the ingest syncs the WAL, a crash may lose the last write.
    let synced = before.clone();
    before.insert(b"unsynced".to_vec(), b"written before the ingest".to_vec());
    let mut after = before.clone();
    for (k, v) in entries("k", 100..400, "a") {
        after.insert(k.into_bytes(), v.into_bytes());
    }
    *tap.armed.lock().expect("lock") = true;
    db.ingest(&[&a, &b], IngestOptions::default())
        .expect("ingest");
    *tap.armed.lock().expect("lock") = false;
    let points = std::mem::take(&mut *tap.points.lock().expect("lock"));
    assert!(points.len() >= 8, "only {} sync points", points.len());
    let mut seen_after = false;
    for (i, crashed) in points.into_iter().enumerate() {
        let db = Db::open("/db", opts(Arc::new(crashed))).expect("reopen after crash");
        let got = contents(&db);
        let in_ks = db
            .open_keyspace("ks")
            .map(|k| k.iter().count())
            .unwrap_or(0);
        if got == after {
            assert_eq!(in_ks, 200, "sync point {i}: the second file is missing");
            seen_after = true;
        } else {
            assert!(
                got == before || got == synced,
                "sync point {i}: neither the state before nor after the ingest ({} keys)",
                got.len()
            );
            assert_eq!(
                in_ks, 0,
                "sync point {i}: the second file without the first"
            );
            assert!(
                !seen_after,
                "sync point {i}: the ingest disappeared after it was durable"
            );
        }
        assert!(db.check().expect("check").is_ok(), "sync point {i}");
    }
    assert!(seen_after, "the ingest never became durable");
}

/// `block_size: 0` (what `Options::block_size` holds by default, and what
/// the Python binding passes when none is given) writes blocks of the
/// default size, not one block per entry.
#[test]
fn a_zero_block_size_writes_default_blocks() {
    let fs = MemFs::new();
    let size_with = |block_size: usize, path: &str| {
        let mut w = TableWriter::create(
            Path::new(path),
            TableWriterOptions {
                block_size,
                ..writer_opts(&fs, None)
            },
        )
        .expect("create");
        for i in 0..20_000u32 {
            w.put(format!("key{i:08}").as_bytes(), &[b'v'; 64])
                .expect("put");
        }
        w.finish().expect("finish").file_size
    };
    let zero = size_with(0, "/zero.sst");
    let default = size_with(TableWriterOptions::default().block_size, "/default.sst");
    assert_eq!(zero, default, "block_size 0 is the default size");
}

/// Writes a table writer's table of `entries` at `path` in one uncompressed
/// data block, then gives the entry whose value is `target` the trailer
/// `(seqno << 8) | kind` instead of a put's, with the block checksum
/// recomputed as docs/format.md#block-trailer says; `counters` are then set
/// in the properties block, its checksum recomputed too. What anyone with the
/// format and a hex editor can make: the checksums all agree.
#[allow(clippy::indexing_slicing)]
fn forge(
    fs: &MemFs,
    path: &str,
    entries: &[(&[u8], &[u8])],
    target: &[u8],
    (seqno, kind): (u64, u8),
    counters: &[(usize, u64)],
) -> PathBuf {
    fs.create_dir_all(Path::new("/src")).expect("mkdir");
    let wo = TableWriterOptions {
        compression: lamina::Compression::None,
        block_size: 1 << 20,
        ..writer_opts(fs, None)
    };
    let mut w = TableWriter::create(path, wo).expect("create writer");
    for (k, v) in entries {
        w.put(k, v).expect("put");
    }
    w.finish().expect("finish");
    let mut bytes = fs.read_all(Path::new(path)).expect("read");
    let footer = bytes.len() - 64;
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8"));
    // One data block: from 0 to its 5-byte trailer just before the filter.
    let block = u64_at(&bytes, footer) as usize - 5;
    let at: Vec<usize> = (0..block - target.len())
        .filter(|&i| &bytes[i..i + target.len()] == target)
        .collect();
    assert_eq!(at.len(), 1, "the target value is in the block once");
    let trailer = at[0] - 8;
    bytes[trailer..at[0]].copy_from_slice(&((seqno << 8) | u64::from(kind)).to_le_bytes());
    let crc = lamina::coding::masked_crc(&bytes[..block + 1]);
    bytes[block + 1..block + 5].copy_from_slice(&crc.to_le_bytes());
    if !counters.is_empty() {
        let props = u64_at(&bytes, footer + 16) as usize;
        let size = u64_at(&bytes, footer + 24) as usize;
        for &(i, v) in counters {
            let o = props + 4 + 8 * i;
            bytes[o..o + 8].copy_from_slice(&v.to_le_bytes());
        }
        let crc = lamina::coding::masked_crc(&bytes[props..props + size + 1]);
        bytes[props + size + 1..props + size + 5].copy_from_slice(&crc.to_le_bytes());
    }
    fs.remove_file(Path::new(path)).expect("remove");
    let mut f = fs.create(Path::new(path)).expect("create");
    f.append(&bytes).expect("write");
    f.sync_data().expect("sync");
    PathBuf::from(path)
}

/// The value of the one kind-3 entry (a blob pointer) in the tables of `/db`.
fn a_blob_pointer(fs: &MemFs) -> Vec<u8> {
    use lamina::iter::InternalIterator;
    for name in fs.file_names(Path::new("/db")) {
        if !name.ends_with(".sst") {
            continue;
        }
        let path = Path::new("/db").join(&name);
        let file = fs.open(&path).expect("open");
        let cache = Arc::new(lamina::cache::BlockCache::new(0));
        let t = Arc::new(lamina::table::Table::open(file, path, 0, cache).expect("table"));
        let mut it = t.iter_uncached();
        it.seek_to_first();
        while it.valid() {
            let p = lamina::key::parse(it.key()).expect("key");
            if p.kind == lamina::key::Kind::Blob {
                return it.value().to_vec();
            }
            it.next();
        }
    }
    panic!("no blob pointer in /db");
}

/// Found by a hostile test of `lamina ingest`: a writer's table whose entry
/// said "blob pointer" (kind 3) in its kind byte, checksums recomputed, was
/// ingested: the check looked only at the properties' delete and merge
/// counters, which do not count blob pointers. The pointer, copied from the
/// database's own table of another keyspace, made the new key read that
/// keyspace's secret; after a delete of the new key and a compaction, the
/// other keyspace's blob file was collected and its value was gone for
/// good ("a blob pointer names a blob file that is missing"). A pointer of
/// garbage bytes made every later compaction fail.
///
/// docs/format.md says a writer's table holds only seqno-0 puts: now every
/// entry is checked, and such a table is refused as bad input naming the
/// file and the entry. This failed before the fix (the ingest succeeded).
#[test]
fn a_forged_blob_pointer_is_refused_and_the_value_it_names_is_kept() {
    let fs = MemFs::new();
    let o = Options {
        blob_threshold: 64,
        ..opts(Arc::new(fs.clone()))
    };
    let db = Db::open("/db", o).expect("open");
    let secret = vec![b's'; 1000];
    let ks = db.keyspace("secret").expect("keyspace");
    ks.put(b"key", &secret).expect("put");
    db.flush().expect("flush");
    let pointer = a_blob_pointer(&fs);
    for (name, value) in [("stolen", pointer.as_slice()), ("garbage", b"garbage!")] {
        let path = format!("/src/{name}.sst");
        let forged = forge(
            &fs,
            &path,
            &[(b"a", b"first"), (name.as_bytes(), value), (b"z", b"last")],
            value,
            (0, 3),
            &[],
        );
        for move_files in [false, true] {
            let e = db
                .ingest(&[&forged], IngestOptions { move_files })
                .expect_err("a blob pointer in a writer's table");
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
            let msg = e.to_string();
            assert!(msg.contains(&path), "{msg}");
            assert!(
                msg.contains(&format!("entry 1 (key \"{name}\") is a blob pointer")),
                "{msg}"
            );
            assert!(fs.is_dir(&forged).expect("stat").is_some(), "not moved");
        }
        assert_eq!(db.get(name.as_bytes()).expect("get"), None);
    }
    db.delete(b"stolen").expect("delete");
    db.compact().expect("compact");
    assert_eq!(ks.get(b"key").expect("get"), Some(secret));
    assert!(db.check().expect("check").is_ok());
}

/// Found by the same hostile test: a writer's table holding a tombstone, a
/// merge operand or an entry with a seqno other than 0 — its properties
/// still counting seqno-0 puts only — was refused as damage ("corruption
/// ... properties say delete entries is 0"), which the CLI reports as a
/// damaged database (exit 6), though the database was fine and the input
/// was bad. Now each is refused as bad input naming the file and the
/// entry. This failed before the fix (the errors were `Corruption`).
#[test]
fn entries_a_table_writer_never_writes_are_refused_as_bad_input() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    db.put(b"m", b"kept").expect("put");
    let cases: [((u64, u8), &str); 4] = [
        ((0, 0), "entry 1 (key \"k2\") is a delete (tombstone)"),
        ((0, 2), "entry 1 (key \"k2\") is a merge operand"),
        ((7, 1), "entry 1 (key \"k2\") has seqno 7"),
        // Counters that tell the truth change nothing.
        ((7, 1), "entry 1 (key \"k2\") has seqno 7"),
    ];
    for (i, ((seqno, kind), want)) in cases.into_iter().enumerate() {
        let counters: &[(usize, u64)] = if i == 3 { &[(9, 7)] } else { &[] };
        let path = format!("/src/forged{i}.sst");
        let forged = forge(
            &fs,
            &path,
            &[(b"k1", b"v1"), (b"k2", b"target"), (b"k3", b"v3")],
            b"target",
            (seqno, kind),
            counters,
        );
        for move_files in [false, true] {
            let e = db
                .ingest(&[&forged], IngestOptions { move_files })
                .expect_err("forged");
            assert!(matches!(e, Error::InvalidArgument(_)), "case {i}: {e}");
            assert!(e.to_string().contains(&path), "case {i}: {e}");
            assert!(e.to_string().contains(want), "case {i}: {e}");
        }
    }
    let want: Model = [(b"m".to_vec(), b"kept".to_vec())].into();
    assert_eq!(contents(&db), want);
}

/// Found by a hostile test of `lamina ingest --move`: given a table the
/// database itself lists (a writer's table linked in by an earlier moving
/// ingest, so it passes every check of a writer's table), the ingest linked
/// it in a second time and then removed the name given — the live table.
/// The database no longer opened ("table 000003.sst listed in the manifest
/// is missing"). Now a file in the database directory, reached by any path,
/// or another name of a file there, is refused for a move, and nothing is
/// removed. This failed before the fix (the move succeeded and the reopen
/// failed).
#[test]
fn moving_a_file_of_the_database_is_refused() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    let a = write_table(&fs, "/src/a.sst", &entries("a", 0..10, "a"), None);
    let done = db
        .ingest(&[&a], IngestOptions { move_files: true })
        .expect("ingest");
    assert!(done[0].linked, "{done:?}");
    let own = format!("/db/{:06}.sst", done[0].file_number);
    fs.hard_link(Path::new(&own), Path::new("/src/alias.sst"))
        .expect("link");
    let cases = [
        (own.clone(), "is in the database directory /db"),
        (
            format!("/db/../db/{:06}.sst", done[0].file_number),
            "is in the database directory /db",
        ),
        (
            "/src/alias.sst".to_string(),
            &format!(
                "another name of the database's file {:06}.sst",
                done[0].file_number
            )[..],
        ),
    ];
    for (path, want) in &cases {
        let e = db
            .ingest(&[path], IngestOptions { move_files: true })
            .expect_err("own table");
        assert!(matches!(e, Error::InvalidArgument(_)), "{path}: {e}");
        assert!(e.to_string().contains(path), "{e}");
        assert!(e.to_string().contains(want), "{e}");
    }
    assert!(fs.is_dir(Path::new(&own)).expect("stat").is_some());
    // Without moving it is only read, and copied with a new seqno.
    let done = db
        .ingest(&[&own], IngestOptions::default())
        .expect("plain ingest");
    assert!(!done[0].linked, "{done:?}");
    db.close().expect("close");
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("reopen");
    assert_eq!(contents(&db).len(), 10);
    assert!(db.check().expect("check").is_ok());
}

/// Found by a hostile test of `lamina ingest`: a file that is not a table
/// at all was reported as damage (the CLI said the database was damaged,
/// exit 6). It is bad input, and is now refused as such, naming the file.
/// This failed before the fix (the error was `Corruption`).
#[test]
fn a_garbage_file_is_bad_input_not_damage() {
    let fs = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(fs.clone()))).expect("open");
    fs.create_dir_all(Path::new("/src")).expect("mkdir");
    let mut f = fs.create(Path::new("/src/garbage.sst")).expect("create");
    f.append(&[0x5a; 300]).expect("write");
    f.sync_data().expect("sync");
    let e = db
        .ingest(&["/src/garbage.sst"], IngestOptions::default())
        .expect_err("garbage");
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(
        e.to_string()
            .contains("cannot ingest /src/garbage.sst: it is damaged or not a table"),
        "{e}"
    );
    let e = db
        .ingest(&["/src"], IngestOptions::default())
        .expect_err("a directory");
    assert!(e.to_string().contains("it is a directory"), "{e}");
}
