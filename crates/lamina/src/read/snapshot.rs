//! Snapshots: a consistent read-only view of the database at one seqno.

use super::Iter;
use super::SeekCursor;
use crate::db::Handle;
use crate::db::Keyspace;
use crate::error::Result;
use crate::key::SeqNo;
use std::ops::RangeBounds;
use std::sync::Arc;

/// A read-only view as of the moment it was taken. Compaction keeps what it
/// sees until it is dropped. Cheap to clone; it keeps the database open.
pub struct Snapshot {
    handle: Arc<Handle>,
    seqno: SeqNo,
}

impl Snapshot {
    /// The handle the snapshot keeps open.
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    pub(crate) fn new(handle: Arc<Handle>) -> Snapshot {
        let inner = &handle.inner;
        let seqno = inner
            .reads()
            .add_snapshot(|| inner.commit().visible_seqno());
        Snapshot { handle, seqno }
    }

    /// A snapshot at the applied seqno (`Commit::applied_seqno`) once
    /// every writer that took seqnos has inserted: beyond the visible one,
    /// it also reads writes waiting for their sync. For a transaction,
    /// whose commit is ordered after them.
    pub(crate) fn settled(handle: Arc<Handle>) -> Snapshot {
        let inner = &handle.inner;
        // Waited for before the registry's lock; read again under it (no
        // lower: `applied` only rises).
        inner.commit().settled_seqno();
        let seqno = inner
            .reads()
            .add_snapshot(|| inner.commit().applied_seqno());
        Snapshot { handle, seqno }
    }

    /// The seqno the snapshot reads at.
    pub fn seqno(&self) -> SeqNo {
        self.seqno
    }

    /// The value of `key` in the default keyspace.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.handle.inner.get(0, key, Some(self.seqno))
    }

    /// The values of `keys` in the default keyspace as of the snapshot, in
    /// their order, `None` where a key has none (see
    /// [`Db::get_many`](crate::Db::get_many)).
    pub fn get_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        self.handle.inner.get_many(0, keys, Some(self.seqno))
    }

    /// The values of `keys` in keyspace `ks` as of the snapshot, in their
    /// order, `None` where a key has none.
    pub fn get_many_in<K: AsRef<[u8]>>(
        &self,
        ks: &Keyspace,
        keys: &[K],
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.handle.inner.get_many(ks.id(), keys, Some(self.seqno))
    }

    /// The value of `key` in keyspace `ks`, not yet read if it is in a blob
    /// file (see [`crate::Db::get_lazy`]).
    pub fn get_lazy_in(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<crate::LazyValue>> {
        self.handle.inner.get_value(ks.id(), key, Some(self.seqno))
    }

    /// The value of `key` in keyspace `ks`.
    pub fn get_in(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.handle.inner.get(ks.id(), key, Some(self.seqno))
    }

    /// Whether `key` has a value in the default keyspace; stops at its
    /// newest entry (see [`Db::contains_key`](crate::Db::contains_key)).
    pub fn contains_key(&self, key: &[u8]) -> Result<bool> {
        self.handle.inner.contains(0, key, Some(self.seqno))
    }

    /// Calls `f` with the value of `key` in keyspace `ks`, borrowed for the
    /// call (see [`Db::get_with`](crate::Db::get_with)).
    pub fn get_with_in<R>(
        &self,
        ks: &Keyspace,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>> {
        self.handle
            .inner
            .get_with(ks.id(), key, Some(self.seqno), f)
    }

    /// Whether `key` has a value in keyspace `ks`; stops at its newest entry
    /// (see [`Db::contains_key`](crate::Db::contains_key)).
    pub fn contains_key_in(&self, ks: &Keyspace, key: &[u8]) -> Result<bool> {
        self.handle.inner.contains(ks.id(), key, Some(self.seqno))
    }

    /// Every entry of the default keyspace.
    pub fn iter(&self) -> Iter {
        self.range::<&[u8], _>(..)
    }

    /// Entries of the default keyspace in `range`.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        Iter::new(Arc::clone(&self.handle), 0, &range, Some(self.seqno))
    }

    /// Entries of the default keyspace starting with `prefix`.
    pub fn prefix(&self, prefix: &[u8]) -> Iter {
        Iter::with_prefix(Arc::clone(&self.handle), 0, prefix, Some(self.seqno))
    }

    /// Every entry of keyspace `ks`.
    pub fn iter_in(&self, ks: &Keyspace) -> Iter {
        self.range_in::<&[u8], _>(ks, ..)
    }

    /// Entries of keyspace `ks` in `range`.
    pub fn range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, ks: &Keyspace, range: R) -> Iter {
        Iter::new(Arc::clone(&self.handle), ks.id(), &range, Some(self.seqno))
    }

    /// A cursor over keyspace `ks` in this snapshot that seeks and moves both
    /// ways (see [`SeekCursor`]).
    pub fn cursor_in(&self, ks: &Keyspace) -> SeekCursor {
        SeekCursor::new(self.clone(), ks.clone())
    }

    /// Entries of keyspace `ks` starting with `prefix`.
    pub fn prefix_in(&self, ks: &Keyspace, prefix: &[u8]) -> Iter {
        Iter::with_prefix(Arc::clone(&self.handle), ks.id(), prefix, Some(self.seqno))
    }
}

impl Clone for Snapshot {
    fn clone(&self) -> Snapshot {
        let seqno = self.seqno;
        self.handle.inner.reads().add_snapshot(|| seqno);
        Snapshot {
            handle: Arc::clone(&self.handle),
            seqno: self.seqno,
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.handle.inner.reads().drop_snapshot(self.seqno);
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("seqno", &self.seqno)
            .finish()
    }
}
