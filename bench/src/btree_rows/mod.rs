//! `lamina-bench btree-rows`: the rows of redb's engine comparison (the
//! `benchmark` function of redb's `redb-bench` crate, as its
//! `lmdb_benchmark` runs it) for lamina, RocksDB, LMDB and redb in one run:
//! the same operations, sizes, keys, values and timing, one engine after
//! another, each in a process of its own (`driver.rs`), and a table with
//! lamina over the best peer (`report.rs`). This file owns the rows' list:
//! the data they write, what each does and the order they run in (each
//! row's operations and timing are in `rows.rs`, the checks of what they
//! read in `checks.rs`), and the interface the engines' adapters (one file
//! each) implement.
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

mod checks;
mod driver;
mod lamina_engine;
#[cfg(feature = "lmdb")]
mod lmdb_engine;
#[cfg(feature = "redb")]
mod redb_engine;
mod report;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;
mod rows;

pub use driver::{run, BtreeRowsArgs};

#[cfg(test)]
mod tests;

use rows::Rows;
use std::time::Duration;

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
    fn read(&self, f: &mut dyn FnMut(&mut dyn Reader) -> Result<(), String>) -> Result<(), String>;
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
        let at = RUN_ORDER
            .iter()
            .position(|r| *r == id)
            .unwrap_or(usize::MAX);
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
