//! Transactions: reads from a snapshot taken at the start, writes buffered
//! and read back, and a commit that applies the writes as one batch only if
//! nothing read has changed since the snapshot — serializable, by
//! optimistic validation under the commit lock (`validate`); and `transact`,
//! which runs a closure again on conflict (`retry`).
//! docs/design.md#transactions says why it is correct.

mod gate;
mod iter;
mod pending;
mod pops;
mod retry;
mod validate;

pub(crate) use gate::Gate;
pub use iter::TxnIter;
pub use retry::Attempts;

use crate::batch::Batch;
use crate::db::{Db, Keyspace};
use crate::error::Result;
use crate::key::{self, KeyspaceId};
use crate::options::Durability;
use crate::read::{Iter, Pinned, Snapshot};
use parking_lot::Mutex;
use pending::{Base, Pending};
use pops::Pops;
use std::collections::{BTreeMap, VecDeque};
use std::ops::{Bound, RangeBounds};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use validate::ReadSet;

/// A transaction: it reads the database as of its start, sees its own
/// writes, and commits them atomically only if nothing it read (keys, found
/// or missing, and ranges scanned) has changed since — otherwise
/// [`crate::Error::Conflict`], and nothing is written. Dropping it, or
/// [`Transaction::rollback`], discards its writes.
///
/// "As of its start" includes commits whose sync is still running: the
/// transaction's own commit is ordered after them and returns only once
/// they are durable too (or fails with their sync's error); a transaction
/// that wrote nothing waits for them at its commit. Plain reads and
/// snapshots see only what is visible (docs/design.md#transactions).
///
/// It holds a snapshot and, while it pops ([`Transaction::pop_first`]), one
/// cursor, which keeps the files it reads until the transaction ends or
/// writes otherwise: flushes and compactions go on, and other writers are
/// never blocked by it. Begin one with
/// [`Db::transaction`], or let [`Db::transact`] run a closure in one and
/// retry it on conflict.
pub struct Transaction {
    db: Db,
    snap: Snapshot,
    /// Its writes, by tree key.
    writes: BTreeMap<Vec<u8>, Pending>,
    /// What it read from the snapshot.
    reads: Mutex<ReadSet>,
    /// The open cursor of its pops, if it popped since its last other
    /// write (`pops`).
    pops: Option<Pops>,
    /// Holds the transaction gate exclusively until it ends (`retry`).
    exclusive: bool,
}

impl Transaction {
    /// Begins a transaction of `db`; `exclusive` after the gate was entered
    /// exclusively (and is left when the transaction ends).
    pub(crate) fn begin(db: &Db, exclusive: bool) -> Transaction {
        Transaction {
            db: db.clone(),
            snap: Snapshot::settled(std::sync::Arc::clone(&db.handle)),
            writes: BTreeMap::new(),
            reads: Mutex::new(ReadSet::default()),
            pops: None,
            exclusive,
        }
    }

    /// The seqno of the snapshot it reads.
    pub fn seqno(&self) -> u64 {
        self.snap.seqno()
    }

    /// True when it holds no write (its commit validates nothing).
    pub fn is_read_only(&self) -> bool {
        self.writes.is_empty() && self.pops.as_ref().is_none_or(Pops::is_empty)
    }

    /// The value of `key` in the default keyspace, its own writes included.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_id(0, key)
    }

    /// The value of `key` in keyspace `ks`, its own writes included.
    pub fn get_in(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
        ks.live()?;
        self.get_id(ks.id(), key)
    }

    /// The values of `keys` in the default keyspace, in their order, its own
    /// writes included: [`Transaction::get`] of each (each read recorded).
    pub fn get_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|k| self.get(k.as_ref())).collect()
    }

    /// Whether `key` has a value in the default keyspace (see
    /// [`Db::contains_key`]), its own writes included.
    pub fn contains_key(&self, key: &[u8]) -> Result<bool> {
        self.contains_id(0, key)
    }

    /// Whether `key` has a value in keyspace `ks`, its own writes included.
    pub fn contains_key_in(&self, ks: &Keyspace, key: &[u8]) -> Result<bool> {
        ks.live()?;
        self.contains_id(ks.id(), key)
    }

    fn get_id(&self, ks: KeyspaceId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let tk = key::tree_key(ks, key);
        if self.popped(&tk) {
            return Ok(None);
        }
        let op = Arc::clone(&self.db.inner().opts().merge_operator);
        match self.writes.get(&tk) {
            Some(p) if !p.needs_snapshot() => p.value(&tk, None, op.as_ref()),
            Some(p) => {
                let base = self.read(ks, key, tk.clone())?;
                p.value(&tk, base.as_deref(), op.as_ref())
            }
            None => self.read(ks, key, tk),
        }
    }

    fn contains_id(&self, ks: KeyspaceId, key: &[u8]) -> Result<bool> {
        let tk = key::tree_key(ks, key);
        if self.popped(&tk) {
            return Ok(false);
        }
        if let Some(p) = self.writes.get(&tk) {
            if !p.needs_snapshot() || p.exists() {
                return Ok(p.exists());
            }
        }
        let found = self.db.inner().contains(ks, key, Some(self.seqno()))?;
        self.reads.lock().keys.insert(tk);
        Ok(found)
    }

    /// Whether the tree key `tk` was popped by the open cursor of pops.
    fn popped(&self, tk: &[u8]) -> bool {
        self.pops.as_ref().is_some_and(|p| p.popped(tk))
    }

    /// Reads `key` (tree key `tk`) of keyspace `ks` from the snapshot, and
    /// records the read.
    fn read(&self, ks: KeyspaceId, key: &[u8], tk: Vec<u8>) -> Result<Option<Vec<u8>>> {
        let v = self.db.inner().get(ks, key, Some(self.seqno()))?;
        self.reads.lock().keys.insert(tk);
        Ok(v)
    }

    /// Sets `key` to `value` in the default keyspace.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write(0, key, Base::Put(value.to_vec()), value)
    }

    /// Sets `key` to `value` in keyspace `ks`.
    pub fn put_in(&mut self, ks: &Keyspace, key: &[u8], value: &[u8]) -> Result<()> {
        ks.live()?;
        self.write(ks.id(), key, Base::Put(value.to_vec()), value)
    }

    /// Deletes `key` from the default keyspace (a missing key is not an error).
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.write(0, key, Base::Delete, &[])
    }

    /// Deletes `key` from keyspace `ks`.
    pub fn delete_in(&mut self, ks: &Keyspace, key: &[u8]) -> Result<()> {
        ks.live()?;
        self.write(ks.id(), key, Base::Delete, &[])
    }

    /// Adds a merge operand for `key` in the default keyspace, folded on
    /// read through the database's merge operator. A blind update: it
    /// reads nothing, so it never conflicts by itself.
    pub fn merge(&mut self, key: &[u8], operand: &[u8]) -> Result<()> {
        self.merge_id(0, key, operand)
    }

    /// Adds a merge operand for `key` in keyspace `ks`.
    pub fn merge_in(&mut self, ks: &Keyspace, key: &[u8], operand: &[u8]) -> Result<()> {
        ks.live()?;
        self.merge_id(ks.id(), key, operand)
    }

    fn write(&mut self, ks: KeyspaceId, key: &[u8], base: Base, value: &[u8]) -> Result<()> {
        crate::batch::check_limits(key, value)?;
        self.close_pops();
        let pending = Pending {
            base,
            operands: Vec::new(),
        };
        self.writes.insert(key::tree_key(ks, key), pending);
        Ok(())
    }

    fn merge_id(&mut self, ks: KeyspaceId, key: &[u8], operand: &[u8]) -> Result<()> {
        crate::batch::check_limits(key, operand)?;
        self.close_pops();
        let op = &self.db.inner().opts().merge_operator;
        if let Err(why) = op.validate_operand(operand) {
            let tk = key::tree_key(ks, key);
            return Err(crate::merge::merge_error(&tk, &why));
        }
        self.writes
            .entry(key::tree_key(ks, key))
            .or_insert(Pending {
                base: Base::Snapshot,
                operands: Vec::new(),
            })
            .operands
            .push(operand.to_vec());
        Ok(())
    }

    /// Every entry of the default keyspace, its own writes included.
    pub fn iter(&self) -> TxnIter {
        self.range::<&[u8], _>(..)
    }

    /// Entries of the default keyspace in `range`, its own writes included;
    /// the whole range counts as read (a write anywhere in it by another
    /// writer before the commit is a conflict: no phantoms).
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> TxnIter {
        self.range_id(0, &range)
    }

    /// Entries of the default keyspace starting with `prefix`.
    pub fn prefix(&self, prefix: &[u8]) -> TxnIter {
        self.prefix_id(0, prefix)
    }

    /// Every entry of keyspace `ks`, its own writes included.
    pub fn iter_in(&self, ks: &Keyspace) -> TxnIter {
        self.range_in::<&[u8], _>(ks, ..)
    }

    /// Entries of keyspace `ks` in `range`, its own writes included.
    pub fn range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, ks: &Keyspace, range: R) -> TxnIter {
        self.range_id(ks.id(), &range)
    }

    /// Entries of keyspace `ks` starting with `prefix`.
    pub fn prefix_in(&self, ks: &Keyspace, prefix: &[u8]) -> TxnIter {
        self.prefix_id(ks.id(), prefix)
    }

    fn range_id<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, ks: KeyspaceId, range: &R) -> TxnIter {
        let lower = match range.start_bound() {
            Bound::Included(k) => Bound::Included(key::tree_key(ks, k.as_ref())),
            Bound::Excluded(k) => Bound::Excluded(key::tree_key(ks, k.as_ref())),
            Bound::Unbounded => Bound::Included(key::tree_key(ks, b"")),
        };
        let upper = match range.end_bound() {
            Bound::Included(k) => Bound::Included(key::tree_key(ks, k.as_ref())),
            Bound::Excluded(k) => Bound::Excluded(key::tree_key(ks, k.as_ref())),
            Bound::Unbounded => keyspace_end(ks),
        };
        self.scan(lower, upper)
    }

    fn prefix_id(&self, ks: KeyspaceId, prefix: &[u8]) -> TxnIter {
        let lower = Bound::Included(key::tree_key(ks, prefix));
        let mut end = prefix.to_vec();
        let upper = loop {
            match end.pop() {
                Some(b) if b < 0xff => {
                    end.push(b + 1);
                    break Bound::Excluded(key::tree_key(ks, &end));
                }
                Some(_) => {}
                None => break keyspace_end(ks),
            }
        };
        self.scan(lower, upper)
    }

    /// The snapshot's entries between tree keys `lower` and `upper` merged
    /// with its own writes there; records the range as read.
    fn scan(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> TxnIter {
        let iter = self.merged(lower.clone(), upper.clone());
        self.reads.lock().ranges.push((lower, upper));
        iter
    }

    /// The snapshot's entries between tree keys `lower` and `upper` merged
    /// with its own writes there.
    fn merged(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> TxnIter {
        let own: VecDeque<_> = if is_empty(&lower, &upper) {
            VecDeque::new()
        } else {
            let writes = self
                .writes
                .range((lower.clone(), upper.clone()))
                .map(|(k, p)| (k.clone(), p.clone()));
            match &self.pops {
                Some(p) => pops::with_popped(writes, p.in_range(&lower, &upper)),
                None => writes.collect(),
            }
        };
        let base = Iter::with_bounds(
            Arc::clone(&self.db.handle),
            lower,
            upper,
            Some(self.seqno()),
        );
        TxnIter::new(
            base,
            own,
            Arc::clone(&self.db.inner().opts().merge_operator),
        )
    }

    /// Removes the first entry of the default keyspace, its own writes
    /// included, and returns it; `None` when the keyspace is empty. The
    /// keys up to it count as read (a key written there by another writer
    /// before the commit is a conflict). Pops in a row take from one open
    /// cursor, so draining a queue costs amortized O(1) a pop (docs/design.md#transactions).
    pub fn pop_first(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.pop(0, true)
    }

    /// Removes the last entry of the default keyspace and returns it (see
    /// [`Transaction::pop_first`]).
    pub fn pop_last(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.pop(0, false)
    }

    /// Removes the first entry of keyspace `ks` and returns it.
    pub fn pop_first_in(&mut self, ks: &Keyspace) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        ks.live()?;
        self.pop(ks.id(), true)
    }

    /// Removes the last entry of keyspace `ks` and returns it.
    pub fn pop_last_in(&mut self, ks: &Keyspace) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        ks.live()?;
        self.pop(ks.id(), false)
    }

    fn pop(&mut self, ks: KeyspaceId, front: bool) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.pops.as_ref().is_some_and(|p| p.ks != ks) {
            self.close_pops();
        }
        let pops = match &mut self.pops {
            Some(p) => p,
            None => {
                let lower = Bound::Included(key::tree_key(ks, b""));
                let iter = self.merged(lower, keyspace_end(ks));
                self.pops.insert(Pops::new(ks, iter))
            }
        };
        let next = if front {
            pops.iter.next()
        } else {
            pops.iter.next_back()
        };
        match next {
            None => {
                pops.drained = true;
                Ok(None)
            }
            Some(Err(e)) => {
                // The cursor ends at an error: the next pop opens another.
                self.close_pops();
                Err(e)
            }
            Some(Ok((k, v))) => {
                pops.push(front, &k);
                Ok(Some((k, v)))
            }
        }
    }

    /// Closes the cursor of pops, recording what they read, and moves the
    /// keys they popped into the buffer as deletes.
    fn close_pops(&mut self) {
        if let Some(p) = self.end_pops() {
            for tk in p.all() {
                self.writes.insert(tk, deleted());
            }
        }
    }

    /// Takes the cursor of pops and records what they read.
    fn end_pops(&mut self) -> Option<Pops> {
        let p = self.pops.take()?;
        let end = keyspace_end(p.ks);
        self.reads.lock().ranges.extend(p.read_ranges(end));
        Some(p)
    }

    /// Commits with the database's default durability (see
    /// [`Transaction::commit_with`]).
    pub fn commit(self) -> Result<()> {
        let d = self.db.inner().opts().durability;
        self.commit_with(d)
    }

    /// Applies its writes atomically, as one batch durable as `durability`
    /// says, if nothing it read has changed since its snapshot; otherwise
    /// [`crate::Error::Conflict`] naming what changed, and nothing is
    /// written. A transaction that wrote nothing commits without
    /// validation, once the writes it may have read are visible.
    pub fn commit_with(mut self, durability: Durability) -> Result<()> {
        let pops = self.end_pops();
        if self.writes.is_empty() && pops.as_ref().is_none_or(Pops::is_empty) {
            return self.commit_read_only();
        }
        let mut batch = Batch::new();
        for (tk, p) in &self.writes {
            p.write_to(tk, &mut batch);
        }
        // The pops' deletes last: later entries of a batch are newer.
        for tk in pops.iter().flat_map(Pops::all) {
            deleted().write_to(&tk, &mut batch);
        }
        let inner = self.db.inner();
        let seqno = self.seqno();
        let reads = self.reads.lock();
        let counters = inner.counters();
        let check = |view: &Pinned| validate::validate(view, counters, seqno, &reads);
        if !self.exclusive {
            inner.txn_gate().enter_shared();
        }
        let result = inner.write_if(&mut batch, durability, &check);
        if !self.exclusive {
            inner.txn_gate().leave_shared();
        }
        if result.is_ok() {
            inner.counters().txn_commits.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    /// The commit of a transaction that wrote nothing: its snapshot may
    /// cover writes still waiting for their sync (it reads as of the
    /// applied seqno); it returns once they are visible, or with the error
    /// that poisoned the database if their sync failed.
    fn commit_read_only(self) -> Result<()> {
        let commit = self.db.inner().commit();
        if commit.visible_seqno() >= self.seqno() {
            return Ok(());
        }
        commit.wait_visible(self.seqno());
        self.db.inner().check_unpoisoned()
    }

    /// Discards its writes (as dropping it does).
    pub fn rollback(self) {}
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if self.exclusive {
            self.db.inner().txn_gate().leave_exclusive();
        }
    }
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("seqno", &self.seqno())
            .field("writes", &self.writes.len())
            .field("exclusive", &self.exclusive)
            .finish()
    }
}

/// A buffered delete.
fn deleted() -> Pending {
    Pending {
        base: Base::Delete,
        operands: Vec::new(),
    }
}

/// Whether no key lies between `lower` and `upper` (a map's `range` would
/// panic on bounds the wrong way round).
fn is_empty(lower: &Bound<Vec<u8>>, upper: &Bound<Vec<u8>>) -> bool {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b)) => a >= b,
        _ => false,
    }
}

/// The bound after every tree key of keyspace `ks`.
fn keyspace_end(ks: KeyspaceId) -> Bound<Vec<u8>> {
    match ks.checked_add(1) {
        Some(n) => Bound::Excluded(n.to_be_bytes().to_vec()),
        None => Bound::Unbounded,
    }
}

impl Db {
    /// Begins a transaction: it reads the database as of now and commits
    /// only if nothing it read has changed (see [`Transaction`]).
    pub fn transaction(&self) -> Transaction {
        Transaction::begin(self, false)
    }

    /// Runs `f` in a transaction and commits it, running it again (in a new
    /// transaction) on [`crate::Error::Conflict`], up to 100 times; returns
    /// what `f` returned. See [`Db::transact_with`].
    pub fn transact<T>(&self, f: impl FnMut(&mut Transaction) -> Result<T>) -> Result<T> {
        self.transact_with(retry::DEFAULT_RETRIES, f)
    }

    /// [`Db::transact`] with at most `retries` runs again after conflicts;
    /// the last conflict is returned once they are spent. Between runs it
    /// backs off for a random while, growing with the conflicts; after a
    /// few, each run holds the transaction gate exclusively from its
    /// snapshot to its commit, so no other transaction commits meanwhile
    /// and only a plain write (or a flush) to what it read can still make
    /// it conflict. `f` may run several times: it should have no effect
    /// outside the transaction. Nothing `f` returns as an error is retried.
    pub fn transact_with<T>(
        &self,
        retries: usize,
        mut f: impl FnMut(&mut Transaction) -> Result<T>,
    ) -> Result<T> {
        let mut attempts = Attempts::new(retries);
        loop {
            let mut tx = attempts.begin(self);
            let out = f(&mut tx).and_then(|v| tx.commit().map(|()| v));
            match out {
                Err(crate::Error::Conflict(why)) => attempts.conflicted(why)?,
                other => return other,
            }
        }
    }
}
