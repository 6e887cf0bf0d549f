//! The commit pipeline's meeting points: the durability watermark that one
//! syncer advances for every writer it covers, and the in-order publication
//! of seqnos to readers.
//!
//! A writer holds the commit lock only to take its seqnos and hand its
//! record to the WAL; it then inserts into the memtable with no lock held,
//! waits (for `Sync`) until a sync covers its record, and publishes. Each
//! record handed to the WAL gets a *ticket*, counting up from 1 since the
//! open; `synced` is the highest ticket whose record is durable. A writer
//! whose ticket is at most `synced` returns without a system call
//! ("already flushed past me"); otherwise one of the waiting writers
//! becomes the syncer, syncs everything handed to the WAL so far, and
//! raises `synced` for all of them.

use crate::error::Result;
use crate::key::SeqNo;
use parking_lot::{Condvar, Mutex};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// See the module doc. Shared by every writer of one database.
#[derive(Default)]
pub(crate) struct Pipeline {
    /// Tickets handed out: records handed to the WAL. Raised under the WAL lock.
    written: AtomicU64,
    /// Every record up to this ticket is durable.
    synced: AtomicU64,
    /// Writers between handing their record to the WAL and finishing their
    /// memtable insert; a memtable is sealed only when none is left.
    inserting: AtomicUsize,
    sync: Mutex<SyncState>,
    sync_cv: Condvar,
    publish: Mutex<PublishState>,
    publish_cv: Condvar,
}

#[derive(Default)]
struct SyncState {
    /// A syncer is in its system call.
    running: bool,
    /// Writers waiting on `sync_cv`.
    waiters: usize,
}

#[derive(Default)]
struct PublishState {
    /// The last seqno of the last writer published.
    cursor: SeqNo,
    /// Writers inserted but not yet published, because an earlier one is
    /// still inserting: the previous writer's last seqno → their last.
    done: BTreeMap<SeqNo, SeqNo>,
    /// Writers waiting on `publish_cv`.
    waiters: usize,
}

impl Pipeline {
    /// Takes the next ticket for a record just handed to the WAL, and counts
    /// its writer as inserting. REQUIRES: the WAL lock is held, so tickets
    /// follow the order of the records in the WAL.
    pub fn handed_to_wal(&self) -> u64 {
        self.inserting.fetch_add(1, Ordering::AcqRel);
        self.written.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// The writer has finished its memtable insert.
    pub fn inserted(&self) {
        self.inserting.fetch_sub(1, Ordering::AcqRel);
    }

    /// Waits until no writer is between the WAL and the memtable.
    /// REQUIRES: no writer can hand a record to the WAL meanwhile (the
    /// caller holds the commit lock or commit leadership).
    pub fn wait_for_inserts(&self) {
        while self.inserting.load(Ordering::Acquire) > 0 {
            std::thread::yield_now();
        }
    }

    /// The ticket of the last record handed to the WAL. REQUIRES: the WAL
    /// lock is held (so that it names what a sync started now covers).
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// Every record up to `ticket` is durable.
    pub fn synced_to(&self, ticket: u64) {
        self.synced.fetch_max(ticket, Ordering::AcqRel);
    }

    /// Returns once the record of `ticket` is durable. If it is not yet and
    /// no sync is running, this thread runs `sync` (which makes every record
    /// handed to the WAL before it started durable and returns the ticket it
    /// covers); otherwise it waits for the running sync and checks again.
    /// An error of `sync` is returned to the thread that ran it; the others
    /// try again (and `sync` then refuses, the database being poisoned).
    pub fn wait_durable(&self, ticket: u64, sync: impl Fn() -> Result<u64>) -> Result<()> {
        if self.synced.load(Ordering::Acquire) >= ticket {
            return Ok(());
        }
        let mut s = self.sync.lock();
        loop {
            if self.synced.load(Ordering::Acquire) >= ticket {
                return Ok(());
            }
            if !s.running {
                s.running = true;
                drop(s);
                let result = sync();
                if let Ok(covered) = result {
                    self.synced_to(covered);
                }
                s = self.sync.lock();
                s.running = false;
                if s.waiters > 0 {
                    self.sync_cv.notify_all();
                }
                result?;
                continue;
            }
            s.waiters += 1;
            self.sync_cv.wait(&mut s);
            s.waiters -= 1;
        }
    }

    /// Publishes seqnos up to `last` (inserted into the memtable) to
    /// readers through `visible`, in the order writers took them: `prev` is
    /// the last seqno the previous writer took (0 for the first writer since
    /// the open; seqnos between `prev` and this writer's first were taken
    /// by an ingest, which publishes its own). Returns once this writer's
    /// seqnos are published. If the previous writer has not published yet,
    /// the range is left for it to publish and this thread waits.
    pub fn publish(&self, visible: &AtomicU64, prev: SeqNo, last: SeqNo) {
        let mut p = self.publish.lock();
        if p.cursor == prev {
            p.cursor = last;
            let p = &mut *p;
            while let Some(next) = p.done.remove(&p.cursor) {
                p.cursor = next;
            }
            visible.fetch_max(p.cursor, Ordering::AcqRel);
            if p.waiters > 0 {
                self.publish_cv.notify_all();
            }
            return;
        }
        p.done.insert(prev, last);
        p.waiters += 1;
        while p.cursor < last {
            self.publish_cv.wait(&mut p);
        }
        p.waiters -= 1;
    }

    /// Waits until every writer up to the one that took seqno `last` has
    /// published. REQUIRES: no writer takes a seqno meanwhile (commit
    /// leadership is held).
    pub fn wait_published(&self, last: SeqNo) {
        let mut p = self.publish.lock();
        p.waiters += 1;
        while p.cursor < last {
            self.publish_cv.wait(&mut p);
        }
        p.waiters -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_covered_ticket_needs_no_sync() {
        let p = Pipeline::default();
        let t1 = p.handed_to_wal();
        let t2 = p.handed_to_wal();
        let calls = AtomicU64::new(0);
        let sync = || {
            calls.fetch_add(1, Ordering::Relaxed);
            Ok(2)
        };
        p.wait_durable(t1, sync).unwrap();
        p.wait_durable(t2, sync).unwrap();
        assert_eq!(
            calls.load(Ordering::Relaxed),
            1,
            "the second record rode on the first sync"
        );
    }

    #[test]
    fn a_failed_sync_is_returned_and_the_next_writer_tries_again() {
        let p = Pipeline::default();
        let t = p.handed_to_wal();
        let err = p.wait_durable(t, || Err(crate::Error::Closed));
        assert!(matches!(err, Err(crate::Error::Closed)), "{err:?}");
        p.wait_durable(t, || Ok(1)).unwrap();
    }

    #[test]
    fn ranges_are_published_in_seqno_order() {
        let p = Arc::new(Pipeline::default());
        let visible = Arc::new(AtomicU64::new(0));
        // 3..=4 finishes first and must wait for 1..=2.
        let late = {
            let (p, visible) = (Arc::clone(&p), Arc::clone(&visible));
            std::thread::spawn(move || p.publish(&visible, 2, 4))
        };
        while p.publish.lock().waiters == 0 {
            std::thread::yield_now();
        }
        assert_eq!(
            visible.load(Ordering::Acquire),
            0,
            "3..=4 is not visible before 1..=2"
        );
        p.publish(&visible, 0, 2);
        late.join().unwrap();
        assert_eq!(visible.load(Ordering::Acquire), 4);
        assert!(p.publish.lock().done.is_empty());
    }

    /// Before the fix, a writer published only once `visible` reached its
    /// first seqno minus one: seqnos an ingest reserved between two writers
    /// (published by the ingest's install, under commit leadership, which
    /// waited for that writer) left the writer and the ingest waiting for
    /// each other (found by the model tests).
    #[test]
    fn seqnos_taken_by_an_ingest_between_writers_do_not_stall_them() {
        let p = Pipeline::default();
        let visible = AtomicU64::new(0);
        p.publish(&visible, 0, 10);
        // 11..=15 reserved by an ingest, not yet installed.
        p.publish(&visible, 10, 16);
        assert_eq!(visible.load(Ordering::Acquire), 16);
        p.wait_published(16);
    }

    #[test]
    fn many_writers_share_syncs_and_publish_everything() {
        let p = Arc::new(Pipeline::default());
        let syncs = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (p, syncs) = (Arc::clone(&p), Arc::clone(&syncs));
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        let t = p.handed_to_wal();
                        p.inserted();
                        p.wait_durable(t, || {
                            syncs.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(std::time::Duration::from_micros(200));
                            Ok(p.written())
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(p.synced.load(Ordering::Acquire), 1600);
        assert!(
            syncs.load(Ordering::Relaxed) < 1600,
            "some records shared a sync"
        );
        p.wait_for_inserts();
    }
}
