//! The write path: group commit into the WAL, then the memtable.
//!
//! Writers queue their batches; the first to find no leader becomes leader,
//! takes every queued batch, writes them to the WAL with one write (and one
//! fsync if any asked for `Sync`), inserts them into the memtable, publishes
//! the new seqno and wakes the group.

use super::Inner;
use crate::batch::Batch;
use crate::error::{Error, Result};

use crate::key::SeqNo;
use crate::memtable::Memtable;
use crate::options::Durability;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Bytes buffered in the process for `Durability::None` writes before they
/// are handed to the operating system.
const NONE_BUFFER_BYTES: usize = 1 << 20;
/// Upper bound of one group, so a leader does not hold followers too long.
const MAX_GROUP_BYTES: usize = 4 << 20;

struct Pending {
    ticket: u64,
    batch: Batch,
    durability: Durability,
}

/// Writers waiting to be committed.
#[derive(Default)]
pub(crate) struct CommitQueue {
    pending: Vec<Pending>,
    next_ticket: u64,
    /// Every ticket below this has been committed (or failed).
    done_below: u64,
    failed: HashMap<u64, Error>,
    leader_active: bool,
    /// Threads waiting on `commit_cv` (followers and `with_leadership`);
    /// a leader that finds none wakes nobody.
    waiters: usize,
    /// Last seqno assigned (owned by the leader).
    pub last_seqno: SeqNo,
}

impl CommitQueue {
    /// A queue whose next write gets seqno `last_seqno + 1`.
    pub fn new(last_seqno: SeqNo) -> CommitQueue {
        CommitQueue {
            last_seqno,
            ..Default::default()
        }
    }
}

impl Inner {
    /// Commits `batch` (see the module doc). Returns once it is visible and as
    /// durable as `durability` says.
    pub fn write(&self, batch: Batch, durability: Durability) -> Result<()> {
        self.check_writable()?;
        let op = Arc::clone(&self.opts.merge_operator);
        batch.validate(&|operand| op.validate_operand(operand), &|ks| {
            if self.keyspace_live(ks) {
                Ok(())
            } else {
                Err(Error::NoSuchKeyspace(format!("id {ks}")))
            }
        })?;
        if batch.is_empty() {
            return Ok(());
        }
        let mut q = self.commit.lock();
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        if !q.leader_active && q.pending.is_empty() {
            // No other writer: commit on this thread without queueing.
            return self.commit_alone(q, ticket, batch, durability);
        }
        q.pending.push(Pending {
            ticket,
            batch,
            durability,
        });
        loop {
            if q.done_below > ticket {
                return match q.failed.remove(&ticket) {
                    Some(e) => Err(e),
                    None => Ok(()),
                };
            }
            if !q.leader_active {
                break;
            }
            q.waiters += 1;
            self.commit_cv.wait(&mut q);
            q.waiters -= 1;
        }
        q.leader_active = true;
        let mut group = Vec::new();
        let mut bytes = 0usize;
        let mut take = 0;
        for p in &q.pending {
            if take > 0 && bytes + p.batch.encoded_len() > MAX_GROUP_BYTES && p.ticket > ticket {
                break;
            }
            bytes += p.batch.encoded_len();
            take += 1;
        }
        group.extend(q.pending.drain(..take));
        let first_seqno = q.last_seqno + 1;
        drop(q);

        let result = self.commit_group(&mut group, first_seqno, bytes);

        let mut q = self.commit.lock();
        let count: u64 = group.iter().map(|p| p.batch.len() as u64).sum();
        if result.is_ok() {
            q.last_seqno = first_seqno + count - 1;
        }
        let last_ticket = group.last().map(|p| p.ticket).unwrap_or(ticket);
        for p in &group {
            if let Err(e) = &result {
                if p.ticket != ticket {
                    q.failed.insert(p.ticket, e.clone());
                }
            }
        }
        q.done_below = q.done_below.max(last_ticket + 1);
        q.leader_active = false;
        let wake = q.waiters > 0;
        drop(q);
        if wake {
            self.commit_cv.notify_all();
        }
        result
    }

    /// The single-writer fast path: with no leader and nobody queued, the
    /// writer leads a group of one without queueing its batch, and wakes
    /// only writers that queued meanwhile. Durability is the same as for a
    /// group: the WAL record is written (and synced for `Sync`) before the
    /// memtable insert and the return.
    fn commit_alone(
        &self,
        mut q: parking_lot::MutexGuard<'_, CommitQueue>,
        ticket: u64,
        batch: Batch,
        durability: Durability,
    ) -> Result<()> {
        q.leader_active = true;
        let first_seqno = q.last_seqno + 1;
        drop(q);
        let bytes = batch.encoded_len();
        let count = batch.len() as u64;
        let mut group = [Pending {
            ticket,
            batch,
            durability,
        }];
        let result = self.commit_group(&mut group, first_seqno, bytes);
        let mut q = self.commit.lock();
        if result.is_ok() {
            q.last_seqno = first_seqno + count - 1;
        }
        q.done_below = q.done_below.max(ticket + 1);
        q.leader_active = false;
        let wake = q.waiters > 0;
        drop(q);
        if wake {
            self.commit_cv.notify_all();
        }
        result
    }

    fn commit_group(&self, group: &mut [Pending], first_seqno: SeqNo, bytes: usize) -> Result<()> {
        self.check_writable()?;
        let mem = self.make_room(bytes)?;
        let mut wal = self.wal.lock();
        let w = wal.as_mut().ok_or(Error::Closed)?;
        let mut seq = first_seqno;
        let mut syncs = 0u64;
        let mut hand_over = false;
        for p in group.iter_mut() {
            let n = p.batch.len() as u64;
            w.add_record(p.batch.encode_with_seqno(seq));
            seq += n;
            syncs += u64::from(p.durability == Durability::Sync);
            hand_over |= p.durability != Durability::None;
        }
        let sync = syncs > 0;
        let io = if sync {
            self.counters.wal_syncs.fetch_add(1, Ordering::Relaxed);
            w.sync()
        } else if hand_over || w.buffered_len() >= NONE_BUFFER_BYTES {
            w.flush()
        } else {
            Ok(())
        };
        if let Err(e) = io {
            self.poison(&e);
            return Err(e);
        }
        drop(wal);
        self.counters
            .wal_bytes_written
            .fetch_add(bytes as u64, Ordering::Relaxed);
        self.counters
            .commits
            .fetch_add(group.len() as u64, Ordering::Relaxed);
        self.counters
            .sync_commits
            .fetch_add(syncs, Ordering::Relaxed);
        let mut seq = first_seqno;
        let mut user_bytes = 0u64;
        for p in group.iter() {
            for op in p.batch.ops() {
                let op = op.map_err(Error::InvalidArgument)?;
                mem.insert_user(op.keyspace, op.key, seq, op.kind, op.value);
                user_bytes += (op.key.len() + op.value.len()) as u64;
                seq += 1;
            }
        }
        self.counters
            .user_bytes_written
            .fetch_add(user_bytes, Ordering::Relaxed);
        self.visible_seqno.store(seq - 1, Ordering::Release);
        Ok(())
    }

    /// Seals the active memtable (if it holds anything) and starts a new WAL
    /// segment for its successor. REQUIRES: called by the commit leader or with
    /// the commit queue otherwise quiet (flush, close).
    pub fn rotate_memtable(&self) -> Result<()> {
        let number = self.versions.lock().new_file_number();
        let mut wal = self.wal.lock();
        {
            let st = self.state.lock();
            if st.mem.is_empty() {
                return Ok(());
            }
        }
        let created = self.start_wal_segment(number).and_then(|w| {
            self.fs
                .sync_dir(&self.path)
                .map_err(|e| Error::io(&self.path, e))?;
            // Recorded before anything in it is acknowledged: docs/format.md#wal.
            self.versions.lock().record_wal_started(number)?;
            Ok(w)
        });
        let new_wal = match created {
            Ok(w) => w,
            Err(e) => {
                self.poison(&e);
                return Err(e);
            }
        };
        if let Some(old) = wal.as_mut() {
            if let Err(e) = self.close_wal_segment(old) {
                self.poison(&e);
                return Err(e);
            }
        }
        *wal = Some(new_wal);
        let mut st = self.state.lock();
        let old = std::mem::replace(&mut st.mem, Arc::new(Memtable::new(number)));
        st.imm.push(old);
        self.publish(&st);
        drop(st);
        drop(wal);
        self.bg_cv.notify_all();
        Ok(())
    }
}

impl Inner {
    /// Runs `f` as the commit leader: no write group is in flight while it runs.
    pub fn with_leadership<T>(&self, f: impl FnOnce() -> T) -> T {
        let mut q = self.commit.lock();
        while q.leader_active {
            q.waiters += 1;
            self.commit_cv.wait(&mut q);
            q.waiters -= 1;
        }
        q.leader_active = true;
        drop(q);
        let out = f();
        let mut q = self.commit.lock();
        q.leader_active = false;
        let wake = q.waiters > 0;
        drop(q);
        if wake {
            self.commit_cv.notify_all();
        }
        out
    }
}
