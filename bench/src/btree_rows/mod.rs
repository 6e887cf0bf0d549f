//! `lamina-bench btree-rows`: the rows of redb's engine comparison (the
//! `benchmark` function of redb's `redb-bench` crate, as its
//! `lmdb_benchmark` runs it) for lamina, RocksDB, LMDB and redb in one run:
//! the same operations, sizes, keys, values and timing, one engine after
//! another, each in a process of its own (`driver.rs`), and a table with
//! lamina over the best peer (`report.rs`). This file owns the rows: the
//! data they write, what each does, how each is timed and checked, and the
//! interface the engines' adapters (one file each) implement.
//!
//! **Data.** Keys of 24 random bytes with values of 150 random bytes, from
//! fastrand's generator seeded with 3 (a pair is `fill(key)` then
//! `fill(value)`); one stream goes on through the run, so every engine gets
//! the same pairs. N = `--elements` (default 5,000,000); every other count
//! below is the harness's, scaled by N / 5,000,000 (at least 1) when N is
//! not the default. E = the pairs of the first four write rows (N + 1,000 +
//! 100,000 + 50,000). A *write transaction* is committed durably unless the
//! row says otherwise. The rows, in the order they run:
//!
//! 1. `bulk-load`: one write transaction putting the first N pairs (key/s).
//! 2. `individual-writes`: 1,000 write transactions of one put (txn/s).
//! 3. `batch-writes`: 100 write transactions of 1,000 puts (key/s).
//! 4. `nosync-writes`: 50,000 write transactions of one put, committed
//!    without a sync (txn/s).
//! 5. `len`: in a read transaction opened now, the entries counted; must
//!    be E (a time).
//! 6. `random-reads`: in the same read transaction, gets of the first
//!    1,000,000 keys of the stream, in its order; each must be found, and
//!    the sum of the values' first bytes must be the stream's. Run 3 times,
//!    the median reported (key/s).
//! 7. `range-reads`: in the same read transaction, from each of the first
//!    500,000 keys of the stream, up to 10 entries in key order (fewer only
//!    where the table ends); 3 runs, the median (range reads/s). The
//!    entries read are checked against the other engines'.
//! 8. `reads-4-threads`, `reads-8-threads`, `reads-16-threads`,
//!    `reads-32-threads`: T threads, each with its own read transaction,
//!    thread i getting E / T keys from pair i·(E / T) of the stream; all
//!    found, sums checked. Timed from the threads' spawn to the last one's
//!    end (key/s over E).
//! 9. `removals`: one write transaction removing the first E / 2 keys of
//!    the stream (key/s).
//! 10. `retain`: one write transaction visiting every entry in key order
//!     and removing every other one (the 2nd, 4th, ...); must remove half
//!     of the entries (key/s removed). Then, not timed, as many new pairs
//!     of the stream put in one write transaction.
//! 11. `extract-if`: one write transaction visiting the entries from
//!     24 × 0x55 (included) to 24 × 0xAA (excluded), a third of them, in
//!     key order and removing every other one (the 2nd, 4th, ...) (key/s
//!     removed); checked against the other engines. Then, not timed, as
//!     many new pairs put.
//! 12. `pop`: one write transaction removing 500,000 entries, alternately
//!     the first and the last in key order, timed without its commit. If
//!     the first 5,000 take more than a second, the time is theirs × 100
//!     (marked estimated) and the rest are removed, not timed, by a retain
//!     in the same transaction. The first pop must return the smallest key,
//!     the popped keys must close in from both ends, and they are checked
//!     against the other engines'. Then, not timed, 500,000 new pairs put
//!     (key/s).
//! 13. `uncompacted-size`: the sum of the sizes of the database's files.
//! 14. `compacted-size`: the same after the engine's compaction.
//! 15. `sorted-inserts` (run last, reported after `batch-writes`): one write
//!     transaction putting 1,000,000 pairs with 32-byte keys (24 × 0xFF,
//!     then the index big-endian: past every key in the table, ascending)
//!     and values from the stream, made before the timing, through the
//!     engine's fastest sorted-insert path (key/s). Afterwards, not timed,
//!     the entries from 24 × 0xFF are counted.
//!
//! `--rows` runs a subset: every write row up to the last one asked for
//! still runs (they make the state the next rows find), read and size rows
//! not asked for are skipped, and nothing after the last one asked for
//! runs.

mod driver;
mod lamina_engine;
#[cfg(feature = "lmdb")]
mod lmdb_engine;
mod report;
#[cfg(feature = "redb")]
mod redb_engine;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;

pub use driver::{run, BtreeRowsArgs};

#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

/// Pairs of the bulk load at the default size.
pub const BULK_ELEMENTS: u64 = 5_000_000;
/// Runs of each single-threaded read row; the median is reported.
const READ_ITERATIONS: usize = 3;
const SORTED_ELEMENTS: u64 = 1_000_000;
const INDIVIDUAL_WRITES: u64 = 1_000;
const NOSYNC_WRITES: u64 = 50_000;
const BATCH_WRITES: u64 = 100;
/// Puts per batch write (never scaled).
const BATCH_SIZE: u64 = 1_000;
const NUM_READS: u64 = 1_000_000;
const NUM_SCANS: u64 = 500_000;
/// Entries per range read (never scaled).
const SCAN_LEN: usize = 10;
const POP_REMOVALS: u64 = 500_000;
const POP_SAMPLE_REMOVALS: u64 = 5_000;
const SLOW_POP_SAMPLE_LIMIT: Duration = Duration::from_secs(1);
/// Bytes of a key.
pub const KEY_SIZE: usize = 24;
/// Bytes of a value.
pub const VALUE_SIZE: usize = 150;
const RNG_SEED: u64 = 3;
/// The cache redb and RocksDB are given (the harness's `CACHE_SIZE`).
pub const CACHE_SIZE: usize = 4 << 30;
/// Threads of the multi-threaded read rows.
const THREADS: [usize; 4] = [4, 8, 16, 32];
/// Bounds of the extract-if row's range.
const EXTRACT_START: [u8; KEY_SIZE] = [0x55; KEY_SIZE];
const EXTRACT_END: [u8; KEY_SIZE] = [0xAA; KEY_SIZE];

/// What a row's figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Keys put, read or removed a second.
    Keys,
    /// Write transactions a second.
    Txns,
    /// Range reads a second.
    Scans,
    /// Seconds (lower is better).
    Time,
    /// Bytes (lower is better).
    Size,
}

impl Unit {
    /// The unit as the table names it.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Keys => "key/s",
            Unit::Txns => "txn/s",
            Unit::Scans => "scan/s",
            Unit::Time => "time",
            Unit::Size => "bytes",
        }
    }

    /// Whether a higher figure is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Unit::Keys | Unit::Txns | Unit::Scans)
    }
}

/// The rows as the table lists them (the harness's order: sorted inserts
/// among the writes), with the harness's titles.
pub const ROWS: [(&str, &str, Unit); 18] = [
    ("bulk-load", "bulk load", Unit::Keys),
    ("individual-writes", "individual writes", Unit::Txns),
    ("batch-writes", "small batch writes", Unit::Keys),
    ("sorted-inserts", "sorted inserts", Unit::Keys),
    ("nosync-writes", "nosync writes", Unit::Txns),
    ("len", "len()", Unit::Time),
    ("random-reads", "random reads", Unit::Keys),
    ("range-reads", "random range reads", Unit::Scans),
    ("reads-4-threads", "random reads (4 threads)", Unit::Keys),
    ("reads-8-threads", "random reads (8 threads)", Unit::Keys),
    ("reads-16-threads", "random reads (16 threads)", Unit::Keys),
    ("reads-32-threads", "random reads (32 threads)", Unit::Keys),
    ("removals", "removals", Unit::Keys),
    ("retain", "retain", Unit::Keys),
    ("extract-if", "extract_if", Unit::Keys),
    ("pop", "pop", Unit::Keys),
    ("uncompacted-size", "uncompacted size", Unit::Size),
    ("compacted-size", "compacted size", Unit::Size),
];

/// The steps in the order they run; a row's position here decides what
/// must run before it.
const RUN_ORDER: [&str; 18] = [
    "bulk-load",
    "individual-writes",
    "batch-writes",
    "nosync-writes",
    "len",
    "random-reads",
    "range-reads",
    "reads-4-threads",
    "reads-8-threads",
    "reads-16-threads",
    "reads-32-threads",
    "removals",
    "retain",
    "extract-if",
    "pop",
    "uncompacted-size",
    "compacted-size",
    "sorted-inserts",
];

/// The unit of row `id`.
pub fn unit(id: &str) -> Option<Unit> {
    ROWS.iter().find(|r| r.0 == id).map(|r| r.2)
}

/// The counts of a run of N elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizes {
    pub bulk: u64,
    pub individual: u64,
    pub batches: u64,
    pub nosync: u64,
    pub reads: u64,
    pub scans: u64,
    pub pops: u64,
    pub pop_sample: u64,
    pub sorted: u64,
    /// How long the first `pop_sample` pops may take before the pop rate
    /// is estimated from them (the harness's second).
    pub pop_sample_limit: Duration,
}

impl Sizes {
    /// The harness's counts scaled by `elements` / 5,000,000 (at least 1).
    pub fn new(elements: u64) -> Sizes {
        let scaled = |n: u64| {
            let s = u128::from(n) * u128::from(elements) / u128::from(BULK_ELEMENTS);
            u64::try_from(s).unwrap_or(u64::MAX).max(1)
        };
        Sizes {
            bulk: elements,
            individual: scaled(INDIVIDUAL_WRITES),
            batches: scaled(BATCH_WRITES),
            nosync: scaled(NOSYNC_WRITES),
            reads: scaled(NUM_READS),
            scans: scaled(NUM_SCANS),
            pops: scaled(POP_REMOVALS),
            pop_sample: scaled(POP_SAMPLE_REMOVALS),
            sorted: scaled(SORTED_ELEMENTS),
            pop_sample_limit: SLOW_POP_SAMPLE_LIMIT,
        }
    }

    /// E: the pairs the first four write rows put.
    pub fn elements(&self) -> u64 {
        self.bulk + self.individual + self.batches * BATCH_SIZE + self.nosync
    }
}

/// What one row measured on one engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The row.
    pub id: &'static str,
    /// Operations the rate counts (keys, transactions, range reads).
    pub count: u64,
    /// Seconds (the time of a rate, or the time itself).
    pub secs: f64,
    /// Bytes, for the size rows.
    pub bytes: Option<u64>,
    /// What was read or removed, which every engine must agree on ("" for
    /// nothing to compare).
    pub check: String,
    /// The time is extrapolated from a sample (the pop row's slow case).
    pub estimated: bool,
}

/// One write transaction of an engine, as the rows use it.
pub trait Writer {
    /// Puts a pair.
    fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<(), String>;
    /// Puts pairs whose keys ascend and follow every key in the table,
    /// through the engine's fastest path for that (ordinary puts where it
    /// has none).
    fn insert_sorted<'p>(
        &mut self,
        pairs: &mut dyn Iterator<Item = (&'p [u8], &'p [u8])>,
    ) -> Result<(), String>;
    /// Removes a key.
    fn remove(&mut self, key: &[u8]) -> Result<(), String>;
    /// Removes the first entry in key order, passing its key to `seen`;
    /// false if the table is empty.
    fn pop_first(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String>;
    /// Removes the last entry in key order, as `pop_first`.
    fn pop_last(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String>;
    /// Visits every entry in key order and removes those `keep` refuses;
    /// returns how many it removed.
    fn retain(&mut self, keep: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<u64, String>;
    /// Visits the entries in `[start, end)` in key order and removes those
    /// `extract` chooses; returns how many it removed.
    fn extract_if(
        &mut self,
        start: &[u8],
        end: &[u8],
        extract: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64, String>;
}

/// One read transaction of an engine.
pub trait Reader {
    /// The first byte of `key`'s value (0 for an empty value); `None` if
    /// the key is absent.
    fn get(&mut self, key: &[u8]) -> Result<Option<u8>, String>;
    /// Visits up to `n` entries in key order from `start` (included);
    /// returns how many it visited.
    fn range_from(
        &mut self,
        start: &[u8],
        n: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, String>;
    /// The number of entries.
    fn len(&mut self) -> Result<u64, String>;
}

/// An open database of one engine, with the harness's settings.
pub trait Engine: Sync {
    /// Runs `f` in one write transaction and commits it: durably when
    /// `durable`, otherwise without a sync.
    fn write(
        &mut self,
        durable: bool,
        f: &mut dyn FnMut(&mut dyn Writer) -> Result<(), String>,
    ) -> Result<(), String>;
    /// Runs `f` in one read transaction (a snapshot).
    fn read(&self, f: &mut dyn FnMut(&mut dyn Reader) -> Result<(), String>)
        -> Result<(), String>;
    /// Compacts the database as the harness does for this engine.
    fn compact(&mut self) -> Result<(), String>;
    /// Closes the database.
    fn close(self: Box<Self>) -> Result<(), String>;
}

/// The stream of pairs: fastrand seeded with 3, a key then a value.
#[derive(Clone)]
struct Stream {
    rng: fastrand::Rng,
    key: [u8; KEY_SIZE],
    value: [u8; VALUE_SIZE],
}

impl Stream {
    fn new() -> Stream {
        Stream {
            rng: fastrand::Rng::with_seed(RNG_SEED),
            key: [0; KEY_SIZE],
            value: [0; VALUE_SIZE],
        }
    }

    /// The stream from pair `n` on.
    fn from(n: u64) -> Stream {
        let mut s = Stream::new();
        for _ in 0..n {
            s.next_pair();
        }
        s
    }

    /// Draws the next pair into `key` and `value`.
    fn next_pair(&mut self) {
        self.rng.fill(&mut self.key);
        self.rng.fill(&mut self.value);
    }
}

/// Which rows to run and report.
pub struct Selection {
    wanted: Vec<&'static str>,
    /// The position in [`RUN_ORDER`] of the last row wanted.
    last: usize,
}

impl Selection {
    /// The rows named (ids of [`ROWS`]), or all for an empty list.
    pub fn new(ids: &[String]) -> Result<Selection, String> {
        let mut wanted = Vec::new();
        for id in ids {
            match ROWS.iter().find(|r| r.0 == id) {
                Some(r) => wanted.push(r.0),
                None => {
                    let all: Vec<&str> = ROWS.iter().map(|r| r.0).collect();
                    return Err(format!("unknown row {id}; these are: {}", all.join(", ")));
                }
            }
        }
        if wanted.is_empty() {
            wanted = ROWS.iter().map(|r| r.0).collect();
        }
        let last = RUN_ORDER
            .iter()
            .rposition(|id| wanted.contains(id))
            .unwrap_or(0);
        Ok(Selection { wanted, last })
    }

    /// Whether row `id` is reported.
    pub fn wants(&self, id: &str) -> bool {
        self.wanted.contains(&id)
    }

    /// Whether step `id` runs at all: every step up to the last row wanted
    /// that changes the database, and the rows wanted.
    fn runs(&self, id: &str, changes: bool) -> bool {
        let at = RUN_ORDER.iter().position(|r| *r == id).unwrap_or(usize::MAX);
        at <= self.last && (changes || self.wants(id))
    }

    /// Whether nothing after step `id` is needed.
    fn done_after(&self, id: &str) -> bool {
        RUN_ORDER.iter().position(|r| *r == id).unwrap_or(0) >= self.last
    }
}

/// Where the rows' results go as they are measured.
pub type Sink<'a> = dyn FnMut(Measured) -> Result<(), String> + 'a;

/// A timed rate row's result.
fn rate_row(id: &'static str, count: u64, d: Duration) -> Measured {
    Measured {
        id,
        count,
        secs: d.as_secs_f64(),
        bytes: None,
        check: String::new(),
        estimated: false,
    }
}

/// The median of `d` (the upper middle one of an even count, as the harness).
fn median(mut d: Vec<Duration>) -> Duration {
    d.sort_unstable();
    d.get(d.len() / 2).copied().unwrap_or_default()
}

/// Runs the rows `sel` asks for on `db`, in the harness's order, passing
/// each result to `out` as it is measured. `size` gives the bytes of the
/// database's files.
pub fn run_rows(
    db: &mut dyn Engine,
    sizes: &Sizes,
    sel: &Selection,
    size: &dyn Fn() -> u64,
    out: &mut Sink<'_>,
) -> Result<(), String> {
    let mut rows = Rows {
        sizes: *sizes,
        sel,
        out,
        stream: Stream::new(),
    };
    rows.writes(db)?;
    if sel.done_after("nosync-writes") {
        return Ok(());
    }
    rows.reads(&*db)?;
    rows.thread_reads(&*db)?;
    if sel.done_after("reads-32-threads") {
        return Ok(());
    }
    rows.removals(db)?;
    if sel.done_after("removals") {
        return Ok(());
    }
    rows.retain(db)?;
    if sel.done_after("retain") {
        return Ok(());
    }
    rows.extract_if(db)?;
    if sel.done_after("extract-if") {
        return Ok(());
    }
    rows.pop(db)?;
    if sel.done_after("pop") {
        return Ok(());
    }
    if sel.runs("uncompacted-size", false) {
        rows.emit(size_row("uncompacted-size", size()))?;
    }
    if sel.done_after("uncompacted-size") {
        return Ok(());
    }
    db.compact()?;
    if sel.wants("compacted-size") {
        rows.emit(size_row("compacted-size", size()))?;
    }
    if sel.done_after("compacted-size") {
        return Ok(());
    }
    rows.sorted_inserts(db)
}

fn size_row(id: &'static str, bytes: u64) -> Measured {
    Measured {
        id,
        count: 0,
        secs: 0.0,
        bytes: Some(bytes),
        check: String::new(),
        estimated: false,
    }
}

/// The run's state: the stream of pairs goes on from row to row.
struct Rows<'a, 'o> {
    sizes: Sizes,
    sel: &'a Selection,
    out: &'a mut Sink<'o>,
    stream: Stream,
}

impl Rows<'_, '_> {
    fn emit(&mut self, m: Measured) -> Result<(), String> {
        if self.sel.wants(m.id) {
            (self.out)(m)?;
        }
        Ok(())
    }

    /// `txns` write transactions of `per_txn` puts of the next pairs.
    fn put_txns(
        &mut self,
        db: &mut dyn Engine,
        txns: u64,
        per_txn: u64,
        durable: bool,
    ) -> Result<Duration, String> {
        let stream = &mut self.stream;
        let t0 = Instant::now();
        for _ in 0..txns {
            db.write(durable, &mut |w| {
                for _ in 0..per_txn {
                    stream.next_pair();
                    w.insert(&stream.key, &stream.value)?;
                }
                Ok(())
            })?;
        }
        Ok(t0.elapsed())
    }

    /// Rows 1 to 4.
    fn writes(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let s = self.sizes;
        let d = self.put_txns(db, 1, s.bulk, true)?;
        self.emit(rate_row("bulk-load", s.bulk, d))?;
        if self.sel.done_after("bulk-load") {
            return Ok(());
        }
        let d = self.put_txns(db, s.individual, 1, true)?;
        self.emit(rate_row("individual-writes", s.individual, d))?;
        if self.sel.done_after("individual-writes") {
            return Ok(());
        }
        let d = self.put_txns(db, s.batches, BATCH_SIZE, true)?;
        self.emit(rate_row("batch-writes", s.batches * BATCH_SIZE, d))?;
        if self.sel.done_after("batch-writes") {
            return Ok(());
        }
        let d = self.put_txns(db, s.nosync, 1, false)?;
        self.emit(rate_row("nosync-writes", s.nosync, d))
    }

    /// Rows 5 to 7, in one read transaction.
    fn reads(&mut self, db: &dyn Engine) -> Result<(), String> {
        let sel = self.sel;
        let (run_len, run_reads, run_ranges) = (
            sel.runs("len", false),
            sel.runs("random-reads", false),
            sel.runs("range-reads", false),
        );
        if !(run_len || run_reads || run_ranges) {
            return Ok(());
        }
        let elements = self.sizes.elements();
        let (reads, scans) = (self.sizes.reads, self.sizes.scans);
        let mut results = Vec::new();
        db.read(&mut |r| {
            if run_len {
                let t0 = Instant::now();
                let len = r.len()?;
                let d = t0.elapsed();
                if len != elements {
                    return Err(format!("len() counted {len} entries, expected {elements}"));
                }
                let mut m = rate_row("len", 1, d);
                m.check = len.to_string();
                results.push(m);
            }
            if run_reads {
                let mut times = Vec::new();
                for _ in 0..READ_ITERATIONS {
                    let t0 = Instant::now();
                    point_reads(r, Stream::new(), reads)?;
                    times.push(t0.elapsed());
                }
                results.push(rate_row("random-reads", reads, median(times)));
            }
            if run_ranges {
                let mut times = Vec::new();
                let mut seen = Vec::new();
                for _ in 0..READ_ITERATIONS {
                    let t0 = Instant::now();
                    let got = range_reads(r, scans)?;
                    times.push(t0.elapsed());
                    seen.push(got);
                }
                seen.dedup();
                let [(entries, sum)] = seen.as_slice() else {
                    return Err(format!("the runs of the range reads read differently: {seen:?}"));
                };
                if *sum == 0 {
                    return Err("the range reads read nothing".into());
                }
                let mut m = rate_row("range-reads", scans, median(times));
                m.check = format!("{entries} entries, first bytes summing to {sum}");
                results.push(m);
            }
            Ok(())
        })?;
        results.into_iter().try_for_each(|m| self.emit(m))
    }

    /// Rows 8: the reads at 4 to 32 threads.
    fn thread_reads(&mut self, db: &dyn Engine) -> Result<(), String> {
        let elements = self.sizes.elements();
        for (threads, id) in THREADS.into_iter().zip([
            "reads-4-threads",
            "reads-8-threads",
            "reads-16-threads",
            "reads-32-threads",
        ]) {
            if !self.sel.runs(id, false) {
                continue;
            }
            let per = elements / threads as u64;
            // Each thread's place in the stream, found before the timing.
            let streams: Vec<Stream> = (0..threads as u64).map(|i| Stream::from(i * per)).collect();
            let barrier = std::sync::Barrier::new(threads);
            let t0 = Instant::now();
            let results: Vec<Result<(), String>> = std::thread::scope(|s| {
                let handles: Vec<_> = streams
                    .into_iter()
                    .map(|stream| {
                        let barrier = &barrier;
                        s.spawn(move || {
                            barrier.wait();
                            db.read(&mut |r| point_reads(r, stream.clone(), per))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err("a reader panicked".into())))
                    .collect()
            });
            let d = t0.elapsed();
            results.into_iter().collect::<Result<Vec<()>, String>>()?;
            self.emit(rate_row(id, elements, d))?;
        }
        Ok(())
    }

    /// Row 9.
    fn removals(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let deletes = self.sizes.elements() / 2;
        let t0 = Instant::now();
        db.write(true, &mut |w| {
            let mut stream = Stream::new();
            for _ in 0..deletes {
                stream.next_pair();
                w.remove(&stream.key)?;
            }
            Ok(())
        })?;
        self.emit(rate_row("removals", deletes, t0.elapsed()))
    }

    /// Puts `n` new pairs of the stream in one write transaction (not
    /// timed).
    fn refill(&mut self, db: &mut dyn Engine, n: u64) -> Result<(), String> {
        self.put_txns(db, 1, n, true).map(|_| ())
    }

    /// The table's length between the rows (not timed).
    fn len_now(db: &dyn Engine) -> Result<u64, String> {
        let mut len = 0;
        db.read(&mut |r| {
            len = r.len()?;
            Ok(())
        })?;
        Ok(len)
    }

    /// Row 10.
    fn retain(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let before = self.sizes.elements() - self.sizes.elements() / 2;
        let mut removed = 0;
        let t0 = Instant::now();
        db.write(true, &mut |w| {
            let mut counter = 0u64;
            removed = w.retain(&mut |_, _| {
                let keep = counter % 2 == 0;
                counter += 1;
                keep
            })?;
            if counter != before {
                return Err(format!(
                    "retain visited {counter} entries, expected {before}"
                ));
            }
            Ok(())
        })?;
        let d = t0.elapsed();
        if removed != before / 2 {
            return Err(format!(
                "retain removed {removed} of {before} entries, expected {}",
                before / 2
            ));
        }
        let mut m = rate_row("retain", removed, d);
        m.check = removed.to_string();
        self.emit(m)?;
        self.refill(db, removed)
    }

    /// Row 11.
    fn extract_if(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let mut extracted = 0;
        let mut visited = 0u64;
        let t0 = Instant::now();
        db.write(true, &mut |w| {
            let mut counter = 0u64;
            extracted = w.extract_if(&EXTRACT_START, &EXTRACT_END, &mut |_, _| {
                let extract = counter % 2 == 1;
                counter += 1;
                extract
            })?;
            visited = counter;
            Ok(())
        })?;
        let d = t0.elapsed();
        if extracted != visited / 2 || extracted == 0 {
            return Err(format!(
                "extract_if removed {extracted} of the {visited} entries it visited, expected {}",
                visited / 2
            ));
        }
        let mut m = rate_row("extract-if", extracted, d);
        m.check = format!("{extracted} of {visited}");
        self.emit(m)?;
        self.refill(db, extracted)
    }

    /// Row 12.
    fn pop(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let (pops, sample, limit) = (
            self.sizes.pops,
            self.sizes.pop_sample,
            self.sizes.pop_sample_limit,
        );
        let len = Self::len_now(db)?;
        let expected_len = self.sizes.elements() - self.sizes.elements() / 2;
        if len != expected_len || len < pops {
            return Err(format!(
                "before pop the table holds {len} entries, expected {expected_len}"
            ));
        }
        // The smallest key, which the first pop must return (not timed).
        let mut smallest = Vec::new();
        db.read(&mut |r| {
            r.range_from(&[], 1, &mut |k, _| smallest = k.to_vec())
                .map(|_| ())
        })?;
        let mut check = PopCheck::default();
        let mut timed = 0u64;
        let mut duration = None;
        db.write(true, &mut |w| {
            let t0 = Instant::now();
            for i in 0..pops {
                let front = i % 2 == 0;
                let got = if front {
                    w.pop_first(&mut |k| check.front(k))?
                } else {
                    w.pop_last(&mut |k| check.back(k))?
                };
                if !got {
                    return Err(format!("pop {i} found the table empty"));
                }
                timed += 1;
                // An engine slow at popping: estimate the whole from the
                // first 1%, as the harness does.
                if i + 1 == sample {
                    let d = t0.elapsed();
                    if d > limit {
                        duration = Some(d.saturating_mul(u32::try_from(pops / sample).unwrap_or(u32::MAX)));
                        break;
                    }
                }
            }
            if duration.is_none() {
                duration = Some(t0.elapsed());
            }
            if timed < pops {
                // The remaining pops' removals, by retain (not timed).
                let front_left = pops.div_ceil(2) - timed.div_ceil(2);
                let back_left = pops / 2 - timed / 2;
                let remaining = len - timed;
                let mut index = 0u64;
                let removed = w.retain(&mut |_, _| {
                    let keep = index >= front_left && index < remaining - back_left;
                    index += 1;
                    keep
                })?;
                if index != remaining || removed != front_left + back_left {
                    return Err(format!(
                        "the retain after the sampled pops visited {index} and removed {removed}"
                    ));
                }
            }
            Ok(())
        })?;
        check.verify(&smallest, timed)?;
        let mut m = rate_row("pop", pops, duration.unwrap_or_default());
        m.estimated = timed < pops;
        m.check = check.to_string();
        self.emit(m)?;
        self.refill(db, pops)
    }

    /// Row 15.
    fn sorted_inserts(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let n = self.sizes.sorted;
        let pairs: Vec<([u8; KEY_SIZE + 8], [u8; VALUE_SIZE])> = (0..n)
            .map(|i| {
                let mut key = [0xFF; KEY_SIZE + 8];
                if let Some(tail) = key.get_mut(KEY_SIZE..) {
                    tail.copy_from_slice(&i.to_be_bytes());
                }
                let mut value = [0; VALUE_SIZE];
                self.stream.rng.fill(&mut value);
                (key, value)
            })
            .collect();
        let t0 = Instant::now();
        db.write(true, &mut |w| {
            let mut it = pairs.iter().map(|(k, v)| (&k[..], &v[..]));
            w.insert_sorted(&mut it)
        })?;
        let d = t0.elapsed();
        // What the sorted inserts left past the random keys (not timed).
        let mut found = 0u64;
        db.read(&mut |r| {
            found = r.range_from(&[0xFF; KEY_SIZE], usize::MAX, &mut |_, _| {})? as u64;
            Ok(())
        })?;
        if found != n {
            return Err(format!(
                "after the sorted inserts {found} keys follow 24 x 0xFF, expected {n}"
            ));
        }
        let mut m = rate_row("sorted-inserts", n, d);
        m.check = found.to_string();
        self.emit(m)
    }
}

/// Gets `n` keys of `stream` in order; each must be found with the value
/// the stream gave it (by the sum of their first bytes, as the harness).
fn point_reads(r: &mut dyn Reader, mut stream: Stream, n: u64) -> Result<(), String> {
    let (mut sum, mut expected, mut found) = (0u64, 0u64, 0u64);
    for _ in 0..n {
        stream.next_pair();
        if let Some(b) = r.get(&stream.key)? {
            sum += u64::from(b);
            found += 1;
        }
        expected += u64::from(stream.value.first().copied().unwrap_or(0));
    }
    if found != n || sum != expected {
        return Err(format!(
            "random reads found {found} of {n} keys (first bytes summing to {sum}, expected {expected})"
        ));
    }
    Ok(())
}

/// Range reads of [`SCAN_LEN`] entries from each of the first `n` keys of
/// the stream; returns the entries read and the sum of their values' first
/// bytes. A range ends short only where the table does.
fn range_reads(r: &mut dyn Reader, n: u64) -> Result<(u64, u64), String> {
    let mut stream = Stream::new();
    let (mut entries, mut sum) = (0u64, 0u64);
    let mut short = 0u64;
    for _ in 0..n {
        stream.next_pair();
        let got = r.range_from(&stream.key, SCAN_LEN, &mut |_, v| {
            sum += u64::from(v.first().copied().unwrap_or(0));
        })?;
        if got < SCAN_LEN {
            short += 1;
        }
        entries += got as u64;
    }
    // Only a start among the last SCAN_LEN keys may read fewer; with
    // random keys that is a handful.
    if short > n / 100 + SCAN_LEN as u64 {
        return Err(format!(
            "{short} of {n} range reads ended before {SCAN_LEN} entries"
        ));
    }
    Ok((entries, sum))
}

/// What the pops returned: front pops must ascend from the smallest key,
/// back pops descend, the two never cross; and a digest of every key, for
/// the comparison between engines.
#[derive(Default)]
struct PopCheck {
    first_front: Option<Vec<u8>>,
    last_front: Vec<u8>,
    last_back: Option<Vec<u8>>,
    fronts: u64,
    backs: u64,
    disorder: u64,
    digest: u64,
}

impl PopCheck {
    fn mix(&mut self, k: &[u8], role: u64) {
        // FNV-1a over the key, summed: the same keys popped from the same
        // ends give the same digest.
        let mut h = 0xcbf2_9ce4_8422_2325u64 ^ role;
        for b in k {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.digest = self.digest.wrapping_add(h);
    }

    fn front(&mut self, k: &[u8]) {
        if self.first_front.is_none() {
            self.first_front = Some(k.to_vec());
        } else if k <= self.last_front.as_slice() {
            self.disorder += 1;
        }
        self.last_front.clear();
        self.last_front.extend_from_slice(k);
        self.fronts += 1;
        self.mix(k, 0);
    }

    fn back(&mut self, k: &[u8]) {
        match &mut self.last_back {
            Some(b) => {
                if k >= b.as_slice() {
                    self.disorder += 1;
                }
                b.clear();
                b.extend_from_slice(k);
            }
            None => self.last_back = Some(k.to_vec()),
        }
        self.backs += 1;
        self.mix(k, 1);
    }

    fn verify(&self, smallest: &[u8], pops: u64) -> Result<(), String> {
        if self.first_front.as_deref() != Some(smallest) {
            return Err("the first pop did not return the smallest key".into());
        }
        if self.fronts + self.backs != pops {
            return Err(format!(
                "{} pops returned a key, expected {pops}",
                self.fronts + self.backs
            ));
        }
        if self.disorder > 0 {
            return Err(format!(
                "{} pops returned a key out of order",
                self.disorder
            ));
        }
        if let Some(b) = &self.last_back {
            if self.last_front.as_slice() >= b.as_slice() {
                return Err("the pops from the front passed those from the back".into());
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for PopCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} first + {} last, digest {:016x}",
            self.fronts, self.backs, self.digest
        )
    }
}
