//! The user's API on [`Db`]: open, reads, writes, iterators, snapshots,
//! keyspaces, maintenance. Each call checks its arguments and hands the work
//! to the subsystem that owns it.

use super::{CheckReport, Keyspace, Stats};
use super::{Db, Handle};
use crate::batch::Batch;
use crate::error::Result;
use crate::options::{Durability, Options};
use crate::read::{Iter, Snapshot};
use std::ops::RangeBounds;
use std::path::Path;
use std::sync::Arc;

impl Db {
    /// Opens (or creates, as `options` say) the database in directory `path`.
    ///
    /// Recovers every write whose durability had been reached before a crash.
    /// Errors: [`Error::Locked`](crate::Error::Locked) if another read-write handle has it open,
    /// [`Error::NotADatabase`](crate::Error::NotADatabase) if `path` is a file or a directory that holds
    /// something else, [`Error::Corruption`](crate::Error::Corruption) if its files are damaged beyond a
    /// torn WAL tail.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let inner = crate::recovery::open(path.as_ref(), options)?;
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
    /// Fails with [`Error::NotADatabase`](crate::Error::NotADatabase) if `path` does not hold one, and with
    /// [`Error::Locked`](crate::Error::Locked) if it is open.
    pub fn destroy(path: impl AsRef<Path>, options: &Options) -> Result<()> {
        crate::recovery::destroy(path.as_ref(), options)
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner().path
    }

    /// The value of `key` in the default keyspace.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner().get(0, key, None)
    }

    /// The values of `keys` in the default keyspace, in the order of `keys`
    /// (`None` where a key has none; a key may come more than once): what a
    /// loop of [`Db::get`] returns, from one view of the database, with the
    /// keys looked up in key order so that neighbours share the blocks they
    /// read, and the blocks the keys need from the disk asked for together
    /// (the device reads them at once rather than one after the other). A
    /// key too long is refused before any is looked up.
    pub fn get_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        self.inner().get_many(0, keys, None)
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

    /// Whether `key` has a value in the default keyspace. It stops at the
    /// key's newest entry: a key whose newest entries are merge operands
    /// exists, and the operands are not applied.
    pub fn contains_key(&self, key: &[u8]) -> Result<bool> {
        self.inner().contains(0, key, None)
    }

    /// Sets `key` to `value` in the default keyspace.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.inner().put_one(0, key, value)
    }

    /// Deletes `key` from the default keyspace (a missing key is not an error).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.inner().delete_one(0, key)
    }

    /// Deletes `key` from the default keyspace if it has a value; returns
    /// whether it had one (what a dbm's `del db[key]` needs, which fails for
    /// a missing key). The check stops at the key's newest entry without
    /// reading its value, as [`Db::contains_key`] does; a missing key writes
    /// nothing. Durable as [`Db::delete`] is. The check and the delete are
    /// not one atomic step for other threads writing `key`.
    pub fn delete_existing(&self, key: &[u8]) -> Result<bool> {
        self.inner().delete_existing_one(0, key)
    }

    /// Adds a merge operand for `key` without reading it (a blind update).
    /// [`Error::Merge`](crate::Error::Merge) naming the key if the operand certainly cannot be
    /// folded onto the stored value (found in the memtable); when the stored
    /// value is older the operand is written and reads of the key fail.
    pub fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        let inner = self.inner();
        inner.check_open()?;
        inner.reads.refuse_unfoldable_merge(0, key, operand)?;
        let mut b = Batch::new();
        b.merge(key, operand);
        self.write(b)
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

    /// The keyspace `name`; [`Error::NoSuchKeyspace`](crate::Error::NoSuchKeyspace) if missing.
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
    /// The WAL segments kept for reuse are let go: the WAL then holds only
    /// the segment writes go on in, which starts small.
    pub fn flush(&self) -> Result<()> {
        self.inner().flush_and_wait()?;
        self.inner().remove_reusable_wals();
        Ok(())
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
    /// later call on any clone of this handle returns [`Error::Closed`](crate::Error::Closed).
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
