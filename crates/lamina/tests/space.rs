//! Disk space a database no longer needs is given back when the call that
//! freed it returns: a compaction's inputs are removed before the next
//! step begins and before `compact()` returns, and the WAL left after a
//! flush and a compaction holds no retired segment's length.

use lamina::fs::{FileLock, FileStat, FileSystem, MemFs, RandomAccessFile, WritableFile};
use lamina::{Batch, Db, Options};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DB: &str = "/space";

/// An in-memory file system that, while armed, notes how many tables the
/// directory holds each time a table is created.
#[derive(Clone)]
struct TableCount {
    mem: MemFs,
    armed: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<(String, usize)>>>,
}

impl TableCount {
    fn tables(&self) -> Vec<String> {
        let mut t: Vec<String> = self
            .mem
            .file_names(Path::new(DB))
            .into_iter()
            .filter(|n| n.ends_with(".sst"))
            .collect();
        t.sort();
        t
    }
}

impl FileSystem for TableCount {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.mem.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name.filter(|n| n.ends_with(".sst")) {
            if self.armed.load(Ordering::SeqCst) {
                let present = self.tables().len();
                self.seen.lock().expect("lock").push((name, present));
            }
        }
        self.mem.create(path)
    }
    fn reopen(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.mem.reopen(path)
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
        self.mem.sync_dir(path)
    }
    fn is_dir(&self, path: &Path) -> io::Result<Option<bool>> {
        self.mem.is_dir(path)
    }
    fn stat(&self, path: &Path) -> io::Result<FileStat> {
        self.mem.stat(path)
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        self.mem.file_size(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.mem.lock(path)
    }
}

/// Small tables and levels whose targets (1 KiB, doubling) are below a
/// table's size, so that the compaction thread moves every table to the
/// last level; `l0_trigger` level-0 tables start a compaction.
fn chain_opts(fs: &TableCount, l0_trigger: usize) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        memtable_size: 256 << 10,
        target_table_size: 64 << 10,
        block_size: 4 << 10,
        level_base_size: 1 << 10,
        level_multiplier: 2,
        l0_compaction_trigger: l0_trigger,
        l0_slowdown_trigger: l0_trigger + 20,
        l0_stop_trigger: l0_trigger + 40,
        ..Options::default()
    }
}

/// Puts the keys `prefix/NNNNN` for `range` with 100-byte values that do
/// not compress (so that a table's size is its entries').
fn put_keys(db: &Db, prefix: &str, range: std::ops::Range<u32>) {
    let mut batch = Batch::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in range {
        let value: Vec<u8> = (0..100)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        batch.put(format!("{prefix}/{i:05}").as_bytes(), &value);
    }
    db.write(batch).expect("write");
}

/// Waits until only the last level holds tables.
fn all_in_last_level(db: &Db) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let levels = db.stats().levels;
        let last = levels.len() - 1;
        if levels.iter().all(|l| l.tables == 0 || l.level == last) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "tables never reached the last level: {levels:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The directory holds the tables `stats` counts (as many, as many bytes),
/// one WAL segment, the manifest, `CURRENT` and `LOCK`, and nothing else.
fn assert_only_live_files(fs: &TableCount, db: &Db, when: &str) {
    let mut others: Vec<String> = fs
        .mem
        .file_names(Path::new(DB))
        .into_iter()
        .filter(|n| !n.ends_with(".sst"))
        .map(|n| match n {
            n if n.ends_with(".wal") => "NNNNNN.wal".to_string(),
            n if n.starts_with("MANIFEST-") => "MANIFEST-NNNNNN".to_string(),
            n => n,
        })
        .collect();
    others.sort();
    assert_eq!(
        others,
        ["CURRENT", "LOCK", "MANIFEST-NNNNNN", "NNNNNN.wal"],
        "{when}: files besides the tables"
    );
    let stats = db.stats();
    let tables: usize = stats.levels.iter().map(|l| l.tables).sum();
    let bytes: u64 = stats.levels.iter().map(|l| l.bytes).sum();
    let on_disk = fs.tables();
    let disk_bytes: u64 = on_disk
        .iter()
        .map(|n| fs.mem.file_size(&Path::new(DB).join(n)).expect("size"))
        .sum();
    assert_eq!(
        (on_disk.len(), disk_bytes),
        (tables, bytes),
        "{when}: the directory holds tables the version does not: {on_disk:?}"
    );
}

/// A manual compaction of one new table through six levels: each step
/// rewrites the table the step before wrote. Each step's input is removed
/// before the next step writes, so the directory never holds more than
/// the last level's tables, the step's input and its output; and none is
/// left when `compact()` returns. (Before, the inputs stayed until the end
/// of the whole compaction, or until the compaction thread's next round,
/// which could come after `compact()` returned.)
#[test]
fn compaction_inputs_are_removed_step_by_step_and_before_compact_returns() {
    let fs = TableCount {
        mem: MemFs::new(),
        armed: Arc::new(AtomicBool::new(false)),
        seen: Arc::new(Mutex::new(Vec::new())),
    };
    let db = Db::open(DB, chain_opts(&fs, 1)).expect("open");
    // Two flushes of key ranges one after the other: two tables, each
    // moved down whole.
    put_keys(&db, "a", 0..1_000);
    db.flush().expect("flush");
    put_keys(&db, "a", 1_000..2_000);
    db.flush().expect("flush");
    all_in_last_level(&db);
    db.close().expect("close");
    // Reopened with a trigger level 0 never reaches: nothing runs but the
    // manual compaction.
    let db = Db::open(DB, chain_opts(&fs, 100)).expect("reopen");
    let last_level = fs.tables().len();
    assert!(last_level >= 2, "{last_level} tables in the last level");
    // After every `a/` key, so that the last step overlaps no table there.
    put_keys(&db, "b", 0..100);
    fs.armed.store(true, Ordering::SeqCst);
    db.compact().expect("compact");
    fs.armed.store(false, Ordering::SeqCst);
    let seen = fs.seen.lock().expect("lock").clone();
    // The flush's table, then one table for each of the six steps.
    assert_eq!(seen.len(), 7, "{seen:?}");
    for (table, present) in &seen {
        assert!(
            *present <= last_level + 1,
            "when {table} was created the directory held {present} tables: \
             the last level's {last_level} and the inputs of more than one step ({seen:?})"
        );
    }
    assert_only_live_files(&fs, &db, "after compact()");
    assert_eq!(db.iter().count(), 2_100);
}

/// Allocated bytes of the WAL segments in `dir` (`st_blocks`, not lengths).
fn wal_allocated(dir: &Path) -> (u64, Vec<(String, u64, u64)>) {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir") {
        let e = e.expect("entry");
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".wal") {
            let m = e.metadata().expect("metadata");
            total += m.blocks() * 512;
            files.push((name, m.len(), m.blocks() * 512));
        }
    }
    (total, files)
}

/// The WAL files in `dir`: exactly one segment, allocated (`st_blocks`)
/// at most 64 KiB — its 40-byte header and the first 4 KiB step of zeros
/// ahead of its records, with room for the file system's allocation unit.
fn assert_one_small_segment(dir: &Path, when: &str) {
    let (total, files) = wal_allocated(dir);
    assert_eq!(files.len(), 1, "{when}: segments {files:?}");
    assert!(
        total <= 64 << 10,
        "{when}: the WAL holds {total} bytes: {files:?}"
    );
}

/// 200 MB written through the WAL (values below the blob threshold, so
/// they go through it), then `flush`, a few more writes, `flush` again and
/// `compact`: after each call the WAL holds one small segment. Before, a
/// flush kept two retired segments for reuse, and the second flush started
/// its segment by reusing one the first had retired, which kept that
/// segment's whole length (a memtable's worth of records, about 64 MB
/// here) through `compact` for no data.
#[test]
fn after_200_mb_through_the_wal_flush_and_compact_leave_a_small_wal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = Db::open(&path, Options::default()).expect("open");
    let value = vec![b'w'; 2_000];
    let mut i = 0u64;
    let mut put_batch = || {
        let mut batch = Batch::new();
        for _ in 0..100 {
            batch.put(&i.to_be_bytes(), &value);
            i += 1;
        }
        db.write(batch).expect("write");
    };
    while db.stats().wal_bytes_written < 200 << 20 {
        put_batch();
    }
    db.flush().expect("flush");
    assert_one_small_segment(&path, "after the flush of 200 MB");
    put_batch();
    db.flush().expect("flush");
    assert_one_small_segment(&path, "after a second flush");
    db.compact().expect("compact");
    assert_one_small_segment(&path, "after compact");
    assert_eq!(db.get(&0u64.to_be_bytes()).expect("get"), Some(value));
}
