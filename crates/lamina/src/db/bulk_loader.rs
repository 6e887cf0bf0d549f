//! Loading unsorted key-value pairs without the WAL: sorted runs of bounded
//! memory, merged into tables, ingested at once.
//!
//! Pairs are buffered side by side in one buffer (no allocation per pair).
//! Runs that overlap nowhere (input given in order, or in ordered stretches
//! of distinct ranges) are ingested as they are, not merged and written
//! again; nor does the ingest read back the tables the loader wrote
//! (`Origin::BulkLoader`).

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

/// Bytes counted per buffered pair beyond its key and value: its [`Pair`].
const PAIR_OVERHEAD: usize = std::mem::size_of::<Pair>();

/// A buffered pair: its key at `at` in the loader's buffer, its value right
/// after it.
#[derive(Clone, Copy)]
struct Pair {
    at: usize,
    key_len: u32,
    value_len: u32,
}

impl Pair {
    fn key(self, data: &[u8]) -> &[u8] {
        data.get(self.at..self.at + self.key_len as usize)
            .unwrap_or_default()
    }

    fn value(self, data: &[u8]) -> &[u8] {
        let start = self.at + self.key_len as usize;
        data.get(start..start + self.value_len as usize)
            .unwrap_or_default()
    }
}

/// A sorted run written out: its tables, in key order (cut at
/// `table_size`), its first and last keys, and its place among the runs
/// (later runs win).
struct Run {
    tables: Vec<PathBuf>,
    first: Vec<u8>,
    last: Vec<u8>,
    written: usize,
    /// The data block size its tables were written with.
    block_size: usize,
}

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
    /// The buffered pairs' keys and values, side by side.
    data: Vec<u8>,
    /// The buffered pairs, in the order added (sorted before a run).
    pairs: Vec<Pair>,
    bytes: usize,
    /// Key and value bytes added in all, which the tables it writes will
    /// hold: with the database's, what their block size is chosen for.
    added: u64,
    runs: Vec<Run>,
    id: u64,
    files: u64,
}

impl BulkLoader {
    /// A loader into `db`.
    pub fn new(db: &Db, opts: BulkLoadOptions) -> BulkLoader {
        BulkLoader {
            db: db.clone(),
            opts,
            data: Vec::new(),
            pairs: Vec::new(),
            bytes: 0,
            added: 0,
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
        let need = self.data.len() + key.len() + value.len();
        if need > self.data.capacity() {
            // Room for a whole run at once (more only if the pair needs
            // it): growing by doubling copied the buffer at each step, and
            // pages reserved and not yet written cost no memory.
            let want = self.opts.memory_bytes.max(need);
            self.data.reserve_exact(want - self.data.len());
        }
        // Both fit in a u32: keys up to 64 KiB, values up to 256 MiB.
        self.pairs.push(Pair {
            at: self.data.len(),
            key_len: key.len() as u32,
            value_len: value.len() as u32,
        });
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
        self.bytes += key.len() + value.len() + PAIR_OVERHEAD;
        self.added += (key.len() + value.len()) as u64;
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

    /// The data block size of tables written now (as a bulk load's below
    /// level 0, with the bytes added so far).
    fn block_size_now(&self) -> usize {
        self.db.inner().block_size_choice(1, self.added).block_size
    }

    fn writer(&mut self, what: &str) -> Result<TableWriter> {
        let path = self.next_path(what);
        let inner = self.db.inner();
        TableWriter::create(
            path,
            TableWriterOptions {
                compression: inner.opts.compression,
                block_size: self.block_size_now(),
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
    fn sort_pairs(&mut self) {
        let mut seen = crate::tuning::DataShape::default();
        for p in self.pairs.iter().take(crate::tuning::SAMPLE) {
            // Internal keys: the tree key and its 8-byte trailer.
            seen.add(p.key_len as usize + 8, p.value_len as usize);
        }
        self.db.inner().background().observe_shape(&seen);
        let data = &self.data;
        // Stable (and one pass over pairs added in order): equal keys stay
        // in the order added; keep the last.
        self.pairs.sort_by(|a, b| a.key(data).cmp(b.key(data)));
        self.pairs.dedup_by(|later, kept| {
            let same = later.key(data) == kept.key(data);
            if same {
                std::mem::swap(later, kept);
            }
            same
        });
    }

    /// Writes the buffered pairs, sorted, into tables cut at `table_size`,
    /// and empties the buffer; returns the tables, with the first and last
    /// keys, or `None` if nothing is buffered.
    fn write_buffered(&mut self, what: &str) -> Result<Option<Run>> {
        if self.pairs.is_empty() {
            return Ok(None);
        }
        self.sort_pairs();
        let block_size = self.block_size_now();
        let data = std::mem::take(&mut self.data);
        let pairs = std::mem::take(&mut self.pairs);
        let key_at = |i: Option<&Pair>| i.map_or(Vec::new(), |p| p.key(&data).to_vec());
        let (first, last) = (key_at(pairs.first()), key_at(pairs.last()));
        let written = self.write_outputs(
            what,
            pairs.iter().map(|p| Ok((p.key(&data), p.value(&data)))),
        );
        // The buffer is kept for the next run, emptied.
        self.data = data;
        self.data.clear();
        self.pairs = pairs;
        self.pairs.clear();
        self.bytes = 0;
        Ok(Some(Run {
            tables: written?,
            first,
            last,
            written: 0,
            block_size,
        }))
    }

    /// Writes the buffered pairs as a sorted run.
    fn spill(&mut self) -> Result<()> {
        if let Some(mut run) = self.write_buffered("run")? {
            run.written = self.runs.len();
            self.runs.push(run);
        }
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

    /// Merges everything added into tables, not yet ingested; they are the
    /// caller's to remove from then on. Runs that overlap nowhere (in
    /// whatever order they came) are the tables as they are.
    fn write_tables(&mut self) -> Result<Vec<PathBuf>> {
        if self.runs.is_empty() {
            let run = self.write_buffered("table")?;
            return Ok(run.map(|r| r.tables).unwrap_or_default());
        }
        self.spill()?;
        // Runs that overlap nowhere, in key order, are the tables: no key
        // is in two, so no pair of one must win over another's.
        let mut runs = std::mem::take(&mut self.runs);
        runs.sort_by(|a, b| a.first.cmp(&b.first));
        if runs
            .windows(2)
            .all(|w| matches!(w, [a, b] if a.last < b.first))
        {
            self.runs = runs;
            return self.tables_of_runs();
        }
        // Merged in the order written: a later run's pair wins.
        runs.sort_by_key(|r| r.written);
        self.runs = runs;
        let merged = self.merge_runs(&self.runs)?;
        self.write_outputs("table", merged)
    }

    /// The tables of the runs, which overlap nowhere, in key order: as
    /// written, except those of a run written in blocks larger than a
    /// device page once the load has outgrown the block cache (it had not
    /// yet when the run was written), which are written again in pages:
    /// a point read that misses the cache of a database larger than it
    /// then reads one page, not a whole large block
    /// (docs/design.md#settings-chosen-from-the-data). They are at most
    /// the cache's room of bytes, written once.
    fn tables_of_runs(&mut self) -> Result<Vec<PathBuf>> {
        let now = self.block_size_now();
        if now == crate::tuning::DEVICE_BLOCK {
            for i in 0..self.runs.len() {
                let Some(run) = self.runs.get(i).filter(|r| r.block_size > now) else {
                    continue;
                };
                let merged = self.merge_runs(std::slice::from_ref(run))?;
                let tables = self.write_outputs("table", merged)?;
                if let Some(run) = self.runs.get_mut(i) {
                    run.block_size = now;
                    for p in std::mem::replace(&mut run.tables, tables) {
                        let _ = self.db.inner().fs.remove_file(&p);
                    }
                }
            }
        }
        Ok(std::mem::take(&mut self.runs)
            .into_iter()
            .flat_map(|r| r.tables)
            .collect())
    }

    /// Writes sorted, distinct pairs into tables cut at `table_size`; on an
    /// error, removes those it wrote.
    fn write_outputs<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        what: &str,
        pairs: impl Iterator<Item = Result<(K, V)>>,
    ) -> Result<Vec<PathBuf>> {
        let mut outputs: Vec<PathBuf> = Vec::new();
        let mut current: Option<TableWriter> = None;
        let mut bytes = 0u64;
        let result = (|| {
            for pair in pairs {
                let (k, v) = pair?;
                let (k, v) = (k.as_ref(), v.as_ref());
                let w = match current.as_mut() {
                    Some(w) => w,
                    None => current.insert(self.writer(what)?),
                };
                w.put(k, v)?;
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

    /// `runs` merged in key order; of equal keys, the latest run's pair.
    /// A run's tables follow each other: each is one source of the merge,
    /// after those of earlier runs.
    fn merge_runs(&self, runs: &[Run]) -> Result<RunMerge> {
        let inner = self.db.inner();
        let mut iters = Vec::new();
        for path in runs.iter().flat_map(|r| &r.tables) {
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
    /// (smallest key first, then the latest source first).
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
        for p in self.runs.iter().flat_map(|r| &r.tables) {
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
