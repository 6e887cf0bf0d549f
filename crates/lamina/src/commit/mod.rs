//! The commit subsystem: everything between a write call and a durable,
//! visible write. Writers queue and take seqnos (`write`), make room in the
//! memtable (`room`), hand their records to the WAL segment (`segments`) and
//! their large values to the memtable's blob file (`blobs`), wait for the
//! sync that covers them (`pipeline`, `wait`), and publish in seqno order;
//! a full memtable is swapped for a fresh one and a fresh segment
//! (`rotation`).

mod blobs;
mod one_op;
mod pipeline;
mod room;
mod rotation;
mod segments;
mod wait;
mod write;

pub(crate) use blobs::{hand_mark, ReplayedBlobs, ReplayedValues};
pub(crate) use pipeline::Pipeline;
pub(crate) use rotation::Debts;
pub(crate) use segments::SegmentFor;
pub(crate) use write::CommitQueue;

use crate::blob::BlobWriter;
use crate::key::SeqNo;
use crate::wal::LogWriter;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};

/// How long a transaction's begin waits for a commit holding the commit
/// lock ([`Commit::settled_seqno`]).
const BEGIN_PATIENCE: std::time::Duration = std::time::Duration::from_millis(1);

/// The commit subsystem's state; its locks are reachable only through the
/// methods of this folder.
pub(crate) struct Commit {
    /// Writers waiting to commit; the first is the leader.
    queue: Mutex<CommitQueue>,
    /// Signalled when commit leadership ends.
    leader_cv: Condvar,
    /// Tickets, the durability watermark and in-order publication.
    pipeline: Pipeline,
    /// The WAL segment being written; only the commit leader, `sync` and
    /// rotation touch it.
    wal: Mutex<Option<LogWriter>>,
    /// Retired WAL segments (below the log number) kept to be reused.
    reusable_wals: Mutex<Vec<u64>>,
    /// The syncs memtable rotations owe, paid later (`rotation`).
    debts: Debts,
    /// The blob file of the active memtable, holding the values its commits
    /// separated (`blobs`); created by the first one. Taken under the commit
    /// queue, never while waiting for the WAL lock.
    blob: Mutex<Option<BlobWriter>>,
    /// Highest seqno whose write is visible to readers.
    visible_seqno: AtomicU64,
}

impl Commit {
    /// The subsystem of a database whose last seqno is `last_seqno`, with no
    /// WAL segment open yet.
    pub(crate) fn new(last_seqno: SeqNo) -> Commit {
        Commit {
            queue: Mutex::new(CommitQueue::new(last_seqno)),
            leader_cv: Condvar::new(),
            pipeline: Pipeline::default(),
            wal: Mutex::new(None),
            reusable_wals: Mutex::new(Vec::new()),
            debts: Debts::default(),
            blob: Mutex::new(None),
            visible_seqno: AtomicU64::new(last_seqno),
        }
    }

    /// The highest seqno whose write is visible to readers.
    #[inline]
    pub(crate) fn visible_seqno(&self) -> SeqNo {
        self.visible_seqno.load(Ordering::Acquire)
    }

    /// The highest seqno up to which every write is in the memtable and has
    /// its place in the commit order: the visible seqno, or beyond it
    /// writes inserted and waiting for the sync that makes them durable.
    /// A transaction reads as of here (docs/design.md#transactions); its
    /// commit is ordered after these writes, so it returns only once they
    /// are durable too. Every write it covers is in a view loaded after it.
    pub(crate) fn applied_seqno(&self) -> SeqNo {
        let visible = self.visible_seqno();
        visible.max(self.pipeline.applied())
    }

    /// The seqno a read as of `seqno` reads at (default: the visible one),
    /// at most the applied one. Read before the view: every write it
    /// covers is in a view loaded after.
    #[inline]
    pub(crate) fn read_seqno(&self, seqno: Option<SeqNo>) -> SeqNo {
        let visible = self.visible_seqno();
        match seqno {
            None => visible,
            Some(s) if s <= visible => s,
            Some(s) => s.min(self.pipeline.applied()),
        }
    }

    /// [`Commit::applied_seqno`] once a commit holding the commit lock has
    /// taken its seqnos and every writer that has taken seqnos has inserted:
    /// what a transaction begins at. Call it before taking a lock readers
    /// wait on (it may wait for a writer's insert).
    ///
    /// A commit in the lock (a transaction's validation, a record handed to
    /// the WAL) is about to take seqnos: a transaction beginning before them
    /// would conflict with it on any key both touch. Waiting for it cut the
    /// conflicts of TPC-B at 16 threads from 0.28 to 0.10 a transaction and
    /// raised its rate from 23,500 to 29,800 a second (`lamina-bench tpcb
    /// --threads 16`; waiting at most 0.1 ms: 0.12 and 24,000). Not for
    /// longer than [`BEGIN_PATIENCE`]: a writer waiting for room holds the
    /// lock as long as a flush takes.
    pub(crate) fn settled_seqno(&self) -> SeqNo {
        drop(self.queue.try_lock_for(BEGIN_PATIENCE));
        self.pipeline.settled();
        self.applied_seqno()
    }

    /// Waits until every write up to `seqno` (at most
    /// [`Commit::applied_seqno`]) is visible: durable as its writer asked.
    pub(crate) fn wait_visible(&self, seqno: SeqNo) {
        if self.visible_seqno() < seqno {
            self.pipeline.wait_published(seqno);
        }
    }

    /// Sets the last seqno handed out (recovery and a reader's refresh,
    /// before any commit; lock order: the commit queue).
    pub(crate) fn set_last_seqno(&self, seqno: SeqNo) {
        self.queue.lock().last_seqno = seqno;
    }

    /// The last seqno handed out (to a writer or an ingest), read under the
    /// commit queue; `None` if another thread keeps the queue longer than
    /// `patience` (a writer waiting for room). Every seqno handed out after
    /// this returns is taken under the queue after this call released it:
    /// whatever the caller did before the call happens before that writer
    /// goes on (the install of a live floor or ceiling, `read::floor`).
    pub(crate) fn last_assigned(&self, patience: std::time::Duration) -> Option<SeqNo> {
        self.queue.try_lock_for(patience).map(|q| q.last_seqno)
    }

    /// Makes every seqno up to `seqno` visible to readers.
    pub(crate) fn set_visible(&self, seqno: SeqNo) {
        self.visible_seqno.fetch_max(seqno, Ordering::AcqRel);
    }

    /// Hands out `count` seqnos at once, for an ingest that writes them
    /// into its tables; returns the first. They become visible with
    /// [`Commit::set_visible`] once the tables are installed.
    pub(crate) fn take_seqnos(&self, count: u64) -> SeqNo {
        let mut q = self.queue.lock();
        let first = q.last_seqno + 1;
        q.last_seqno += count;
        first
    }

    /// Starts writing into WAL segment `w` (at open).
    pub(crate) fn start_wal(&self, w: LogWriter) {
        *self.wal.lock() = Some(w);
    }

    /// Lets go of a room the queue kept in the memtable `mem` (flushed,
    /// never written again), so that `mem` is freed with its last reader.
    /// Only if the queue is free: a writer may hold it while it waits for
    /// the flush, and drops a stale room itself.
    pub(crate) fn forget_room_in(&self, mem: &std::sync::Arc<crate::memtable::Memtable>) {
        if let Some(mut q) = self.queue.try_lock() {
            if q.room.as_ref().is_some_and(|r| r.is_in(mem)) {
                q.room = None;
            }
        }
    }

    /// How many sync waits slept and how many yielded (for `Stats`).
    pub(crate) fn waits(&self) -> (u64, u64) {
        self.pipeline.waits()
    }

    /// Closes the active memtable's blob file without sealing it, for
    /// `close` (synced by then; recovery seals it as it seals one a crash
    /// left open).
    pub(crate) fn let_go_of_blob(&self) {
        drop(self.blob.lock().take());
    }

    /// Wakes writers waiting for commit leadership (at close).
    pub(crate) fn wake_waiters(&self) {
        self.leader_cv.notify_all();
    }
}
