//! The database handle and the state it shares with its background threads.

mod backup;
mod bulk_loader;
mod check;
mod ingest;
mod keyspace;
mod memory;
mod stats;

use crate::batch::Batch;
use crate::cache::TableCache;
use crate::error::{Error, Result};
use crate::fs::{FileLock, FileSystem};
use crate::key::{KeyspaceId, SeqNo};

use crate::manifest::{FileMeta, Version, VersionSet};
use crate::memtable::Memtable;
use crate::options::{Durability, Options};
use crate::read::{Cached, Iter, Snapshot};
use crate::wal::LogWriter;
pub use bulk_loader::{BulkLoadOptions, BulkLoader};
pub use check::CheckReport;
pub(crate) use ingest::Origin as IngestOrigin;
pub use ingest::{IngestOptions, IngestedTable};
pub use keyspace::{Keyspace, MAX_KEYSPACE_NAME};
use parking_lot::{Condvar, Mutex, RwLock};
pub(crate) use stats::{add_under_wal_lock, cause_index, Counters};
pub use stats::{LevelStats, StallStats, Stats};
use std::collections::BTreeMap;
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::commit::CommitQueue;

/// An open database: a cheap handle that can be cloned and shared between
/// threads. Every clone refers to the same database; the database closes when
/// `close` is called or the last handle (including iterators, snapshots and
/// keyspace handles, which hold one) is dropped.
///
/// Writes are durable as their [`Durability`] says; `sync`, `flush` and
/// `close` make everything written before them durable.
#[derive(Clone)]
pub struct Db {
    pub(crate) handle: Arc<Handle>,
}

/// Closes the database when the last user-facing reference goes away.
pub(crate) struct Handle {
    pub(crate) inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        let _ = self.inner.close();
    }
}

/// Mutable tree state guarded by `Inner::state`.
pub(crate) struct State {
    /// The memtable receiving writes.
    pub mem: Arc<Memtable>,
    /// Full memtables waiting to be flushed, oldest first.
    pub imm: Vec<Arc<Memtable>>,
    /// The current version.
    pub version: Arc<Version>,
    /// Tables no longer in the current version, deleted once no reader pins them.
    pub obsolete: Vec<Arc<FileMeta>>,
    /// Set when the background threads must stop.
    pub shutting_down: bool,
    /// Manual compactions waiting or running (the background thread yields to them).
    pub manual_compactions: usize,
    /// Set while a flush is writing a table.
    pub flushing: bool,
    /// Blob files no longer in the current version, removed once no reader pins them.
    pub obsolete_blobs: Vec<Arc<crate::blob::BlobMeta>>,
}

/// Takes from `list` the files that nothing but the list holds any more (no
/// pinned version lists them), leaving the others.
pub(crate) fn take_unpinned<T>(list: &mut Vec<Arc<T>>) -> Vec<Arc<T>> {
    let (free, keep) = std::mem::take(list)
        .into_iter()
        .partition(|f| Arc::strong_count(f) == 1);
    *list = keep;
    free
}

/// A file that has left the current version, numbered.
pub(crate) trait Numbered {
    fn number(&self) -> u64;
}

impl Numbered for FileMeta {
    fn number(&self) -> u64 {
        self.number
    }
}

impl Numbered for crate::blob::BlobMeta {
    fn number(&self) -> u64 {
        self.number
    }
}

/// Everything shared by the handles and the background threads.
///
/// Its methods live beside the path they serve: `commit` (writes, memtable
/// rotation, commit leadership), `point` and `read` (lookups, iterators, the
/// published read view), `flush`, `compact`, `blobs` (blob files written and
/// collected), `ingest`, `open` (recovery), `check`, `backup` and `stats`;
/// the handle's own state (open, poisoned, closing) is below.
///
/// # Lock order
///
/// A thread that holds several of these locks takes them in this order, and
/// never the other way round (docs/design.md#concurrency):
///
/// 1. the commit queue (`commit`) and commit leadership;
/// 2. `wal`;
/// 3. `commit_blob` (a writer takes it under the commit queue and releases
///    it before taking `wal`);
/// 4. `versions`;
/// 5. `state`;
/// 6. the leaf locks `keyspaces`, `snapshots`, `poisoned`, `threads`,
///    `shape` and `lock`, held briefly, with none of the locks above taken
///    under them.
///
/// `compaction_lock` is taken before `versions` and `state`; a thread that
/// holds commit leadership only `try_lock`s it, so the two never wait on each
/// other. `pinned` is lock-free. The pipeline's own locks (`pipeline`) are
/// leaves too: a syncer releases them before it takes `wal`.
pub(crate) struct Inner {
    /// The database directory.
    pub path: PathBuf,
    /// Every file access goes through it.
    pub fs: Arc<dyn FileSystem>,
    /// The options the database was opened with, validated.
    pub opts: Options,
    /// Open tables, by file number.
    pub tables: Arc<TableCache>,
    /// Open blob files, by file number.
    pub blobs: Arc<crate::blob::BlobStore>,
    /// The memtables and the current version, as writers and background
    /// threads change them.
    pub state: Mutex<State>,
    /// The memtables and version of `state`, published for lock-free reads.
    pub pinned: arc_swap::ArcSwapOption<crate::read::Pinned>,
    /// Signalled when a flush or compaction finishes or work arrives.
    pub bg_cv: Condvar,
    /// The manifest and counters.
    pub versions: Mutex<VersionSet>,
    /// Held by whoever runs a compaction (and by backup and ingest, so that
    /// none runs meanwhile).
    pub compaction_lock: Mutex<()>,
    /// Writers waiting to commit; the first is the leader.
    pub commit: Mutex<CommitQueue>,
    /// Signalled when commit leadership ends.
    pub commit_cv: Condvar,
    /// Tickets, the durability watermark and in-order publication of the
    /// commit pipeline (`db/pipeline.rs`).
    pub pipeline: crate::commit::Pipeline,
    /// The WAL segment being written; only the commit leader, `sync` and rotation touch it.
    pub wal: Mutex<Option<LogWriter>>,
    /// Retired WAL segments (below the log number) kept to be reused.
    pub reusable_wals: Mutex<Vec<u64>>,
    /// The syncs memtable rotations owe, paid later (`db/rotation.rs`).
    pub debts: crate::commit::Debts,
    /// The blob file of the active memtable, holding the values its commits
    /// separated (`db/commit_blobs.rs`); created by the first one. Taken
    /// under the commit lock, never while waiting for the WAL lock.
    pub commit_blob: Mutex<Option<crate::blob::BlobWriter>>,
    /// Ranges of WAL segments and of blob files written at commit whose
    /// write-back the flush thread starts (a leaf lock).
    pub writeback: Mutex<Vec<crate::fs::Writeback>>,
    /// Highest seqno whose write is visible to readers.
    pub visible_seqno: AtomicU64,
    /// Bumped, under the state lock, whenever what decides a write's room
    /// changes (the memtables, the version, the compaction debt, shutting
    /// down): a [`room::Room`] kept by the commit queue is good while it
    /// is unchanged.
    pub state_epoch: AtomicU64,
    /// Live snapshots: seqno -> count.
    pub snapshots: Mutex<BTreeMap<SeqNo, usize>>,
    /// Named keyspaces: name -> id.
    pub keyspaces: RwLock<BTreeMap<String, KeyspaceId>>,
    /// Set by `close`; every later call fails with `Error::Closed`.
    pub closed: AtomicBool,
    /// Why writes are refused, after a failure made them unsafe.
    pub poisoned: Mutex<Option<String>>,
    /// Set once `poisoned` holds a reason: the writers' check reads this
    /// flag, not the lock.
    pub poison_set: AtomicBool,
    /// Running counters behind `Stats`.
    pub counters: Counters,
    /// What the entries flushed since open look like: the block size is
    /// chosen from it (`crate::tuning`).
    pub shape: Mutex<crate::tuning::DataShape>,
    /// Level 1's target and the growth factor between levels, chosen at open
    /// from the memtable size unless the options set them (`crate::tuning`).
    pub levels: crate::tuning::LevelChoice,
    /// Lifetime byte counters as of open; `counters` add to them.
    pub lifetime_base: crate::manifest::Lifetime,
    /// The flush and compaction threads, joined by `close`.
    pub threads: Mutex<Vec<JoinHandle<()>>>,
    /// The `LOCK` file's lock, held by a read-write handle until `close`.
    pub lock: Mutex<Option<Box<dyn FileLock>>>,
    /// A read-only handle's reader file and the views it pins (`db/reader.rs`);
    /// `None` for a read-write handle, or where the directory takes no reader file.
    pub reader: Mutex<Option<crate::recovery::ReaderState>>,
    /// The process generation the handle was opened in (`crate::process`).
    pub process: u64,
    /// This database's claim on the huge chunks kept between memtables
    /// (`memtable::spare`), charged with its memtables; `None` when its
    /// memtables take none. Declared after `state`, so that it is given up
    /// after the memtables have handed their chunks back.
    pub spare_chunks: Option<crate::memtable::SpareChunks>,
}

impl Inner {
    /// Fails if the handle is closed, poisoned or read-only.
    pub fn check_writable(&self) -> Result<()> {
        self.check_open()?;
        if self.opts.read_only {
            return Err(Error::ReadOnly);
        }
        self.check_unpoisoned()
    }

    /// Fails once the database is poisoned.
    pub fn check_unpoisoned(&self) -> Result<()> {
        if !self.poison_set.load(Ordering::Acquire) {
            return Ok(());
        }
        match self.poisoned.lock().as_ref() {
            Some(p) => Err(Error::Poisoned(p.clone())),
            None => Ok(()),
        }
    }

    /// Fails if the handle is closed, or used in a process forked after it
    /// was opened.
    pub fn check_open(&self) -> Result<()> {
        if !crate::process::is_current(self.process) {
            return Err(Error::WrongProcess);
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        Ok(())
    }

    /// Syncs the database's directory: the files created, renamed or
    /// removed in it so far are durable.
    pub fn sync_dir(&self) -> Result<()> {
        self.fs
            .sync_dir(&self.path)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Records a failure that makes further writes unsafe.
    pub fn poison(&self, e: &Error) {
        let mut p = self.poisoned.lock();
        if p.is_none() {
            *p = Some(e.to_string());
        }
        self.poison_set.store(true, Ordering::Release);
        drop(p);
        self.bg_cv.notify_all();
    }

    /// Of `doomed`, the files no read-only handle pins (docs/design.md#readers-beside-a-writer);
    /// those it pins go back to the list `list` picks out of the state, to be
    /// removed by a later round.
    pub(crate) fn keep_reader_pinned<T: Numbered>(
        &self,
        doomed: Vec<Arc<T>>,
        list: impl FnOnce(&mut State) -> &mut Vec<Arc<T>>,
    ) -> Vec<Arc<T>> {
        if doomed.is_empty() {
            return doomed;
        }
        let pins = crate::reader_pins::Pins::read(self.fs.as_ref(), &self.path);
        let (kept, free): (Vec<_>, Vec<_>) =
            doomed.into_iter().partition(|f| pins.holds(f.number()));
        if !kept.is_empty() {
            list(&mut self.state.lock()).extend(kept);
        }
        free
    }

    /// Lifetime byte counters now: those recorded at open plus this handle's.
    pub fn lifetime_now(&self) -> crate::manifest::Lifetime {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let b = self.lifetime_base;
        crate::manifest::Lifetime {
            user_bytes: b.user_bytes + get(&c.user_bytes_written),
            wal_bytes: b.wal_bytes + get(&c.wal_bytes_written),
            flush_bytes: b.flush_bytes + get(&c.flush_bytes_written),
            compaction_read_bytes: b.compaction_read_bytes + get(&c.compaction_bytes_read),
            compaction_written_bytes: b.compaction_written_bytes + get(&c.compaction_bytes_written),
        }
    }

    /// Live snapshot seqnos, ascending.
    pub fn snapshot_list(&self) -> Vec<SeqNo> {
        self.snapshots.lock().keys().copied().collect()
    }

    /// Whether `id` names a live keyspace.
    #[inline]
    pub fn keyspace_live(&self, id: KeyspaceId) -> bool {
        id == 0 || self.keyspaces.read().values().any(|&v| v == id)
    }

    /// Makes every write so far durable: the WAL is flushed and synced.
    pub fn sync_wal(&self) -> Result<()> {
        let mut wal = self.wal_paid_for()?;
        if let Some(w) = wal.as_mut() {
            let synced = self
                .sync_commit_blob()
                .and_then(|mark| crate::commit::hand_mark(w, mark))
                .and_then(|()| w.sync());
            if let Err(e) = synced {
                self.poison(&e);
                return Err(e);
            }
            self.counters.wal_syncs.fetch_add(1, Ordering::Relaxed);
            self.pipeline
                .synced_to(self.pipeline.written(), &self.visible_seqno);
        }
        Ok(())
    }

    /// Stops the background threads and makes everything durable. Idempotent.
    /// In a process forked after the open it does nothing (the threads are
    /// not there, and the files are the parent's) and returns `WrongProcess`.
    pub fn close(&self) -> Result<()> {
        if !crate::process::is_current(self.process) {
            return Err(Error::WrongProcess);
        }
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let synced = if self.opts.read_only {
            Ok(())
        } else {
            self.sync_wal()
        };
        {
            let mut st = self.state.lock();
            st.shutting_down = true;
            self.state_epoch.fetch_add(1, Ordering::AcqRel);
        }
        self.bg_cv.notify_all();
        self.commit_cv.notify_all();
        let threads: Vec<_> = std::mem::take(&mut *self.threads.lock());
        let me = std::thread::current().id();
        for t in threads {
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
        self.delete_obsolete_files();
        // Segments kept for reuse save work only while the database is open;
        // a closed database keeps none on disk.
        if !self.opts.read_only {
            self.remove_reusable_wals();
        }
        // A commit group racing with close may have appended after the sync
        // above (and rotated); make it durable too before the segment is let
        // go: its blob file's values first, as `sync_wal` does.
        let last = match self.wal_paid_for().map(|mut wal| wal.take()) {
            Ok(Some(mut w)) if self.poisoned.lock().is_none() => self
                .sync_commit_blob()
                .and_then(|mark| crate::commit::hand_mark(&mut w, mark))
                .and_then(|()| self.close_wal_segment(&mut w)),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        self.let_go_of_files();
        *self.lock.lock() = None;
        *self.reader.lock() = None;
        synced.and(last)
    }

    /// Closes every file the handle keeps open and unmaps every mapping, for
    /// `close` (after the threads are joined and the WAL is closed): clones
    /// of a closed `Db` may live on, in Rust or as a Python object, and
    /// must not keep descriptors, nor files removed since with their space.
    /// The blob file written at commit (synced by `close`; recovery seals
    /// it as it seals one a crash left open), the manifest writer, the
    /// published view's table handles, the open tables and the open, mapped
    /// blob files. Each is refused from then on with `Error::Closed`, so
    /// that a call that raced past `check_open` opens nothing again.
    fn let_go_of_files(&self) {
        drop(self.commit_blob.lock().take());
        self.versions.lock().close();
        self.pinned.store(None);
        self.tables.close();
        self.blobs.close();
    }
}

/// Runs `f` on an empty batch kept by the thread, so that a single put or
/// delete reuses its buffer instead of allocating one per call (a fresh
/// batch if the thread's is in use, as when `f` reenters).
fn with_one_op_batch<T>(f: impl FnOnce(&mut Batch) -> T) -> T {
    thread_local! {
        static ONE_OP: std::cell::RefCell<Batch> = std::cell::RefCell::new(Batch::new());
    }
    ONE_OP.with(|cell| match cell.try_borrow_mut() {
        Ok(mut b) => {
            b.clear();
            let out = f(&mut b);
            // A large value's buffer is not kept for the thread's whole life.
            if b.encoded_len() > 64 << 10 {
                *b = Batch::new();
            }
            out
        }
        Err(_) => f(&mut Batch::new()),
    })
}

impl Db {
    /// Opens (or creates, as `options` say) the database in directory `path`.
    ///
    /// Recovers every write whose durability had been reached before a crash.
    /// Errors: [`Error::Locked`] if another read-write handle has it open,
    /// [`Error::NotADatabase`] if `path` is a file or a directory that holds
    /// something else, [`Error::Corruption`] if its files are damaged beyond a
    /// torn WAL tail.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let inner = crate::recovery::open(path.as_ref(), options)?;
        inner.publish(&inner.state.lock());
        Ok(Db {
            handle: Arc::new(Handle { inner }),
        })
    }

    /// Catches a read-only handle up with the database's writer (in another
    /// process or this one): reads that start after it returns see every
    /// write the writer had made visible when it began. Snapshots and
    /// iterators taken before keep their view, and its files stay on disk
    /// while they live. On a read-write handle it does nothing.
    ///
    /// A read-only handle opened beside a live writer never reports what the
    /// writer is in the middle of writing as damage: its view ends before it
    /// (docs/design.md#readers-beside-a-writer).
    pub fn refresh(&self) -> Result<()> {
        self.inner().refresh()
    }

    /// Removes the database at `path`: its files, then the directory if empty.
    /// Fails with [`Error::NotADatabase`] if `path` does not hold one, and with
    /// [`Error::Locked`] if it is open.
    pub fn destroy(path: impl AsRef<Path>, options: &Options) -> Result<()> {
        crate::recovery::destroy(path.as_ref(), options)
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.handle.inner
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner().path
    }

    /// The value of `key` in the default keyspace.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner().get(0, key, None)
    }

    /// The value of `key` in the default keyspace, not yet read if it is in a
    /// blob file: [`LazyValue::read_into`](crate::LazyValue::read_into) copies
    /// it once, straight into the caller's buffer.
    pub fn get_lazy(&self, key: &[u8]) -> Result<Option<crate::LazyValue>> {
        self.inner().get_value(0, key, None)
    }

    /// Calls `f` with the value of `key` in the default keyspace, borrowed
    /// from the memtable or the block cache (valid only during the call), and
    /// returns what `f` returns; `None` if the key has no value. Nothing is
    /// copied unless `f` copies it.
    pub fn get_with<R>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        self.inner().get_with(0, key, None, f)
    }

    /// Like [`Db::get_with`], but never waits for the disk: answered from
    /// the memtables, open tables and cached blocks, or
    /// [`Cached::NeedsIo`] (then `f` was not called). For callers that
    /// must not block while holding something, such as an interpreter lock.
    pub fn try_get_with<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Cached<Option<R>>> {
        self.inner().try_get_with(0, key, f)
    }

    /// Like [`Db::try_get_with`], but a value in a blob file goes to `blob`
    /// unread, as a [`crate::LazyValue`] (which holds its file open), when
    /// reading it needs no file opened: it is kept in memory (read more
    /// than once; its [`kept`](crate::LazyValue::kept) is the object
    /// holding it, the caller's own if it offered one with
    /// [`keep`](crate::LazyValue::keep)), or its file is open. The caller
    /// then reads it, perhaps after letting go of what it must not hold
    /// while waiting for the disk, without looking the key up again.
    pub fn try_get_with_lazy<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
        blob: impl FnOnce(crate::LazyValue) -> R,
    ) -> Result<Cached<Option<R>>> {
        self.inner().try_get_with_lazy(0, key, None, f, blob)
    }

    /// Like [`Db::contains_key`], but never waits for the disk (see
    /// [`Db::try_get_with`]).
    pub fn try_contains_key(&self, key: &[u8]) -> Result<Cached<bool>> {
        self.inner().try_contains(0, key, None)
    }

    /// Whether `key` has a value in the default keyspace. It stops at the
    /// key's newest entry: a key whose newest entries are merge operands
    /// exists, and the operands are not applied.
    pub fn contains_key(&self, key: &[u8]) -> Result<bool> {
        self.inner().contains(0, key, None)
    }

    /// Sets `key` to `value` in the default keyspace.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_in_keyspace(0, key, value)
    }

    /// Sets `key` to `value` in keyspace `ks` with the default durability: a
    /// value large enough for a blob file goes there straight from `value`.
    pub(crate) fn put_in_keyspace(&self, ks: KeyspaceId, key: &[u8], value: &[u8]) -> Result<()> {
        let inner = self.inner();
        if value.len() >= inner.blob_threshold() {
            return inner.write_large_put(ks, key, value, inner.opts.durability);
        }
        self.write_one_op(|b| b.push_put(ks, key, value))
    }

    /// Deletes `key` from the default keyspace (a missing key is not an error).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.write_one_op(|b| b.delete(key))
    }

    /// Sets `key` to `value` in the default keyspace if the commit needs no
    /// waiting; `Ok(false)`, nothing written, if it would (see
    /// [`Keyspace::try_put`]).
    pub fn try_put(&self, key: &[u8], value: &[u8]) -> Result<bool> {
        self.try_put_in_keyspace(0, key, value)
    }

    /// [`Db::try_put`] in keyspace `ks`. A value large enough for a blob
    /// file is refused before it is copied anywhere: its commit writes it
    /// to the file, which `put` does straight from `value`.
    pub(crate) fn try_put_in_keyspace(
        &self,
        ks: KeyspaceId,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool> {
        if value.len() >= self.inner().blob_threshold() {
            return Ok(false);
        }
        self.try_write_one_op(|b| b.push_put(ks, key, value))
    }

    /// Deletes `key` from the default keyspace if the commit needs no
    /// waiting; `Ok(false)`, nothing written, if it would (see
    /// [`Keyspace::try_put`]).
    pub fn try_delete(&self, key: &[u8]) -> Result<bool> {
        self.try_write_one_op(|b| b.delete(key))
    }

    /// Deletes `key` from the default keyspace if it has a value; returns
    /// whether it had one (what a dbm's `del db[key]` needs, which fails for
    /// a missing key). The check stops at the key's newest entry without
    /// reading its value, as [`Db::contains_key`] does; a missing key writes
    /// nothing. Durable as [`Db::delete`] is. The check and the delete are
    /// not one atomic step for other threads writing `key`.
    pub fn delete_existing(&self, key: &[u8]) -> Result<bool> {
        if !self.contains_key(key)? {
            return Ok(false);
        }
        self.delete(key)?;
        Ok(true)
    }

    /// Adds a merge operand for `key` without reading it (a blind update).
    /// [`Error::Merge`] naming the key if the operand certainly cannot be
    /// folded onto the stored value (found in the memtable); when the stored
    /// value is older the operand is written and reads of the key fail.
    pub fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        self.inner().refuse_unfoldable_merge(0, key, operand)?;
        let mut b = Batch::new();
        b.merge(key, operand);
        self.write(b)
    }

    /// Applies the one operation `fill` adds to an empty batch, with the
    /// default durability, without allocating a batch (see
    /// [`with_one_op_batch`]).
    pub(crate) fn write_one_op(&self, fill: impl FnOnce(&mut Batch)) -> Result<()> {
        let d = self.inner().opts.durability;
        with_one_op_batch(|b| {
            fill(b);
            self.inner().write(b, d)
        })
    }

    /// [`Db::write_one_op`] if the commit needs no waiting (see
    /// [`crate::Keyspace::try_put`]); `Ok(false)`, nothing written, if it would.
    pub(crate) fn try_write_one_op(&self, fill: impl FnOnce(&mut Batch)) -> Result<bool> {
        let d = self.inner().opts.durability;
        with_one_op_batch(|b| {
            fill(b);
            self.inner().try_write(b, d)
        })
    }

    /// Applies `batch` atomically with the default durability.
    pub fn write(&self, batch: Batch) -> Result<()> {
        let d = self.inner().opts.durability;
        self.write_with(batch, d)
    }

    /// Applies `batch` atomically; returns once it is as durable as `durability` says.
    pub fn write_with(&self, mut batch: Batch, durability: Durability) -> Result<()> {
        self.inner().write(&mut batch, durability)
    }

    /// Every entry of the default keyspace, ascending (`.rev()` for descending).
    pub fn iter(&self) -> Iter {
        self.range::<&[u8], _>(..)
    }

    /// The entries of the default keyspace whose keys lie in `range`.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        Iter::new(Arc::clone(&self.handle), 0, &range, None)
    }

    /// The entries of the default keyspace whose keys start with `prefix`.
    pub fn prefix(&self, prefix: &[u8]) -> Iter {
        Iter::with_prefix(Arc::clone(&self.handle), 0, prefix, None)
    }

    /// A consistent read-only view of the database as of now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(Arc::clone(&self.handle))
    }

    /// The keyspace `name`, created if missing.
    pub fn keyspace(&self, name: &str) -> Result<Keyspace> {
        Keyspace::open(self, name, true)
    }

    /// The keyspace `name`; [`Error::NoSuchKeyspace`] if missing.
    pub fn open_keyspace(&self, name: &str) -> Result<Keyspace> {
        Keyspace::open(self, name, false)
    }

    /// Drops keyspace `name` and (lazily, in compaction) its data.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        Keyspace::drop_named(self, name)
    }

    /// Names of the named keyspaces (the default keyspace is not listed).
    pub fn keyspaces(&self) -> Vec<String> {
        self.inner().keyspaces.read().keys().cloned().collect()
    }

    /// The default keyspace.
    pub fn default_keyspace(&self) -> Keyspace {
        Keyspace::default_of(self)
    }

    /// Writes the memtable to a table and makes every earlier write durable.
    pub fn flush(&self) -> Result<()> {
        self.inner().flush_and_wait()
    }

    /// Compacts the whole database down to its last level, dropping every
    /// overwritten value and tombstone no snapshot needs.
    pub fn compact(&self) -> Result<()> {
        self.compact_range(None, None)?;
        // Reclaiming space includes the WAL segments kept for reuse.
        self.inner().remove_reusable_wals();
        Ok(())
    }

    /// Compacts the tables overlapping `[start, end]` of the default keyspace.
    pub fn compact_range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        let lo = start.map(|s| crate::key::tree_key(0, s));
        let hi = end.map(|e| crate::key::tree_key(0, e));
        let all = start.is_none() && end.is_none();
        if all {
            self.inner().compact_manual(None, None)
        } else {
            let lo = lo.unwrap_or_else(|| crate::key::tree_key(0, b""));
            let hi = hi.unwrap_or_else(|| crate::key::tree_key(1, b""));
            self.inner().compact_manual(Some(&lo), Some(&hi))
        }
    }

    /// Makes every write so far durable.
    pub fn sync(&self) -> Result<()> {
        self.inner().check_open()?;
        if self.inner().opts.read_only {
            return Ok(());
        }
        self.inner().sync_wal()
    }

    /// Makes everything durable and closes the database. Idempotent; every
    /// later call on any clone of this handle returns [`Error::Closed`].
    pub fn close(&self) -> Result<()> {
        self.inner().close()
    }

    /// Counters and the shape of the tree.
    pub fn stats(&self) -> Stats {
        self.inner().stats()
    }

    /// Verifies every checksum and invariant; the report lists what is wrong.
    pub fn check(&self) -> Result<CheckReport> {
        self.inner().check()
    }

    /// Writes a consistent copy of the database into `dest` (which must not exist
    /// or be empty): the memtable is flushed first, then every table and a fresh
    /// manifest are copied.
    pub fn backup(&self, dest: impl AsRef<Path>) -> Result<()> {
        self.inner().backup(dest.as_ref())
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.inner().path)
            .finish_non_exhaustive()
    }
}
