//! lamina: an embedded, ordered, crash-safe key-value store built on a
//! log-structured merge tree.
//!
//! ```
//! use lamina::{Batch, Db, Options};
//!
//! let dir = tempfile::tempdir()?;
//! let db = Db::open(dir.path().join("example.lamina"), Options::default())?;
//! db.put(b"apple", b"red")?;
//! db.put(b"banana", b"yellow")?;
//! assert_eq!(db.get(b"apple")?, Some(b"red".to_vec()));
//!
//! // Several writes, across keyspaces, applied atomically.
//! let colour = db.keyspace("by-colour")?;
//! let mut batch = Batch::new();
//! batch.put(b"cherry", b"red");
//! batch.put_in(&colour, b"red/cherry", b"");
//! db.write(batch)?;
//!
//! // Ordered iteration, forward and reverse.
//! let keys: Vec<Vec<u8>> = db.iter().map(|e| e.map(|(k, _)| k)).collect::<Result<_, _>>()?;
//! assert_eq!(keys, [b"apple".to_vec(), b"banana".to_vec(), b"cherry".to_vec()]);
//! let last = db.iter().rev().next().transpose()?;
//! assert_eq!(last.map(|(k, _)| k), Some(b"cherry".to_vec()));
//!
//! // Blind counters with the built-in `add` merge operator.
//! db.merge(b"visits", &1u64.to_le_bytes())?;
//! db.merge(b"visits", &2u64.to_le_bytes())?;
//! assert_eq!(db.get(b"visits")?, Some(3u64.to_le_bytes().to_vec()));
//! db.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
// Unsafe code: denied crate-wide and allowed only where an operating-system
// call has no safe wrapper or a core structure cannot be had safely at the
// speed it needs, each allow as narrow as the call (a module, or
// one statement), each `unsafe` block with a `SAFETY:` comment. `forbid`
// would make such an allow impossible; `deny` with this audited list keeps
// every exception in one place. The list (docs/design.md#unsafe-code):
// - `process`: registers a `pthread_atfork` child handler with libc (and,
//   in its tests, forks).
// - `budget`: asks libc for the machine's physical memory, and has it return
//   the allocator's free memory to the kernel (`malloc_trim`).
// - `cpus`: asks libc how many CPUs the machine has online.
// - `memtable::skiplist`: the memtable's insert-only concurrent skip list,
//   whose entries are laid out by hand and reached through atomic links.
// - `memtable::arena`: the skip list's entries' memory, carved from chunks
//   by one atomic add and freed with the list (its 2 MiB chunks advised
//   `MADV_HUGEPAGE`, libc).
// - `memtable::spare`: 2 MiB chunks made resident ahead of the arenas by a
//   helper thread (allocated, advised `MADV_HUGEPAGE`, a byte of each page
//   written), and taken back from arenas that are dropped.
// - `memtable::newest`: one statement, a position made again from the
//   entry address and list number its hash index keeps in a 16-byte slot.
// - `prefetch`: one statement, `_mm_prefetch`, a hint that never faults
//   (used by the skip list's search, the memtable's hash index and
//   `crc_fold`).
// - `crc_fold`: the CRC32C of long values by carry-less multiplication
//   (`target_feature` intrinsics, taken only where the CPU has them), with
//   the value's copy made in the same pass; of short ones by the `crc32`
//   instruction (likewise, reading only through the slice).
// - `fs::read_map`: maps a finished blob file or a table read-only
//   (memmap2).
// - `fs::real`: `sync_file_range` (libc; std has no wrapper) to start the
//   write-back of a blob file written at commit; `pread` into a buffer's
//   spare capacity, so that a block read is not zeroed first;
//   `posix_fadvise` (libc), read-ahead hints for table files.
// - `fs::mapping`: maps the space ahead of a WAL segment shared and
//   writable, so that an `Os` commit is a copy with no system call.
#![deny(unsafe_code)]

// What is public, and why.
//
// The public API is what an application needs: `Db` and its handles
// (`Keyspace`, `Snapshot`, `Iter`, `SeekCursor`, `Batch`, `Transaction`,
// `TxnIter`), `Options`,
// `Error`, the bulk paths (`TableWriter`, `BulkLoader`, `Db::ingest`), the
// limits on keys and values, and three modules:
// - `fs`: the `FileSystem` trait every file access goes through, with the
//   real file system, an in-memory one that can simulate a crash, and one
//   that injects faults — so an application can test its own crash handling;
// - `merge`: the merge operator trait and the built-in operators;
// - `inspect`: text dumps of single database files for tools (`lamina
//   inspect`), so tools need no access to the readers themselves.
//
// Everything else is the engine's own and crate-private. lamina's own
// integration tests and benches reach the internals through the
// `internals` feature (enabled for them by a dev-dependency of the crate on
// itself); it makes the modules below public but hidden from the
// documentation, and is no part of the API.
macro_rules! internal {
    ($(mod $name:ident;)*) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        mod $name;
    )*};
}

internal! {
    mod blob;
    mod cache;
    mod coding;
    mod crc_fold;
    mod compaction;
    mod filename;
    mod iter;
    mod key;
    mod manifest;
    mod memtable;
    mod table;
    mod wal;
}

pub mod binding;
pub mod fs;
pub mod inspect;
pub mod merge;
pub use recovery::salvage;

mod background;
mod batch;
#[allow(unsafe_code)]
mod budget;
mod commit;
#[allow(unsafe_code)]
mod cpus;
mod db;
mod error;
#[cfg(test)]
mod format_examples;
mod key_numbers;
mod options;
mod prefetch;
#[allow(unsafe_code)]
mod process;
mod read;
mod reader_pins;
mod recovery;
mod sampled_use;
mod table_writer;
mod tuning;
mod txn;

pub use batch::Batch;
pub use blob::{Kept, KeptBytes, LazyValue};
pub use budget::default_memory_budget;
pub use db::CheckReport;
pub use db::{BulkLoadOptions, BulkLoader, Db, IngestOptions, IngestedTable, Keyspace};
pub use db::{LevelStats, ReadStats, StallStats, Stats};
pub use error::{Error, Result};
pub use key::{MAX_KEY_LEN, MAX_VALUE_LEN};
pub use options::{Compression, Durability, Options};
pub use read::{Iter, SeekCursor, Snapshot};
pub use table_writer::{TableInfo, TableWriter, TableWriterOptions};
pub use txn::{Transaction, TxnIter};
