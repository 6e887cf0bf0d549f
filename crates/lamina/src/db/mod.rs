//! The database handle and the state it shares with its background threads.

mod api;
mod backup;
mod bulk_loader;
mod check;
mod ingest;
mod keyspace;
mod memory;
mod stats;

use crate::cache::TableCache;
use crate::error::{Error, Result};
use crate::fs::{FileLock, FileSystem};
use crate::key::{KeyspaceId, SeqNo};

use crate::manifest::{FileMeta, Version, VersionSet};
use crate::memtable::Memtable;
use crate::options::Options;
pub use bulk_loader::{BulkLoadOptions, BulkLoader};
pub use check::CheckReport;
pub(crate) use ingest::Origin as IngestOrigin;
pub use ingest::{IngestOptions, IngestedTable};
pub use keyspace::Keyspace;
use parking_lot::{Condvar, Mutex, RwLock};
pub(crate) use stats::{add_under_wal_lock, cause_index, Counters};
pub use stats::{LevelStats, ReadStats, StallStats, Stats};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use crate::background::Background;
use crate::blob::LazyValue;
use crate::commit::Commit;
use crate::read::{At, Cached, Pinned, ReadView, Reads};

/// An open database: a cheap handle that can be cloned and shared between
/// threads. Every clone refers to the same database; the database closes when
/// `close` is called or the last handle (including iterators, snapshots and
/// keyspace handles, which hold one) is dropped.
///
/// Writes are durable as their [`Durability`](crate::Durability) says; `sync`, `flush` and
/// `close` make everything written before them durable.
#[derive(Clone)]
pub struct Db {
    pub(crate) handle: Arc<Handle>,
}

impl Db {
    /// The state this handle shares.
    #[inline]
    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.handle.inner
    }
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

/// Everything shared by the handles and the background threads: the
/// database's core (its files, options, tree state and manifest) and the
/// subsystems that change it, each owning its state: [`Commit`] (writes:
/// the queue, the WAL, commit-time blob files, publication in seqno
/// order), [`Reads`] (the view published to readers, live snapshots) and
/// [`Background`] (flush and compaction threads). Recovery
/// (`crate::recovery`) builds it. No field is visible outside `db`; the
/// subsystems reach the core through the methods below and each other
/// through their own methods.
///
/// # Lock order
///
/// A thread that holds several of these locks takes them in this order, and
/// never the other way round (docs/design.md#concurrency):
///
/// 1. the commit queue and commit leadership ([`Commit`]);
/// 2. the WAL ([`Commit`]);
/// 3. the commit blob file ([`Commit`]; a writer takes it under the commit
///    queue and releases it before taking the WAL);
/// 4. `versions`;
/// 5. `state`;
/// 6. the leaf locks `keyspaces`, the snapshots and the live floors'
///    and ceilings' slots ([`Reads`]), `poisoned`,
///    the threads and data shape ([`Background`]) and `lock`, held briefly,
///    with none of the locks above taken under them.
///
/// The transaction gate (`txn_gate`, not a lock but waited for like one)
/// comes before all of them: a transaction's commit passes it shared, an exclusive
/// attempt ([`crate::Db::transact`]) holds it for writing from its snapshot
/// to its commit.
///
/// The compaction lock ([`Background`]) is taken before `versions` and
/// `state`; a thread that holds commit leadership only `try_lock`s it, so
/// the two never wait on each other. The removal lock ([`Background`]) is
/// taken after the compaction lock and before `state`, with none of the
/// locks 1 to 5 held. The published view is lock-free. The
/// pipeline's own locks are leaves too: a syncer releases them before it
/// takes the WAL.
pub(crate) struct Inner {
    /// The database directory.
    path: PathBuf,
    /// Every file access goes through it.
    fs: Arc<dyn FileSystem>,
    /// The options the database was opened with, validated.
    opts: Options,
    /// Open tables, by file number.
    tables: Arc<TableCache>,
    /// Open blob files, by file number.
    blobs: Arc<crate::blob::BlobStore>,
    /// The memtables and the current version, as writers and background
    /// threads change them.
    state: Mutex<State>,
    /// Signalled, under `state`, when a flush or compaction finishes or
    /// work arrives.
    bg_cv: Condvar,
    /// Bumped, under the state lock, whenever what decides a write's room
    /// changes (the memtables, the version, the compaction debt, shutting
    /// down): a room kept by the commit queue is good while it is unchanged.
    state_epoch: AtomicU64,
    /// The manifest and counters.
    versions: Mutex<VersionSet>,
    /// Named keyspaces: name -> id.
    keyspaces: RwLock<BTreeMap<String, KeyspaceId>>,
    /// Writes, from the call to durable and visible.
    commit: Commit,
    /// What readers see.
    reads: Reads,
    /// Flush and compaction.
    background: Background,
    /// Set by `close`; every later call fails with `Error::Closed`.
    closed: AtomicBool,
    /// Why writes are refused, after a failure made them unsafe.
    poisoned: Mutex<Option<String>>,
    /// Set once `poisoned` holds a reason: the writers' check reads this
    /// flag, not the lock.
    poison_set: AtomicBool,
    /// Running counters behind `Stats`.
    counters: Counters,
    /// Transactions' commits hold it shared; an attempt of `transact` that
    /// conflicted too often holds it exclusively from its snapshot to its
    /// commit, so that no other transaction commits meanwhile (`crate::txn`).
    txn_gate: crate::txn::Gate,
    /// Level 1's target and the growth factor between levels, chosen at open
    /// from the memtable size unless the options set them (`crate::tuning`).
    levels: crate::tuning::LevelChoice,
    /// Lifetime byte counters as of open; `counters` add to them.
    lifetime_base: crate::manifest::Lifetime,
    /// The `LOCK` file's lock, held by a read-write handle until `close`.
    lock: Mutex<Option<Box<dyn FileLock>>>,
    /// A read-only handle's reader file and the views it pins
    /// (`crate::recovery`); `None` for a read-write handle, or where the
    /// directory takes no reader file.
    reader: Mutex<Option<crate::recovery::ReaderState>>,
    /// The process generation the handle was opened in (`crate::process`).
    process: u64,
    /// The handle itself, for the background threads it starts when work
    /// first comes (`crate::background`).
    me: Weak<Inner>,
    /// This database's claim on the huge chunks kept between memtables
    /// (`memtable::spare`), charged with its memtables; `None` when its
    /// memtables take none. Declared after `state`, so that it is given up
    /// after the memtables have handed their chunks back.
    spare_chunks: Option<crate::memtable::SpareChunks>,
}

/// What recovery found, to build an [`Inner`] from.
pub(crate) struct Parts {
    pub path: PathBuf,
    pub opts: Options,
    pub tables: Arc<TableCache>,
    pub blobs: Arc<crate::blob::BlobStore>,
    pub versions: VersionSet,
    pub lock: Option<Box<dyn FileLock>>,
    pub reader: Option<crate::recovery::ReaderState>,
    pub process: u64,
}

impl Inner {
    /// A database handle's state over what recovery found: an empty
    /// memtable over the manifest's version, nothing published yet. `me`
    /// is the `Arc` it is made in (`Arc::new_cyclic`).
    pub(crate) fn new(p: Parts, me: Weak<Inner>) -> Inner {
        let vs = p.versions;
        let opts = p.opts;
        let reads = Reads::new(Arc::clone(&p.tables), Arc::clone(&p.blobs), &opts);
        let keyspaces = vs
            .keyspaces()
            .iter()
            .map(|(id, n)| (n.clone(), *id))
            .collect();
        Inner {
            path: p.path,
            fs: Arc::clone(&opts.fs),
            tables: p.tables,
            blobs: p.blobs,
            state: Mutex::new(State {
                // Replaced by the replay (`crate::recovery`) before anything
                // is written or read: the smallest, which takes no huge chunk.
                mem: Arc::new(Memtable::new(0, 0)),
                imm: Vec::new(),
                version: vs.current(),
                obsolete: Vec::new(),
                shutting_down: false,
                manual_compactions: 0,
                flushing: false,
                obsolete_blobs: Vec::new(),
            }),
            bg_cv: Condvar::new(),
            state_epoch: AtomicU64::new(0),
            commit: Commit::new(vs.last_seqno()),
            reads,
            background: Background::default(),
            keyspaces: RwLock::new(keyspaces),
            closed: AtomicBool::new(false),
            poisoned: Mutex::new(None),
            poison_set: AtomicBool::new(false),
            counters: Counters::default(),
            txn_gate: crate::txn::Gate::default(),
            levels: crate::tuning::choose_levels(
                opts.level_base_size,
                opts.level_multiplier,
                opts.memtable_size,
                opts.l0_compaction_trigger,
            ),
            lifetime_base: vs.lifetime(),
            lock: Mutex::new(p.lock),
            reader: Mutex::new(p.reader),
            process: p.process,
            me,
            spare_chunks: crate::memtable::register_spare_chunks(opts.memtable_size as u64),
            versions: Mutex::new(vs),
            opts,
        }
    }

    /// The database directory.
    #[inline]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file system every file access goes through.
    #[inline]
    pub(crate) fn fs(&self) -> &Arc<dyn FileSystem> {
        &self.fs
    }

    /// The options the database was opened with, validated.
    #[inline]
    pub(crate) fn opts(&self) -> &Options {
        &self.opts
    }

    /// The smallest value written to a blob file: `blob_threshold`, at
    /// least one byte.
    #[inline]
    pub(crate) fn blob_threshold(&self) -> usize {
        self.opts.blob_threshold.max(1)
    }

    /// Open tables, by file number.
    #[inline]
    pub(crate) fn tables(&self) -> &Arc<TableCache> {
        &self.tables
    }

    /// Open blob files, by file number.
    #[inline]
    pub(crate) fn blobs(&self) -> &Arc<crate::blob::BlobStore> {
        &self.blobs
    }

    /// The memtables and the current version (lock order: after `versions`).
    #[inline]
    pub(crate) fn state(&self) -> &Mutex<State> {
        &self.state
    }

    /// Signalled under `state` when background work finishes or arrives.
    #[inline]
    pub(crate) fn bg_cv(&self) -> &Condvar {
        &self.bg_cv
    }

    /// Bumped under `state` whenever what decides a write's room changes.
    #[inline]
    pub(crate) fn state_epoch(&self) -> &AtomicU64 {
        &self.state_epoch
    }

    /// The manifest and counters (lock order: before `state`).
    #[inline]
    pub(crate) fn versions(&self) -> &Mutex<VersionSet> {
        &self.versions
    }

    /// Named keyspaces: name -> id.
    #[inline]
    pub(crate) fn keyspace_ids(&self) -> &RwLock<BTreeMap<String, KeyspaceId>> {
        &self.keyspaces
    }

    /// The commit subsystem.
    #[inline]
    pub(crate) fn commit(&self) -> &Commit {
        &self.commit
    }

    /// The read subsystem.
    #[inline]
    pub(crate) fn reads(&self) -> &Reads {
        &self.reads
    }

    /// The background subsystem.
    #[inline]
    pub(crate) fn background(&self) -> &Background {
        &self.background
    }

    /// Running counters behind `Stats`.
    #[inline]
    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The transaction gate (see the field).
    #[inline]
    pub(crate) fn txn_gate(&self) -> &crate::txn::Gate {
        &self.txn_gate
    }

    /// Level 1's target and the growth factor between levels.
    #[inline]
    pub(crate) fn levels(&self) -> &crate::tuning::LevelChoice {
        &self.levels
    }

    /// A read-only handle's reader state (`crate::recovery`).
    pub(crate) fn reader(&self) -> &Mutex<Option<crate::recovery::ReaderState>> {
        &self.reader
    }

    /// Whether a failure made writes unsafe.
    #[inline]
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poison_set.load(Ordering::Acquire)
    }

    /// Whether `close` has begun.
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The handle as an `Arc`, for a thread of its own to hold; `None` in a
    /// process forked after the open (its files are the parent's) or once
    /// the last handle is gone.
    pub(crate) fn shared(&self) -> Option<Arc<Inner>> {
        if !crate::process::is_current(self.process) {
            return None;
        }
        self.me.upgrade()
    }
}

/// Reads: each takes its seqno from the commit subsystem (the visible one
/// unless a snapshot's is given), then hands the lookup to the read
/// subsystem, which loads the view after it.
impl Inner {
    /// The seqno a read as of `seqno` (default: now) reads at; fails if the
    /// handle is closed or used in another process.
    #[inline]
    fn read_at(&self, seqno: Option<SeqNo>) -> Result<At> {
        self.check_open()?;
        Ok(At {
            seqno: self.commit.read_seqno(seqno),
            now: seqno.is_none(),
        })
    }

    /// The value of `user_key` in keyspace `ks` as of `seqno` (default:
    /// now), read whole.
    pub(crate) fn get(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        seqno: Option<SeqNo>,
    ) -> Result<Option<Vec<u8>>> {
        self.get_value(ks, user_key, seqno)?
            .map(LazyValue::into_vec)
            .transpose()
    }

    /// The value of `user_key` in keyspace `ks` as of `seqno` (default:
    /// now); a value in a blob file is returned unread.
    pub(crate) fn get_value(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        seqno: Option<SeqNo>,
    ) -> Result<Option<LazyValue>> {
        self.reads
            .get_lazy_value(ks, user_key, self.read_at(seqno)?)
    }

    /// Calls `f` with the value of `user_key` in keyspace `ks` as of
    /// `seqno` (default: now), borrowed where it lies.
    pub(crate) fn get_with<R>(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        seqno: Option<SeqNo>,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>> {
        self.reads.get_with(ks, user_key, self.read_at(seqno)?, f)
    }

    /// Like `get_with` now, without reading from the disk.
    pub(crate) fn try_get_with<R>(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Cached<Option<R>>> {
        self.reads
            .try_get_with(ks, user_key, self.read_at(None)?, f)
    }

    /// Like `try_get_with`, a value in a blob file handed to `blob` unread.
    pub(crate) fn try_get_with_lazy<R>(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        seqno: Option<SeqNo>,
        f: impl FnOnce(&[u8]) -> R,
        blob: impl FnOnce(LazyValue) -> R,
    ) -> Result<Cached<Option<R>>> {
        let at = self.read_at(seqno)?;
        self.reads.try_get_with_lazy(ks, user_key, at, f, blob)
    }

    /// Whether `user_key` has a value in keyspace `ks` as of `seqno`.
    pub(crate) fn contains(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        seqno: Option<SeqNo>,
    ) -> Result<bool> {
        self.reads.contains(ks, user_key, self.read_at(seqno)?)
    }

    /// Like `contains`, without reading from the disk.
    pub(crate) fn try_contains(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        seqno: Option<SeqNo>,
    ) -> Result<Cached<bool>> {
        self.reads.try_contains(ks, user_key, self.read_at(seqno)?)
    }

    /// The values of `keys` in keyspace `ks` as of `seqno`, in their order.
    pub(crate) fn get_many<K: AsRef<[u8]>>(
        &self,
        ks: KeyspaceId,
        keys: &[K],
        seqno: Option<SeqNo>,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.reads.get_many(ks, keys, self.read_at(seqno)?)
    }

    /// The published view, read as of `seqno` (default: now).
    pub(crate) fn read_view(&self, seqno: Option<SeqNo>) -> Result<ReadView> {
        self.reads.read_view(self.read_at(seqno)?.seqno)
    }

    /// The published memtables and version.
    pub(crate) fn pinned(&self) -> Result<Arc<Pinned>> {
        self.reads.pinned()
    }

    /// Publishes the memtables and version of `st` to readers, and marks
    /// the change for writers that kept room in the view before.
    /// REQUIRES: `st` is the guarded state, still locked, just changed.
    pub(crate) fn publish(&self, st: &State) {
        self.reads.publish(st);
        self.state_epoch.fetch_add(1, Ordering::AcqRel);
    }
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
        self.reads.snapshot_list()
    }

    /// Whether `id` names a live keyspace.
    #[inline]
    pub fn keyspace_live(&self, id: KeyspaceId) -> bool {
        id == 0 || self.keyspaces.read().values().any(|&v| v == id)
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
        {
            let mut st = self.state.lock();
            st.shutting_down = true;
            self.state_epoch.fetch_add(1, Ordering::AcqRel);
        }
        self.bg_cv.notify_all();
        self.commit.wake_waiters();
        let threads = self.background.take_threads();
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
        // One sync makes every write durable: END, then the segment's sync
        // (after the threads are joined, so nothing is written after it).
        let last = self.close_wal();
        self.let_go_of_files();
        *self.lock.lock() = None;
        *self.reader.lock() = None;
        last
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
        self.commit.let_go_of_blob();
        self.versions.lock().close();
        self.reads.let_go();
        self.tables.close();
        self.blobs.close();
    }
}
