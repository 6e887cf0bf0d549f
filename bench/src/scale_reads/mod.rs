//! `lamina-bench scale-reads`: random point lookups in a data set many
//! times larger than the memory the reading process may use, for lamina,
//! RocksDB, LMDB, redb and Berkeley DB in one run, beside what the device
//! itself does.
//!
//! Each engine loads the same data set (`data.rs`) in key order into a work
//! directory, through its fastest path for a full load (untimed; the time
//! is printed). Then each engine's lookups run in a process of its own,
//! started under `bench/memlimit` so that its memory, page cache included,
//! is capped, after the page cache is dropped (`driver.rs`). The modes run
//! in the order of [`MODES`], each for `--seconds`, first with found keys,
//! then with absent ones (`lookups.rs`); each counts the device's reads and
//! the bytes the process read from storage (`device.rs`), keeps a
//! histogram of latencies, and checks every answer: a found key's value, an
//! absent key's absence. `fio` measures the device's random 4 KiB reads at
//! queue depths 1 and 32 on the same file system in the same run, and the
//! table (`report.rs`) sets the engines and the device side by side.
//!
//! This file owns the modes, what a mode measured, and what the engines'
//! adapters (one file each) are given and implement: the records of a load
//! and the readers of the lookups.

#[cfg(bdb_linked)]
mod bdb_engine;
mod data;
pub(crate) mod device;
mod driver;
mod lamina_engine;
#[cfg(feature = "lmdb")]
mod lmdb_engine;
mod lookups;
#[cfg(feature = "redb")]
mod redb_engine;
mod report;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;

pub use driver::{run, ScaleReadsArgs};

use crate::progress::Progress;
use data::{DataSet, Stream, Visit};

/// How the lookups are issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One thread, one key per call.
    Single,
    /// `--threads` threads, one key per call, each thread with a reader of
    /// its own.
    Threads,
    /// One thread, `--batch` keys per call (lamina's `get_many`, RocksDB's
    /// `MultiGet`; a loop in one read transaction for the others).
    Batch,
}

/// The modes in the order they run.
pub const MODES: [Mode; 3] = [Mode::Single, Mode::Threads, Mode::Batch];

impl Mode {
    /// The mode's id in the lines a child prints and in the CSV.
    pub fn id(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Threads => "threads",
            Mode::Batch => "batch",
        }
    }

    /// The mode with id `id`.
    pub fn from_id(id: &str) -> Option<Mode> {
        MODES.into_iter().find(|m| m.id() == id)
    }
}

/// The streams of keys each mode runs with, in order.
pub const STREAMS: [Stream; 2] = [Stream::Found, Stream::Absent];

/// What one mode measured on one engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// How the lookups were issued.
    pub mode: Mode,
    /// Found or absent keys.
    pub stream: Stream,
    /// Keys looked up.
    pub lookups: u64,
    /// Seconds from the first lookup to the end of the last.
    pub secs: f64,
    /// Reads the device completed meanwhile (every process's), where the
    /// work directory's file system is on a block device.
    pub device_reads: Option<u64>,
    /// Bytes the process caused to be read from storage (`read_bytes` of
    /// `/proc/self/io`).
    pub read_bytes: Option<u64>,
    /// Median latency of a call (one key, or one batch), nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile of the same.
    pub p99_ns: u64,
    /// Answers that were wrong: a found key missing or with another value,
    /// an absent key found.
    pub wrong: u64,
}

/// The database of one engine, opened for the lookups (read-only where
/// the engine can open so). Shared by the threads of a mode.
pub trait Engine: Sync {
    /// A reader for one thread (its own read transaction where the engine
    /// has them), living as long as the mode runs.
    fn reader(&self) -> Result<Box<dyn Reader + '_>, String>;
}

/// One thread's way to look keys up.
pub trait Reader {
    /// Looks `key` up and passes its value (`None`: absent) to `seen`.
    fn get(&mut self, key: &[u8], seen: &mut dyn FnMut(Option<&[u8]>)) -> Result<(), String>;
    /// Looks `keys` up in one call where the engine has one (by default, a
    /// loop of [`Reader::get`]), passing each key's position in `keys` and
    /// its value to `seen`.
    fn get_many(
        &mut self,
        keys: &[&[u8]],
        seen: &mut dyn FnMut(usize, Option<&[u8]>),
    ) -> Result<(), String> {
        for (i, key) in keys.iter().enumerate() {
            self.get(key, &mut |v| seen(i, v))?;
        }
        Ok(())
    }
}

/// The records an engine loads, in key order, counted by the load's
/// progress.
pub struct Load<'a> {
    set: &'a DataSet,
    progress: &'a mut Progress,
}

impl Load<'_> {
    /// The bytes of keys and values at most (for an engine that sizes its
    /// file up front).
    pub fn max_bytes(&self) -> u64 {
        self.set.max_bytes()
    }

    /// Calls `f` with every record in key order, stopping at its first
    /// error.
    pub fn for_each(&mut self, f: &mut Visit<'_>) -> Result<(), String> {
        let progress = &mut *self.progress;
        self.set.for_each_sorted(&mut |k, v| {
            progress.add(1, (k.len() + v.len()) as u64);
            f(k, v)
        })
    }
}
