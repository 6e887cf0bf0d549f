//! The write path: a commit pipeline into the WAL, then the memtable.
//!
//! A writer holds the commit lock only to make room, take its seqnos and
//! hand its record to the WAL (for `Os` a copy into the segment's mapped
//! space ahead, or one write; for `Sync` none: the syncer writes every
//! buffered record at once; for `None` none until 1 MiB is buffered). It then inserts into the memtable with no lock
//! held, and publishes its seqnos to readers in seqno order — for `Sync`,
//! once a sync covers its record (one syncer's `fdatasync` covers every
//! record handed to the WAL before it, while later writers keep writing):
//! `pipeline`, where a writer waits once for both. A lone writer does all
//! of it on its own thread. Before it publishes, a writer moves the live
//! floor or ceiling of a keyspace it gives a value beyond it
//! (`read::floor`).

use crate::batch::{Batch, Op};
use crate::db::add_under_wal_lock;
use crate::db::Inner;
use crate::error::{Error, Result};

use crate::key::{self, KeyspaceId, SeqNo};
use crate::memtable::{Inserters, Memtable};
use crate::options::Durability;
use crate::read::Floors;
use crate::read::Pinned;
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A precondition of a commit, run under the commit lock on the published
/// view (see [`Inner::write_if`]).
pub(crate) type CommitCheck<'a> = &'a dyn Fn(&Pinned) -> Result<()>;

/// Bytes buffered in the process for `Durability::None` writes before they
/// are handed to the operating system.
const NONE_BUFFER_BYTES: usize = 1 << 20;

/// Seqnos handed out, and commit leadership.
#[derive(Default)]
pub(crate) struct CommitQueue {
    /// Held by [`Inner::with_leadership`]: no writer takes a seqno.
    leader_active: bool,
    /// Threads waiting on `commit_cv` for leadership to end.
    waiters: usize,
    /// Last seqno assigned (to a writer or an ingest).
    pub last_seqno: SeqNo,
    /// Last seqno assigned to a writer (0: none since the open); the next
    /// writer publishes after it.
    writer_last: SeqNo,
    /// The room writes that may not wait found last (see
    /// [`Inner::room_now`]).
    pub room: Option<super::room::Room>,
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
    pub fn write(&self, batch: &mut Batch, durability: Durability) -> Result<()> {
        self.check_batch(batch)?;
        if batch.is_empty() {
            return Ok(());
        }
        self.commit_batch(batch, durability, None)
    }

    /// Commits `batch` as [`Inner::write`] does, but only if nothing has to
    /// wait: no other writer holds the commit lock, no stall or delay is
    /// due, the active memtable has room, the batch holds no value for a
    /// blob file, and the WAL takes the record without a system call (an
    /// `Os` copy into the mapped window, or `None` buffering). `Ok(false)`,
    /// with nothing written, when something would wait; `Sync` always
    /// waits. For callers that hold a lock of their own while the commit
    /// cannot block (Python's interpreter lock).
    pub fn try_write(&self, batch: &mut Batch, durability: Durability) -> Result<bool> {
        self.check_batch(batch)?;
        if batch.is_empty() {
            return Ok(true);
        }
        if durability == Durability::Sync || batch.encoded_len() >= self.blob_threshold() {
            return Ok(false);
        }
        self.commit_batch_if(batch, durability, None, false, None)
    }

    /// Commits `batch` as [`Inner::write`] does, only if `check` passes:
    /// it runs under the commit lock, with no leader active, once every
    /// writer that took seqnos has inserted into the memtable, and before
    /// the batch takes its own (a transaction's validation, `crate::txn`).
    /// No writer takes a seqno between the check and the commit. An error
    /// of `check` is returned with nothing written.
    pub(crate) fn write_if(
        &self,
        batch: &mut Batch,
        durability: Durability,
        check: CommitCheck<'_>,
    ) -> Result<()> {
        self.check_batch(batch)?;
        if batch.is_empty() {
            return Ok(());
        }
        self.commit_batch_if(batch, durability, None, true, Some(check))
            .map(|_| ())
    }

    /// Sets `key` in keyspace `ks` to `value`, a value of at least
    /// `blob_threshold` bytes, written to the blob file straight from the
    /// caller's slice (a one-Put batch would first copy it). Committed and
    /// durable as [`Inner::write`] of that batch.
    pub fn write_large_put(
        &self,
        ks: KeyspaceId,
        key: &[u8],
        value: &[u8],
        durability: Durability,
    ) -> Result<()> {
        self.check_writable()?;
        crate::batch::check_limits(key, value)?;
        self.check_keyspace(ks)?;
        let mut batch = Batch::new();
        self.commit_batch(&mut batch, durability, Some((ks, key, value)))
    }

    /// Refuses a write to a closed, read-only or poisoned database, and a
    /// batch with a key, value, merge operand or keyspace it cannot take.
    fn check_batch(&self, batch: &Batch) -> Result<()> {
        self.check_writable()?;
        let op = &self.opts().merge_operator;
        batch.validate(&|operand| op.validate_operand(operand), &|ks| {
            self.check_keyspace(ks)
        })
    }

    fn check_keyspace(&self, ks: KeyspaceId) -> Result<()> {
        if self.keyspace_live(ks) {
            Ok(())
        } else {
            Err(Error::KeyspaceDropped(format!("with id {ks}")))
        }
    }

    /// Commits `batch`, checked; or, with `large`, the one Put it names into
    /// the empty `batch` (as a pointer to its value written to the blob file).
    fn commit_batch(
        &self,
        batch: &mut Batch,
        durability: Durability,
        large: Option<(KeyspaceId, &[u8], &[u8])>,
    ) -> Result<()> {
        self.commit_batch_if(batch, durability, large, true, None)
            .map(|_| ())
    }

    /// [`Inner::commit_batch`]; unless `may_wait`, only if nothing has to
    /// wait (see [`Inner::try_write`]: `Ok(false)`, nothing written, when
    /// something would). With a `check`, it runs before any route once no
    /// writer is between the WAL and the memtable (see [`Inner::write_if`]).
    fn commit_batch_if(
        &self,
        batch: &mut Batch,
        durability: Durability,
        large: Option<(KeyspaceId, &[u8], &[u8])>,
        may_wait: bool,
        check: Option<CommitCheck<'_>>,
    ) -> Result<bool> {
        let count = if large.is_some() {
            1
        } else {
            batch.len() as u64
        };
        let bytes = batch.encoded_len() + large.map_or(0, |(_, k, v)| k.len() + v.len());
        let _durable =
            (durability == Durability::Sync).then(|| self.commit().pipeline.durable_writer());

        let Some(mut q) = self.queue_as_leader(may_wait) else {
            return Ok(false);
        };
        if let Some(check) = check {
            // Every writer that took seqnos has inserted, and none takes
            // new ones while the queue is held: the memtables say all.
            self.commit().pipeline.wait_for_inserts();
            check(&*self.pinned()?)?;
        }
        // A single writer's commit: no other writer is between its seqnos
        // and publishing them, and none is to wait for a sync.
        if durability != Durability::Sync
            && large.is_none()
            && !batch.has_put_of(self.blob_threshold())
            && self.commit().pipeline.idle_after(q.writer_last)
        {
            return self.commit_solo(&mut q, batch, durability, may_wait);
        }
        let Some(mem) = self.room_for(&mut q, bytes, may_wait)? else {
            return Ok(false);
        };
        let first = q.last_seqno + 1;
        let mut separated = match large {
            Some((ks, key, value)) => self
                .write_large_put_value(ks, key, value, &mem, batch)
                .map(|()| None),
            None => self.write_large_values(batch, &mem),
        }
        .inspect_err(|e| self.poison(e))?;
        let batch = match separated.as_mut() {
            Some(b) => b,
            None => batch,
        };
        let Some(ticket) = self.hand_to_wal(batch, first, durability, may_wait, false)? else {
            return Ok(false);
        };
        let prev = q.writer_last;
        q.last_seqno = first + count - 1;
        q.writer_last = q.last_seqno;
        self.commit().pipeline.took(q.writer_last);
        drop(q);

        let floors = self.reads().floors();
        let inserted = insert(&mem, batch, first, Inserters::Many, floors);
        self.commit().pipeline.inserted();
        let inserted = self.index_full_lists(&mem, inserted);

        let durable = self.publish_grouped(prev, first + count - 1, ticket, durability);
        inserted.and(durable).map(|()| true)
    }

    /// The commit queue, once no leader is active in it; unless `may_wait`,
    /// `None` when taking it would wait.
    #[inline(always)]
    fn queue_as_leader(&self, may_wait: bool) -> Option<MutexGuard<'_, CommitQueue>> {
        let mut q = if may_wait {
            self.commit().queue.lock()
        } else {
            match self.commit().queue.try_lock() {
                Some(q) if !q.leader_active => q,
                _ => return None,
            }
        };
        while q.leader_active {
            q.waiters += 1;
            self.commit().leader_cv.wait(&mut q);
            q.waiters -= 1;
        }
        Some(q)
    }

    /// The memtable a grouped write of `bytes` goes to, with room made for
    /// it (the queue's kept room let go if in another memtable); unless
    /// `may_wait`, `None` when making room would wait.
    #[inline(always)]
    fn room_for(
        &self,
        q: &mut CommitQueue,
        bytes: usize,
        may_wait: bool,
    ) -> Result<Option<Arc<Memtable>>> {
        if !may_wait {
            return Ok(self.room_now(&mut q.room)?.map(Arc::clone));
        }
        let mem = self.make_room(bytes)?;
        if q.room.as_ref().is_some_and(|r| !r.is_in(&mem)) {
            q.room = None;
        }
        Ok(Some(mem))
    }

    /// Publishes a grouped write's seqnos `..=last` after the writer
    /// before it (`prev`), once its WAL record (`ticket`) is synced if its
    /// `durability` asks.
    #[inline(always)]
    fn publish_grouped(
        &self,
        prev: SeqNo,
        last: SeqNo,
        ticket: u64,
        durability: Durability,
    ) -> Result<()> {
        let commit = self.commit();
        if durability != Durability::Sync {
            commit.pipeline.publish(&commit.visible_seqno, prev, last);
            return Ok(());
        }
        self.counters().sync_commits.fetch_add(1, Ordering::Relaxed);
        commit
            .pipeline
            .finish(&commit.visible_seqno, prev, last, ticket, || {
                self.sync_for_commit()
            })
    }

    /// [`Inner::commit_batch_if`] for a writer that finds the pipeline idle
    /// ([`Pipeline::idle_after`](super::pipeline::Pipeline::idle_after)):
    /// a single writer's every commit. It keeps the commit lock `q` until
    /// its batch is in the memtable and published, so it is not counted as
    /// inserting, and publishes without the pipeline's lock; into the room
    /// the commit queue keeps, it takes no reference to the memtable.
    /// Unless `may_wait`, `Ok(false)`, nothing written, when something
    /// would wait. REQUIRES: `q` is the commit lock, no leader active;
    /// `durability` is not `Sync`; the batch holds no value for a blob file.
    fn commit_solo(
        &self,
        q: &mut CommitQueue,
        batch: &mut Batch,
        durability: Durability,
        may_wait: bool,
    ) -> Result<bool> {
        let first = q.last_seqno + 1;
        let last = first + batch.len() as u64 - 1;
        let CommitQueue {
            room,
            last_seqno,
            writer_last,
            ..
        } = q;
        let made;
        let mem: &Memtable = match self.room_now(room)? {
            Some(mem) => mem,
            None if may_wait => {
                // Waiting with the commit lock held, as every writer making
                // room does: no writer comes meanwhile, the pipeline stays idle.
                made = self.make_room(batch.encoded_len())?;
                if room.as_ref().is_some_and(|r| !r.is_in(&made)) {
                    *room = None;
                }
                &made
            }
            None => return Ok(false),
        };
        if self
            .hand_to_wal(batch, first, durability, may_wait, true)?
            .is_none()
        {
            return Ok(false);
        }
        *last_seqno = last;
        *writer_last = last;
        self.commit().pipeline.took(last);
        // The only writer: no other inserts until this one is published.
        let floors = self.reads().floors();
        let inserted = insert(mem, batch, first, Inserters::One, floors);
        self.commit()
            .pipeline
            .publish_solo(&self.commit().visible_seqno, last);
        self.index_full_lists(mem, inserted).map(|()| true)
    }

    /// Frames `batch` with seqnos from `first` into the WAL and hands it to
    /// the file (unless `None` durability lets it wait in the buffer).
    /// Returns its pipeline ticket; unless `may_wait`, `None` (nothing
    /// framed) if that would take a system call. A `solo` writer's record
    /// is not counted as inserting. REQUIRES: the commit lock is held.
    fn hand_to_wal(
        &self,
        batch: &mut Batch,
        first: SeqNo,
        durability: Durability,
        may_wait: bool,
        solo: bool,
    ) -> Result<Option<u64>> {
        let mut wal = if may_wait {
            self.commit().wal.lock()
        } else {
            match self.commit().wal.try_lock() {
                Some(wal) => wal,
                None => return Ok(None),
            }
        };
        let w = wal.as_mut().ok_or(Error::Closed)?;
        if !may_wait {
            let fits = match durability {
                Durability::Os => w.fits_mapped(batch.encoded_len()),
                _ => w.buffered_len() + w.framed_len(batch.encoded_len()) < NONE_BUFFER_BYTES,
            };
            if !fits {
                return Ok(None);
            }
        }
        let before = w.len();
        w.add_record(batch.encode_with_seqno(first));
        let io = match durability {
            // Killed-process safe without a system call (docs/design.md#durability-contract).
            Durability::Os => w.flush_mapped(),
            // Left in the buffer: the syncer hands every buffered record to
            // the file in one write before its sync, so writers that queue
            // behind a running sync share both system calls.
            Durability::Sync => Ok(()),
            Durability::None if w.buffered_len() >= NONE_BUFFER_BYTES => w.flush(),
            Durability::None => Ok(()),
        };
        if let Err(e) = io {
            self.poison(&e);
            return Err(e);
        }
        if let Some(job) = w.writeback_due() {
            self.ask_writeback(job);
        }
        let c = self.counters();
        add_under_wal_lock(&c.wal_bytes_written, w.len().saturating_sub(before));
        add_under_wal_lock(&c.user_bytes_written, batch.user_bytes());
        add_under_wal_lock(&c.commits, 1);
        Ok(Some(if solo {
            self.commit().pipeline.handed_to_wal_solo()
        } else {
            self.commit().pipeline.handed_to_wal()
        }))
    }

    /// The syncer's step: hands buffered records to the file, then syncs
    /// the segment — with the WAL lock released during the system call when
    /// the file system allows, so that writers keep handing records to the
    /// WAL meanwhile. Returns the last ticket the sync covers.
    fn sync_for_commit(&self) -> Result<u64> {
        self.check_writable()?;
        // Earlier segments first: docs/format.md#segments-started-ahead-of-their-syncs.
        let mut wal = self.wal_paid_for()?;
        let w = wal.as_mut().ok_or(Error::Closed)?;
        let result = w
            .flush()
            .map(|()| (self.commit().pipeline.written(), w.syncer()));
        // Every value a covered record points to was handed to its blob
        // file before the record: synced first, it is durable before the
        // record. The mark of that sync goes to the WAL before the WAL's
        // sync (docs/format.md#blob-sync-marks).
        let result = match result {
            Ok((covered, Some(syncer))) => {
                drop(wal);
                // A rotation meanwhile took the blob file the covered
                // records point into: its sync is that rotation's debt.
                self.sync_commit_blob()
                    .and_then(|mark| self.hand_mark_to_wal(mark))
                    .and_then(|()| syncer.sync())
                    .and_then(|()| self.pay_rotations())
                    .map(|()| covered)
            }
            Ok((covered, None)) => self
                .sync_commit_blob()
                .and_then(|mark| super::blobs::hand_mark(w, mark))
                .and_then(|()| w.sync())
                .map(|()| covered),
            Err(e) => Err(e),
        };
        self.counters().wal_syncs.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = &result {
            self.poison(e);
        }
        result
    }

    /// Hands `mark` (a blob file's sync) to the WAL, for a syncer that let
    /// the WAL lock go while it synced: it follows whatever writers handed
    /// to the segment meanwhile, and may land in a segment a rotation
    /// started meanwhile (still true there: it says what was synced).
    fn hand_mark_to_wal(&self, mark: Option<crate::wal::BlobSynced>) -> Result<()> {
        let Some(m) = mark else {
            return Ok(());
        };
        match self.commit().wal.lock().as_mut() {
            Some(w) => super::blobs::hand_mark(w, Some(m)),
            None => Ok(()),
        }
    }
}

/// Inserts the operations of `batch`, the first with seqno `first`, into
/// `mem`, where `who` may insert meanwhile; an error if the batch's
/// encoding is malformed (what comes before it is inserted). Each key is
/// shown to the live `floors` too, before the seqnos are published
/// (docs/design.md#the-live-floor-and-ceiling). True when an insert found
/// its skip list full: the flush thread then indexes the memtable's full
/// lists ([`Memtable::freeze`]).
fn insert(
    mem: &Memtable,
    batch: &Batch,
    first: SeqNo,
    who: Inserters,
    floors: &Floors,
) -> Result<bool> {
    let watched = floors.watched();
    let mut rolled = false;
    match batch.only_op() {
        // A single put or delete, inserted without decoding it again.
        Some(op) => {
            if watched {
                floors.wrote(op.keyspace, op.key, op.kind);
            }
            rolled = mem.insert_user(op.keyspace, op.key, first, op.kind, op.value, who);
        }
        None if batch.len() < SORT_FROM => {
            for (seq, op) in (first..).zip(batch.ops()) {
                let op: Op<'_> = op.map_err(Error::InvalidArgument)?;
                if watched {
                    floors.wrote(op.keyspace, op.key, op.kind);
                }
                rolled |= mem.insert_user(op.keyspace, op.key, seq, op.kind, op.value, who);
            }
        }
        None => {
            let (ops, malformed) = in_key_order(batch, first);
            for (_, seq, op) in ops {
                if watched {
                    floors.wrote(op.keyspace, op.key, op.kind);
                }
                rolled |= mem.insert_user(op.keyspace, op.key, seq, op.kind, op.value, who);
            }
            if let Some(e) = malformed {
                return Err(Error::InvalidArgument(e));
            }
        }
    }
    Ok(rolled)
}

/// Batches of at least this many operations are inserted in key order:
/// the skip list then finds each key's place from the one before it (its
/// insertion hint) instead of searching from the top. Redb's bulk load row
/// (one batch of 5 M random keys) spent half its time in those searches.
const SORT_FROM: usize = 64;

/// The operations of `batch`, the first with seqno `first`, in the order
/// of their internal keys (tree key ascending, then the newer first), each
/// with the first 16 bytes of its tree key, which decide nearly every
/// comparison without reading the keys; and the decoding error that ended
/// them early, if the encoding is malformed.
#[allow(clippy::type_complexity)]
fn in_key_order(batch: &Batch, first: SeqNo) -> (Vec<(u128, SeqNo, Op<'_>)>, Option<String>) {
    let mut ops = Vec::with_capacity(batch.len());
    let mut malformed = None;
    for (seq, op) in (first..).zip(batch.ops()) {
        match op {
            Ok(op) => {
                let mut head = [0u8; 16];
                let (ks, rest) = head.split_at_mut(key::KEYSPACE_ID_LEN);
                ks.copy_from_slice(&op.keyspace.to_be_bytes());
                let n = rest.len().min(op.key.len());
                if let (Some(dst), Some(src)) = (rest.get_mut(..n), op.key.get(..n)) {
                    dst.copy_from_slice(src);
                }
                ops.push((u128::from_be_bytes(head), seq, op));
            }
            Err(e) => {
                malformed = Some(e);
                break;
            }
        }
    }
    ops.sort_unstable_by(|(ha, sa, a), (hb, sb, b)| {
        ha.cmp(hb)
            .then_with(|| (a.keyspace, a.key).cmp(&(b.keyspace, b.key)))
            .then_with(|| sb.cmp(sa))
    });
    (ops, malformed)
}

impl Inner {
    /// What [`insert`] into `mem` returned, without its flag: when an
    /// insert found its skip list full and `mem` has had ordered reads, the
    /// flush thread is woken to index the full lists for the next
    /// (`memtable::frozen`), off the writers' path.
    fn index_full_lists(&self, mem: &Memtable, inserted: Result<bool>) -> Result<()> {
        if matches!(inserted, Ok(true)) && mem.wants_freeze() {
            self.wake_background();
        }
        inserted.map(|_| ())
    }

    /// Runs `f` as the commit leader: no writer takes a seqno while it
    /// runs, and every earlier write is in the memtable and published
    /// before it starts.
    pub fn with_leadership<T>(&self, f: impl FnOnce() -> T) -> T {
        let mut q = self.commit().queue.lock();
        while q.leader_active {
            q.waiters += 1;
            self.commit().leader_cv.wait(&mut q);
            q.waiters -= 1;
        }
        q.leader_active = true;
        let last = q.writer_last;
        drop(q);
        self.commit().pipeline.wait_published(last);
        let out = f();
        let mut q = self.commit().queue.lock();
        q.leader_active = false;
        let wake = q.waiters > 0;
        drop(q);
        if wake {
            self.commit().leader_cv.notify_all();
        }
        out
    }
}
