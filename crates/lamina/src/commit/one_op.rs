//! Writes of one key (`put`, `delete`, and their non-blocking forms): the
//! operation goes into a batch the thread keeps, so that a single write
//! allocates nothing, and a value large enough for a blob file goes there
//! straight from the caller's slice.

use crate::batch::Batch;
use crate::db::Inner;
use crate::error::Result;
use crate::key::{KeyspaceId, Kind};

impl Inner {
    /// Sets `key` in keyspace `ks` to `value`, with the default durability.
    pub(crate) fn put_one(&self, ks: KeyspaceId, key: &[u8], value: &[u8]) -> Result<()> {
        let d = self.opts().durability;
        if value.len() >= self.blob_threshold() {
            return self.write_large_put(ks, key, value, d);
        }
        with_one_op_batch(|b| {
            b.push_put(ks, key, value);
            self.write(b, d)
        })
    }

    /// Deletes `key` from keyspace `ks` (a missing key is not an error).
    pub(crate) fn delete_one(&self, ks: KeyspaceId, key: &[u8]) -> Result<()> {
        let d = self.opts().durability;
        with_one_op_batch(|b| {
            b.push(Kind::Delete, ks, key, None);
            self.write(b, d)
        })
    }

    /// Deletes `key` from keyspace `ks` if it has a value; whether it had
    /// one. The check stops at the key's newest entry without reading its
    /// value; a missing key writes nothing. The check and the delete are
    /// not one atomic step for other threads writing `key`.
    pub(crate) fn delete_existing_one(&self, ks: KeyspaceId, key: &[u8]) -> Result<bool> {
        if !self.contains(ks, key, None)? {
            return Ok(false);
        }
        self.delete_one(ks, key)?;
        Ok(true)
    }

    /// [`Inner::put_one`] if the commit needs no waiting (see
    /// [`Inner::try_write`]); `Ok(false)`, nothing written, if it would. A
    /// value large enough for a blob file is refused before it is copied
    /// anywhere: its commit writes it to the file, which `put_one` does
    /// straight from `value`.
    pub(crate) fn try_put_one(&self, ks: KeyspaceId, key: &[u8], value: &[u8]) -> Result<bool> {
        if value.len() >= self.blob_threshold() {
            return Ok(false);
        }
        let d = self.opts().durability;
        with_one_op_batch(|b| {
            b.push_put(ks, key, value);
            self.try_write(b, d)
        })
    }

    /// [`Inner::delete_one`] if the commit needs no waiting.
    pub(crate) fn try_delete_one(&self, ks: KeyspaceId, key: &[u8]) -> Result<bool> {
        let d = self.opts().durability;
        with_one_op_batch(|b| {
            b.push(Kind::Delete, ks, key, None);
            self.try_write(b, d)
        })
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
