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

mod batch;
pub mod blob;
mod bulk_loader;
pub mod cache;
mod check;
pub mod coding;
pub mod compaction;
mod db;
mod error;
pub mod fs;
pub mod iter;
pub mod key;
mod keyspace;
pub mod manifest;
pub mod memtable;
pub mod merge;
mod options;
mod process;
mod snapshot;
mod stats;
pub mod table;
mod table_writer;
pub mod wal;

pub use batch::Batch;
pub use blob::LazyValue;
pub use bulk_loader::{BulkLoadOptions, BulkLoader};
pub use check::CheckReport;
pub use db::{Cached, Db, IngestOptions, IngestedTable, Iter};
pub use error::{Error, Result};
pub use iter::SeekCursor;
pub use keyspace::Keyspace;
pub use options::{Compression, Durability, Options};
pub use snapshot::Snapshot;
pub use stats::{LevelStats, Stats};
pub use table_writer::{TableInfo, TableWriter, TableWriterOptions};
