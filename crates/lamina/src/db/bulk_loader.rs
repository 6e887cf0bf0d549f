//! Loading unsorted key-value pairs without the WAL: sorted runs of bounded
//! memory, merged into tables, ingested at once.

use crate::db::{Db, IngestOptions, IngestOrigin, IngestedTable};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key;
use crate::table::{Table, TableIter};
use crate::table_writer::{TableWriter, TableWriterOptions};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

/// Bytes counted per buffered pair beyond its key and value.
const PAIR_OVERHEAD: usize = 48;

/// How a [`BulkLoader`] works.
#[derive(Debug, Clone)]
pub struct BulkLoadOptions {
    /// Bytes of pairs held in memory before they are sorted and written out
    /// as a run. Default: 64 MiB.
    pub memory_bytes: usize,
    /// Size at which output tables are cut. Default: 64 MiB.
    pub table_size: u64,
    /// The keyspace to load into, by name (created if missing); `None`: the
    /// default keyspace.
    pub keyspace: Option<String>,
}

impl Default for BulkLoadOptions {
    fn default() -> Self {
        BulkLoadOptions {
            memory_bytes: 64 << 20,
            table_size: 64 << 20,
            keyspace: None,
        }
    }
}

/// Distinguishes the temporary files of loaders of one process.
static NEXT_LOADER: AtomicU64 = AtomicU64::new(1);

/// Loads pairs given in any order into a database, bypassing the WAL and
/// the memtable: pairs are sorted in memory in runs of at most
/// `memory_bytes`, runs are written to temporary files in the database
/// directory (`*.tmp`, removed on open if a crash leaves them), and
/// [`finish`](BulkLoader::finish) merges them into tables and ingests them
/// in one step. Of several pairs with one key, the last added wins.
///
/// Nothing is visible before `finish` returns; after it returns, every pair
/// is visible and durable. Dropping a loader unfinished removes its files.
pub struct BulkLoader {
    db: Db,
    opts: BulkLoadOptions,
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    bytes: usize,
    runs: Vec<PathBuf>,
    id: u64,
    files: u64,
}

impl BulkLoader {
    /// A loader into `db`.
    pub fn new(db: &Db, opts: BulkLoadOptions) -> BulkLoader {
        BulkLoader {
            db: db.clone(),
            opts,
            pairs: Vec::new(),
            bytes: 0,
            runs: Vec::new(),
            id: NEXT_LOADER.fetch_add(1, AtomicOrdering::Relaxed),
            files: 0,
        }
    }

    /// Adds a pair. `InvalidArgument` naming the key if it or the value is
    /// too large; an error writing a run.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if key.len() > key::MAX_KEY_LEN || value.len() > key::MAX_VALUE_LEN {
            return Err(Error::InvalidArgument(format!(
                "key {} of {} bytes with a value of {} bytes is too large",
                crate::table_writer::show_key(key),
                key.len(),
                value.len()
            )));
        }
        self.bytes += key.len() + value.len() + PAIR_OVERHEAD;
        self.pairs.push((key.to_vec(), value.to_vec()));
        if self.bytes >= self.opts.memory_bytes {
            self.spill()?;
        }
        Ok(())
    }

    /// Pairs added so far.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True before the first pair is added (or after every pair was spilled).
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty() && self.runs.is_empty()
    }

    fn next_path(&mut self, what: &str) -> PathBuf {
        self.files += 1;
        crate::filename::temp_path(
            self.db.path(),
            &format!(
                "bulk-{}-{}-{what}{:06}",
                std::process::id(),
                self.id,
                self.files
            ),
        )
    }

    fn writer(&mut self, what: &str) -> Result<TableWriter> {
        let path = self.next_path(what);
        let inner = self.db.inner();
        TableWriter::create(
            path,
            TableWriterOptions {
                compression: inner.opts.compression,
                block_size: inner.block_size_choice().block_size,
                bloom_bits_per_key: inner.opts.bloom_bits_per_key,
                keyspace: self.opts.keyspace.clone(),
                fs: Arc::clone(&inner.fs),
            },
        )
    }

    /// Sorts the buffered pairs (the last of equal keys wins), after adding
    /// the first of them to the shape the block size is chosen from, as a
    /// flush does: the tables a bulk load writes into a new database are cut
    /// into blocks chosen from its own data, not the size used before any
    /// data was seen.
    fn sorted(&mut self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut seen = crate::tuning::DataShape::default();
        for (k, v) in self.pairs.iter().take(crate::tuning::SAMPLE) {
            // Internal keys: the tree key and its 8-byte trailer.
            seen.add(k.len() + 8, v.len());
        }
        self.db.inner().background().observe_shape(&seen);
        let mut pairs = std::mem::take(&mut self.pairs);
        self.bytes = 0;
        // Stable: equal keys stay in the order added; keep the last.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(pairs.len());
        for p in pairs {
            match out.last_mut() {
                Some(last) if last.0 == p.0 => *last = p,
                _ => out.push(p),
            }
        }
        out
    }

    /// Writes the buffered pairs as a sorted run.
    fn spill(&mut self) -> Result<()> {
        if self.pairs.is_empty() {
            return Ok(());
        }
        let pairs = self.sorted();
        let mut w = self.writer("run")?;
        for (k, v) in &pairs {
            w.put(k, v)?;
        }
        self.runs.push(w.finish()?.path);
        Ok(())
    }

    /// Sorts the pairs buffered so far and writes them out as a run,
    /// freeing their memory (as happens by itself at `memory_bytes`). For
    /// a caller feeding several loaders at once that bounds their memory
    /// together.
    pub fn write_run(&mut self) -> Result<()> {
        self.spill()
    }

    /// Merges everything added into tables and ingests them atomically.
    /// Returns the ingested tables (none if nothing was added).
    pub fn finish(self) -> Result<Vec<IngestedTable>> {
        BulkLoader::finish_all(vec![self])
    }

    /// Finishes several loaders into one database (one per keyspace, say)
    /// with one atomic ingest: after `Ok`, every pair of every loader is
    /// visible and durable; after an error, none is. Of loaders into the
    /// same keyspace, a later one's pair of a key wins.
    ///
    /// `InvalidArgument` if the loaders do not all load into one database.
    pub fn finish_all(loaders: Vec<BulkLoader>) -> Result<Vec<IngestedTable>> {
        let Some(db) = loaders.first().map(|l| l.db.clone()) else {
            return Ok(Vec::new());
        };
        if loaders.iter().any(|l| l.db.path() != db.path()) {
            return Err(Error::InvalidArgument(
                "bulk loaders finished together must load into one database".into(),
            ));
        }
        let mut outputs: Vec<PathBuf> = Vec::new();
        let written = (|| {
            for mut loader in loaders {
                outputs.extend(loader.write_tables()?);
            }
            Ok(())
        })();
        let done = written.and_then(|()| {
            if outputs.is_empty() {
                Ok(Vec::new())
            } else {
                // Its own temporary files, in the database directory.
                db.ingest_from(
                    &outputs,
                    IngestOptions { move_files: true },
                    IngestOrigin::BulkLoader,
                )
            }
        });
        if done.is_err() {
            for p in &outputs {
                let _ = db.inner().fs.remove_file(p);
            }
        }
        done
    }

    /// Merges everything added into tables, not yet ingested.
    fn write_tables(&mut self) -> Result<Vec<PathBuf>> {
        if self.runs.is_empty() {
            let pairs = self.sorted();
            self.write_outputs(pairs.into_iter().map(Ok))
        } else {
            self.spill()?;
            let merged = self.merge_runs()?;
            self.write_outputs(merged)
        }
    }

    /// Writes sorted, distinct pairs into tables cut at `table_size`.
    fn write_outputs(
        &mut self,
        pairs: impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>>,
    ) -> Result<Vec<PathBuf>> {
        let mut outputs: Vec<PathBuf> = Vec::new();
        let mut current: Option<TableWriter> = None;
        let mut bytes = 0u64;
        let result = (|| {
            for pair in pairs {
                let (k, v) = pair?;
                let w = match current.as_mut() {
                    Some(w) => w,
                    None => current.insert(self.writer("table")?),
                };
                w.put(&k, &v)?;
                bytes += (k.len() + v.len()) as u64;
                if bytes >= self.opts.table_size {
                    if let Some(w) = current.take() {
                        outputs.push(w.finish()?.path);
                    }
                    bytes = 0;
                }
            }
            if let Some(w) = current.take() {
                outputs.push(w.finish()?.path);
            }
            Ok(())
        })();
        if let Err(e) = result {
            for p in &outputs {
                let _ = self.db.inner().fs.remove_file(p);
            }
            return Err(e);
        }
        Ok(outputs)
    }

    /// The runs merged in key order; of equal keys, the latest run's pair.
    fn merge_runs(&self) -> Result<RunMerge> {
        let inner = self.db.inner();
        let mut iters = Vec::new();
        for path in &self.runs {
            let file = inner.fs.open(path).map_err(|e| Error::io(path, e))?;
            let table = Table::open(
                file,
                path.clone(),
                0,
                Arc::new(crate::cache::BlockCache::new(0)),
            )?;
            let mut it = Arc::new(table).iter_uncached();
            it.seek_to_first();
            iters.push(it);
        }
        let mut m = RunMerge {
            iters,
            heap: BinaryHeap::new(),
        };
        for i in 0..m.iters.len() {
            m.push(i)?;
        }
        Ok(m)
    }
}

/// A k-way merge of sorted runs.
struct RunMerge {
    iters: Vec<TableIter>,
    /// (smallest key first, then the latest run first).
    heap: BinaryHeap<(Reverse<Vec<u8>>, usize)>,
}

impl RunMerge {
    fn push(&mut self, i: usize) -> Result<()> {
        let Some(it) = self.iters.get(i) else {
            return Ok(());
        };
        if it.valid() {
            let k = key::parse(it.key()).map_or(&[][..], |p| p.user_key());
            self.heap.push((Reverse(k.to_vec()), i));
            Ok(())
        } else {
            it.status()
        }
    }
}

impl Iterator for RunMerge {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let (Reverse(k), i) = self.heap.pop()?;
        let value = self.iters.get(i).map(|it| it.value().to_vec())?;
        let mut advance = vec![i];
        while let Some((Reverse(other), j)) = self.heap.peek() {
            if other.cmp(&k) != Ordering::Equal {
                break;
            }
            advance.push(*j);
            self.heap.pop();
        }
        for j in advance {
            if let Some(it) = self.iters.get_mut(j) {
                it.next();
            }
            if let Err(e) = self.push(j) {
                return Some(Err(e));
            }
        }
        Some(Ok((k, value)))
    }
}

impl Drop for BulkLoader {
    fn drop(&mut self) {
        for p in &self.runs {
            let _ = self.db.inner().fs.remove_file(p);
        }
    }
}

impl std::fmt::Debug for BulkLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkLoader")
            .field("path", &self.db.path())
            .field("buffered", &self.pairs.len())
            .field("runs", &self.runs.len())
            .finish_non_exhaustive()
    }
}
