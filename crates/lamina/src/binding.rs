//! The binding's contract: calls that never wait, for a caller that holds
//! something it must not hold across a wait — Python's interpreter lock is
//! the one they are made for. Each answers from memory (the memtables, open
//! tables, cached blocks; a commit that needs no sync, no stall and no room
//! made) or says it would have to wait, and then the caller lets go of what
//! it holds and makes the ordinary call. Rust programs use the ordinary
//! calls of [`Db`], [`Keyspace`] and [`Snapshot`]; nothing here is needed
//! to use lamina from Rust.
//!
//! ```
//! use lamina::binding::{Cached, NonBlocking};
//! # let dir = tempfile::tempdir()?;
//! let db = lamina::Db::open(dir.path().join("db"), lamina::Options::default())?;
//! if !db.try_put(b"k", b"v")? {
//!     db.put(b"k", b"v")?; // would have waited: wait now
//! }
//! let v = match db.try_get_with(b"k", |v| v.to_vec())? {
//!     Cached::Answered(v) => v,
//!     Cached::NeedsIo => db.get(b"k")?,
//! };
//! assert_eq!(v.as_deref(), Some(&b"v"[..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::Result;
use crate::{Db, Keyspace, LazyValue, Snapshot};

pub use crate::read::Cached;
/// `Db::transact`'s loop, step by step, for a binding that calls back into
/// its own language between the runs of a transaction.
pub use crate::txn::Attempts;

/// Reads and writes that never wait for the disk, a sync or another
/// writer, on a [`Db`] (its default keyspace) or a [`Keyspace`].
pub trait NonBlocking {
    /// Like `get_with`, but never waits for the disk: answered from the
    /// memtables, open tables and cached blocks, or [`Cached::NeedsIo`]
    /// (then `f` was not called).
    fn try_get_with<R>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Cached<Option<R>>>;

    /// Like [`NonBlocking::try_get_with`], but a value in a blob file goes
    /// to `blob` unread, as a [`LazyValue`] (which holds its file open),
    /// when reading it needs no file opened: it is kept in memory, or its
    /// file is open. The caller then reads it, perhaps after letting go of
    /// what it must not hold while waiting for the disk, without looking
    /// the key up again.
    fn try_get_with_lazy<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
        blob: impl FnOnce(LazyValue) -> R,
    ) -> Result<Cached<Option<R>>>;

    /// Like `contains_key`, but never waits for the disk.
    fn try_contains_key(&self, key: &[u8]) -> Result<Cached<bool>>;

    /// Sets `key` to `value` as `put` does, but only if the commit needs no
    /// waiting: no other writer is committing, no stall or delay is due,
    /// the memtable has room, the value is shorter than the blob threshold,
    /// and the WAL takes the record without a system call (`Os` durability
    /// copying it into the segment's mapped window, or `None` buffering
    /// it). `Ok(false)`, with nothing written, otherwise: then call `put`.
    fn try_put(&self, key: &[u8], value: &[u8]) -> Result<bool>;

    /// Deletes `key` as `delete` does, if that needs no waiting (as
    /// [`NonBlocking::try_put`] says); `Ok(false)`, nothing written,
    /// otherwise.
    fn try_delete(&self, key: &[u8]) -> Result<bool>;
}

impl NonBlocking for Db {
    fn try_get_with<R>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Cached<Option<R>>> {
        self.inner().try_get_with(0, key, f)
    }

    fn try_get_with_lazy<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
        blob: impl FnOnce(LazyValue) -> R,
    ) -> Result<Cached<Option<R>>> {
        self.inner().try_get_with_lazy(0, key, None, f, blob)
    }

    fn try_contains_key(&self, key: &[u8]) -> Result<Cached<bool>> {
        self.inner().try_contains(0, key, None)
    }

    fn try_put(&self, key: &[u8], value: &[u8]) -> Result<bool> {
        self.inner().try_put_one(0, key, value)
    }

    fn try_delete(&self, key: &[u8]) -> Result<bool> {
        self.inner().try_delete_one(0, key)
    }
}

impl NonBlocking for Keyspace {
    fn try_get_with<R>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Cached<Option<R>>> {
        self.live()?;
        self.db().inner().try_get_with(self.id(), key, f)
    }

    fn try_get_with_lazy<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
        blob: impl FnOnce(LazyValue) -> R,
    ) -> Result<Cached<Option<R>>> {
        self.live()?;
        self.db()
            .inner()
            .try_get_with_lazy(self.id(), key, None, f, blob)
    }

    fn try_contains_key(&self, key: &[u8]) -> Result<Cached<bool>> {
        self.live()?;
        self.db().inner().try_contains(self.id(), key, None)
    }

    fn try_put(&self, key: &[u8], value: &[u8]) -> Result<bool> {
        self.db().inner().try_put_one(self.id(), key, value)
    }

    fn try_delete(&self, key: &[u8]) -> Result<bool> {
        self.db().inner().try_delete_one(self.id(), key)
    }
}

/// Reads of a [`Snapshot`] that never wait for the disk.
pub trait NonBlockingSnapshot {
    /// Like `Snapshot::get_with_in`, but never waits for the disk, and a
    /// value in a blob file may go to `blob` unread (see
    /// [`NonBlocking::try_get_with_lazy`]).
    fn try_get_with_lazy_in<R>(
        &self,
        ks: &Keyspace,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
        blob: impl FnOnce(LazyValue) -> R,
    ) -> Result<Cached<Option<R>>>;

    /// Like `Snapshot::contains_key_in`, but never waits for the disk.
    fn try_contains_key_in(&self, ks: &Keyspace, key: &[u8]) -> Result<Cached<bool>>;
}

impl NonBlockingSnapshot for Snapshot {
    fn try_get_with_lazy_in<R>(
        &self,
        ks: &Keyspace,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
        blob: impl FnOnce(LazyValue) -> R,
    ) -> Result<Cached<Option<R>>> {
        self.handle()
            .inner
            .try_get_with_lazy(ks.id(), key, Some(self.seqno()), f, blob)
    }

    fn try_contains_key_in(&self, ks: &Keyspace, key: &[u8]) -> Result<Cached<bool>> {
        self.handle()
            .inner
            .try_contains(ks.id(), key, Some(self.seqno()))
    }
}
