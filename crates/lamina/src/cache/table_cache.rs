//! The cache of open tables, bounded in number of tables.

use super::{BlockCache, RowCache};
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::fs::FileSystem;
use crate::manifest::FileMeta;
use crate::table::Table;
use quick_cache::sync::Cache;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The row cache gets this fraction (1/n) of the block cache's capacity.
const ROW_CACHE_SHARE: usize = 8;

/// Open tables of one database directory, keyed by file number, at most
/// `capacity` at once (so the process never runs out of file handles).
///
/// A table evicted while an iterator still uses it stays open until the
/// iterator drops its `Arc`. Thread-safe; concurrent misses on one table
/// open it once. Once [`TableCache::close`]d it holds nothing and opens
/// nothing.
pub struct TableCache {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    tables: Cache<u64, Arc<Table>>,
    block_cache: Arc<BlockCache>,
    /// The database identity tables must carry (0 outside a database:
    /// tables are then not checked against one).
    identity: u128,
    rows: RowCache,
    /// Set by [`TableCache::close`].
    closed: AtomicBool,
}

impl std::fmt::Debug for TableCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableCache")
            .field("dir", &self.dir)
            .field("open", &self.tables.len())
            .finish_non_exhaustive()
    }
}

impl TableCache {
    /// A cache of at most `capacity` (at least 1) open tables of `dir`,
    /// opened through `fs`, reading data blocks through `block_cache`.
    pub fn new(
        fs: Arc<dyn FileSystem>,
        dir: PathBuf,
        capacity: usize,
        block_cache: Arc<BlockCache>,
    ) -> TableCache {
        TableCache {
            fs,
            dir,
            tables: Cache::new(capacity.max(1)),
            rows: RowCache::new(block_cache.capacity_bytes() / ROW_CACHE_SHARE),
            block_cache,
            identity: 0,
            closed: AtomicBool::new(false),
        }
    }

    /// The same cache, checking that listed tables carry `identity` (the
    /// database's).
    pub fn with_identity(mut self, identity: u128) -> TableCache {
        self.identity = identity;
        self
    }

    /// The most tables the cache keeps open at once.
    pub fn capacity(&self) -> usize {
        usize::try_from(self.tables.capacity()).unwrap_or(usize::MAX)
    }

    /// The database identity tables are checked against.
    pub fn identity(&self) -> u128 {
        self.identity
    }

    /// The open table the manifest lists as `listed`, opening it on a miss
    /// and then checking it against `listed` and the database identity
    /// ([`Table::check_listed`]) before it serves a read.
    pub fn get_listed(&self, listed: &FileMeta) -> Result<Arc<Table>> {
        let got = self.tables.get_or_insert_with(&listed.number, || {
            self.refuse_closed()?;
            let t = self.open(listed.number)?;
            t.check_listed(listed, self.identity)?;
            Ok(t)
        });
        self.kept_unless_closed(listed.number, got)
    }

    /// The open table `file_number` (`dir/NNNNNN.sst`), opening it on a
    /// miss. A missing file is corruption ("listed in the manifest is
    /// missing"); a damaged one is whatever [`Table::open`] reports.
    pub fn get(&self, file_number: u64) -> Result<Arc<Table>> {
        let got = self.tables.get_or_insert_with(&file_number, || {
            self.refuse_closed()?;
            self.open(file_number)
        });
        self.kept_unless_closed(file_number, got)
    }

    /// `Error::Closed` once the cache is closed.
    fn refuse_closed(&self) -> Result<()> {
        match self.closed.load(Ordering::Acquire) {
            true => Err(Error::Closed),
            false => Ok(()),
        }
    }

    /// `got`, unless the cache was closed meanwhile: then the table
    /// `file_number` a racing miss put in after [`TableCache::close`]
    /// emptied the cache is taken out again, and the answer is
    /// `Error::Closed`. (The miss's insert and the close's clearing take the
    /// same shard lock: one of the two sees the other.)
    fn kept_unless_closed(&self, file_number: u64, got: Result<Arc<Table>>) -> Result<Arc<Table>> {
        if self.closed.load(Ordering::Acquire) {
            self.tables.remove(&file_number);
            return Err(Error::Closed);
        }
        got
    }

    /// Lets go of every open table (a reader holding one keeps it until it
    /// drops its `Arc`) and opens none from now on: `Error::Closed`. For
    /// the database's `close`.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.tables.clear();
    }

    /// The table `file_number` if it is open; never opens it.
    pub fn get_if_open(&self, file_number: u64) -> Option<Arc<Table>> {
        self.tables.get(&file_number)
    }

    fn open(&self, file_number: u64) -> Result<Arc<Table>> {
        let name = filename::file_name(FileKind::Table, file_number);
        let path = self.dir.join(&name);
        let file = self.fs.open(&path).map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                let reason = format!("table {name} listed in the manifest is missing");
                Error::corruption(&path, 0, reason)
            } else {
                Error::io(&path, e)
            }
        })?;
        // Lookups read single blocks; iterators ask for read-ahead
        // themselves (`table::readahead`).
        file.advise_random();
        let table = Table::open(file, path, file_number, Arc::clone(&self.block_cache))?;
        Ok(Arc::new(table))
    }

    /// Forgets table `file_number` (after it was deleted); users holding
    /// its `Arc` keep it open until they drop it.
    pub fn evict(&self, file_number: u64) {
        self.tables.remove(&file_number);
    }

    /// Values point lookups found in these tables (see [`RowCache`]).
    pub fn rows(&self) -> &RowCache {
        &self.rows
    }

    /// Bytes the open tables keep in memory for as long as they are open:
    /// their index and filter blocks and their block slots. Walks the open
    /// tables (at most `capacity` of them).
    pub fn pinned_bytes(&self) -> u64 {
        self.tables
            .iter()
            .map(|(_, t)| t.index_bytes() + t.filter_bytes() + t.slot_bytes())
            .sum()
    }

    /// The block cache tables read through.
    pub fn block_cache(&self) -> &Arc<BlockCache> {
        &self.block_cache
    }
}
