//! The read counters of `Stats::reads` are exact: every read call on a
//! table file that a file system wrapped around the database's sees is
//! counted once, by the kind of block it read, and point lookups are
//! counted once each, whether `get`, `contains_key` or a key of
//! `get_many` (a lookup that may not wait: once it answers); and a batch looked up in key order reads each block it needs
//! about once, where the same keys asked one by one out of order read more.
//! Table files are read with the kernel's read-ahead off; readers in order
//! ask for theirs, and a batch for its blocks before it reads them.

use lamina::binding::{Cached, NonBlocking};
use lamina::fs::{FileLock, FileSystem, MemFs, RandomAccessFile, WritableFile};
use lamina::{Db, Options};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A file system that counts the read calls on table files (`*.sst`), and
/// records what each was asked.
struct CountingFs {
    inner: MemFs,
    table_reads: Arc<AtomicU64>,
    events: Events,
}

/// What a table file was asked, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Read { offset: u64, len: u64 },
    WillNeed { offset: u64, len: u64 },
    Random,
}

/// Events by the file's name, in the order they happened.
type Events = Arc<Mutex<Vec<(String, Event)>>>;

/// A table file whose reads are counted.
struct CountingFile {
    inner: Arc<dyn RandomAccessFile>,
    reads: Arc<AtomicU64>,
    name: String,
    events: Events,
}

impl CountingFile {
    fn record(&self, event: Event) {
        self.events
            .lock()
            .expect("events lock")
            .push((self.name.clone(), event));
    }
}

impl RandomAccessFile for CountingFile {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.record(Event::Read {
            offset,
            len: len as u64,
        });
        self.inner.read_at(offset, len)
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let len = buf.len() as u64;
        self.record(Event::Read { offset, len });
        self.inner.read_exact_at(offset, buf)
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn advise_random(&self) {
        self.record(Event::Random);
    }
    fn will_need(&self, offset: u64, len: u64) {
        self.record(Event::WillNeed { offset, len });
    }
}

impl FileSystem for CountingFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.inner.create(path)
    }
    fn reopen(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.inner.reopen(path)
    }
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = self.inner.open(path)?;
        if path.extension().is_some_and(|e| e == "sst") {
            return Ok(Arc::new(CountingFile {
                inner: file,
                reads: Arc::clone(&self.table_reads),
                name: path.display().to_string(),
                events: Arc::clone(&self.events),
            }));
        }
        Ok(file)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.inner.list_dir(path)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn is_dir(&self, path: &Path) -> io::Result<Option<bool>> {
        self.inner.is_dir(path)
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.hard_link(from, to)
    }
    fn stat(&self, path: &Path) -> io::Result<lamina::fs::FileStat> {
        self.inner.stat(path)
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

const KEYS: u32 = 3000;

/// The options of the database `build` makes, on `fs`.
fn options(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        fs,
        memtable_size: 32 << 10,
        block_size: 256,
        target_table_size: 32 << 10,
        ..Options::default()
    }
}

/// A database of `KEYS` keys (the even numbers of 0..2 * KEYS), compacted
/// into tables of many small blocks, on `mem`; closed.
fn build(mem: &MemFs) {
    let db = Db::open(Path::new("/db"), options(Arc::new(mem.clone()))).expect("open");
    for i in 0..KEYS {
        db.put(&key(2 * i), &[b'v'; 40]).expect("put");
    }
    db.compact().expect("compact");
    db.close().expect("close");
}

/// The database `build` made, opened on a counting file system with a
/// block cache of `cache_size` bytes; and the count of table reads.
fn open_counting(mem: &MemFs, cache_size: usize) -> (Db, Arc<AtomicU64>) {
    let (db, table_reads, _) = open_recording(mem, cache_size);
    (db, table_reads)
}

/// [`open_counting`], with the events of every table file.
fn open_recording(mem: &MemFs, cache_size: usize) -> (Db, Arc<AtomicU64>, Events) {
    let table_reads = Arc::new(AtomicU64::new(0));
    let events = Events::default();
    let fs = CountingFs {
        inner: mem.clone(),
        table_reads: Arc::clone(&table_reads),
        events: Arc::clone(&events),
    };
    let opts = Options {
        cache_size,
        // No compaction of its own beside a test's writes: only the one a
        // test asks for reads tables.
        l0_compaction_trigger: 16,
        ..options(Arc::new(fs))
    };
    (
        Db::open(Path::new("/db"), opts).expect("reopen"),
        table_reads,
        events,
    )
}

#[test]
fn every_table_read_is_counted_once_by_kind() {
    let mem = MemFs::new();
    build(&mem);
    let (db, table_reads) = open_counting(&mem, 4 << 10);
    // A lookup that may not wait is counted only once it answers: the
    // first needs the disk (nothing is cached yet), the one after a get of
    // the same key answers from the cache.
    let k = key(5000);
    assert_eq!(
        db.try_get_with(&k, <[u8]>::len).expect("try"),
        Cached::NeedsIo
    );
    assert_eq!(db.stats().reads.point_lookups, 0);
    assert!(db.get(&k).expect("get").is_some());
    let answered = db.try_get_with(&k, <[u8]>::len).expect("try");
    assert_eq!(answered, Cached::Answered(Some(40)));
    let mut lookups = 2u64;
    for i in (0..2 * KEYS).step_by(37) {
        let found = db.get(&key(i)).expect("get");
        assert_eq!(found.is_some(), i.is_multiple_of(2), "key {i}");
        lookups += 1;
    }
    for i in (1..2 * KEYS).step_by(101) {
        db.contains_key(&key(i)).expect("contains");
        lookups += 1;
    }
    let batch: Vec<Vec<u8>> = (0..2 * KEYS).rev().step_by(29).map(key).collect();
    db.get_many(&batch).expect("get_many");
    lookups += batch.len() as u64;
    // An iterator's blocks are counted too, though not as lookups'.
    let scanned = db.range(&key(100)[..]..&key(400)[..]).count();
    assert_eq!(scanned, 150);

    let s = db.stats();
    let r = s.reads;
    assert_eq!(r.file_reads(), table_reads.load(Ordering::SeqCst), "{r:?}");
    assert_eq!(r.point_lookups, lookups, "{r:?}");
    let tables: u64 = s.levels.iter().map(|l| l.tables as u64).sum();
    assert!(tables > 1, "{s:?}");
    // Each table opened once: its footer, then its filter and index, then
    // its first block (to check its first key against the manifest).
    assert_eq!(r.other_reads, tables, "{r:?}");
    assert_eq!(r.index_filter_reads, tables, "{r:?}");
    assert!(r.lookup_data_block_reads > 0, "{r:?}");
    assert!(
        r.data_block_reads >= r.lookup_data_block_reads + tables,
        "{r:?}"
    );
    assert!(
        r.data_reads_per_lookup() > 0.0 && r.data_reads_per_lookup() <= 1.0,
        "{r:?}"
    );
    assert!(s.data_block_hit_rate() < 1.0, "{s:?}");

    // Nothing read since: the counts stand still.
    let again = db.stats();
    assert_eq!(again.reads, r);
    assert_eq!(again.reads.file_reads(), table_reads.load(Ordering::SeqCst));
}

#[test]
fn a_batch_in_key_order_reads_each_block_about_once() {
    let mem = MemFs::new();
    build(&mem);
    // Every key, asked in an order far from the keys' (7919 is prime, so
    // stepping by it visits each place once).
    let n = KEYS as usize;
    let keys: Vec<Vec<u8>> = (0..n).map(|i| key(2 * ((i * 7919) % n) as u32)).collect();

    let (one_by_one, _) = open_counting(&mem, 8 << 10);
    for k in &keys {
        assert!(one_by_one.get(k).expect("get").is_some());
    }
    let loop_reads = one_by_one.stats().reads.lookup_data_block_reads;
    one_by_one.close().expect("close");

    let (batched, _) = open_counting(&mem, 8 << 10);
    let values = batched.get_many(&keys).expect("get_many");
    assert!(values.iter().all(Option::is_some));
    let batch_reads = batched.stats().reads.lookup_data_block_reads;

    // Blocks hold about five keys each: in the batch each block is read
    // once (with a few more where a key's block is a table's first); one
    // by one, out of order, a cache of a few blocks reads nearly one a key.
    assert!(
        batch_reads * 3 < n as u64,
        "{batch_reads} reads for {n} keys"
    );
    assert!(loop_reads * 2 > n as u64, "{loop_reads} reads for {n} keys");
    assert!(
        batch_reads * 2 < loop_reads,
        "batch {batch_reads}, one by one {loop_reads}"
    );
}

/// Of the reads among `events`, how many and how many of them fall inside
/// a span the same file asked for before them.
fn reads_asked_for(events: &[(String, Event)]) -> (usize, usize) {
    let mut asked: Vec<(&str, u64, u64)> = Vec::new();
    let (mut reads, mut covered) = (0, 0);
    for (name, e) in events {
        match *e {
            Event::WillNeed { offset, len } => asked.push((name, offset, offset + len)),
            Event::Read { offset, len } => {
                reads += 1;
                let inside = |&&(n, from, to): &&(&str, u64, u64)| {
                    n == name && from <= offset && offset + len <= to
                };
                if asked.iter().any(|a| inside(&a)) {
                    covered += 1;
                }
            }
            Event::Random => {}
        }
    }
    (reads, covered)
}

#[test]
fn tables_are_read_without_read_ahead_and_readers_ask_for_what_they_read_next() {
    let mem = MemFs::new();
    build(&mem);
    let (db, _, events) = open_recording(&mem, 4 << 10);
    let taken = |events: &Events| std::mem::take(&mut *events.lock().expect("events lock"));
    // Point lookups: every table file is advised before it is read, and
    // nothing is asked ahead.
    for i in (0..2 * KEYS).step_by(53) {
        db.get(&key(i)).expect("get");
    }
    let lookups = taken(&events);
    let mut advised = std::collections::HashSet::new();
    for (name, e) in &lookups {
        match e {
            Event::Random => {
                advised.insert(name.clone());
            }
            Event::Read { .. } => assert!(advised.contains(name), "{name} read before advised"),
            Event::WillNeed { .. } => panic!("a point lookup asked for read-ahead: {e:?}"),
        }
    }
    assert!(advised.len() > 1, "{lookups:?}");
    // A batch asks for the blocks its keys need before it reads them.
    let batch: Vec<Vec<u8>> = (0..2 * KEYS).rev().step_by(31).map(key).collect();
    db.get_many(&batch).expect("get_many");
    let (reads, covered) = reads_asked_for(&taken(&events));
    assert!(reads > 20, "{reads} reads");
    assert!(
        covered * 10 >= reads * 9,
        "{covered} of {reads} batch reads asked for"
    );
    // A scan asks ahead once it reads blocks in a row.
    assert_eq!(db.iter().count(), KEYS as usize);
    let (reads, covered) = reads_asked_for(&taken(&events));
    assert!(reads > 100, "{reads} reads");
    assert!(
        covered * 10 >= reads * 9,
        "{covered} of {reads} reads asked for"
    );
    // A compaction asks from its inputs' first blocks.
    for i in 0..KEYS / 2 {
        db.put(&key(2 * i + 1), &[b'w'; 40]).expect("put");
    }
    taken(&events);
    db.compact().expect("compact");
    let compaction = taken(&events);
    let (reads, covered) = reads_asked_for(&compaction);
    assert!(reads > 100, "{reads} reads");
    assert!(
        covered * 10 >= reads * 9,
        "{covered} of {reads} reads asked for"
    );
}
