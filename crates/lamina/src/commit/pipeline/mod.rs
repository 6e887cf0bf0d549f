//! The commit pipeline's meeting point: the durability watermark that one
//! syncer advances for every writer it covers, and the in-order publication
//! of seqnos to readers, under one lock so that a writer waits once.
//!
//! A writer holds the commit lock only to take its seqnos and hand its
//! record to the WAL; it then inserts into the memtable with no lock held
//! and *finishes*: it registers its seqnos and waits until they are
//! published. Each record handed to the WAL gets a *ticket*, counting up
//! from 1 since the open; `synced` is the highest ticket whose record is
//! durable. Seqnos are published in the order writers took them, and a
//! `Sync` writer's only once its ticket is synced: so whoever moves the
//! watermark or fills a gap publishes every writer it unblocks, and those
//! writers wake to find themselves done ("already flushed past me"). A
//! `Sync` writer not yet covered, with no sync running, becomes the syncer:
//! it syncs everything handed to the WAL so far for all of them — after
//! gathering, for a fraction of a sync at most, as many records as there
//! were durable writers in the last cycles. Waiting writers sleep on one
//! futex word, the *epoch*: whoever publishes a waiting writer, or leaves
//! one to sync next, raises it once it has let go of the state lock (so
//! that writers arriving meanwhile do not queue behind the wake-up) and
//! wakes them all in one system call; each checks whether it is done and
//! sleeps again if not. Sixteen writers woken one by one cost a syncer a
//! third of its cycle on a 2-vCPU machine (`lamina-bench commit --threads
//! 16`).
//! While measurements say it commits more a second (`commit_wait`), a
//! waiter first yields the CPU in a loop, watching the epoch, for about two
//! syncs, and sleeps only after that.

use super::wait::{CommitWait, Wait};
use crate::error::{Error, Result};
use crate::key::SeqNo;
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The longest a syncer waits for writers it expects, however slow the
/// syncs it measured.
const MAX_GATHER: Duration = Duration::from_micros(500);

/// Raises the published seqno `visible` to `to`, if below it, with a load
/// and a store: no locked instruction.
/// REQUIRES: the pipeline's state lock is held. Every other raise of
/// `visible` happens under it too, or while no writer can publish (at open;
/// an ingest's, under commit leadership once every writer is published; a
/// solo writer's, [`Pipeline::publish_solo`]).
fn raise(visible: &AtomicU64, to: SeqNo) {
    if visible.load(Ordering::Relaxed) < to {
        visible.store(to, Ordering::Release);
    }
}

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
    /// The last seqno of the last writer published. Written under the state
    /// lock, or by a solo writer (see [`Pipeline::idle_after`]); always
    /// after `visible` was raised past it, so that a solo writer, which
    /// raises `visible` without the lock once it sees the cursor at its
    /// queue's last writer, never has its raise undone by an older one.
    cursor: AtomicU64,
    /// The last seqno of the last writer such that it and every writer
    /// before it have inserted into the memtable, published or not (see
    /// [`Pipeline::applied`]). Raised under the state lock.
    applied: AtomicU64,
    /// The last seqno handed to a writer (not an ingest's): `applied`
    /// reaches it once that writer and every one before it have inserted.
    /// Raised under the commit lock.
    last_writer: AtomicU64,
    /// Writers inside a commit that must be synced (from entering it to
    /// returning): how many records a syncer may expect.
    durable_writers: AtomicUsize,
    state: Mutex<State>,
    /// What waiting writers sleep on: raised (and they are woken) whenever
    /// one of them may be done or may sync next (see the module doc).
    epoch: Epoch,
    changed: Condvar,
    /// Wakes a syncer gathering records (see [`State::gather_until`]).
    gathered: Condvar,
    /// How waits went (see [`WaitCounts`]).
    waits: WaitCounts,
    /// Where threads waiting for other writers' inserts sleep
    /// ([`Pipeline::wait_until`]), and how many do. `parking` is a leaf:
    /// wakers take it under the state lock or under none, and a waiter
    /// holds it only to read atomics.
    parking: Mutex<()>,
    moved: Condvar,
    parked: AtomicUsize,
}

/// Rounds a thread spins on a pipeline counter before it sleeps: about
/// two microseconds, what a memtable insert takes. The writer waited for
/// is then usually running; when it is not (more threads than CPUs), the
/// waiter sleeps instead of taking turns on the CPU with every other
/// thread until the scheduler runs that writer.
const SPINS: u32 = 100;

/// The epoch word, on a cache line of its own: yielding waiters read it in
/// a loop, and every commit writes the pipeline's other counters.
#[derive(Default)]
#[repr(align(64))]
struct Epoch(AtomicU32);

/// Waits that began by yielding the CPU (see `commit_wait`), and waits that
/// went to sleep on the epoch, at once or after yielding. On a cache line of
/// their own: every waiter counts itself here while the yielding ones read
/// the epoch in a loop.
#[derive(Default)]
#[repr(align(64))]
struct WaitCounts {
    yielded: AtomicU64,
    slept: AtomicU64,
}

#[derive(Default)]
struct State {
    /// Writers inserted but not yet published, because an earlier one is
    /// still inserting or their record is not yet durable, by the previous
    /// writer's last seqno.
    done: BTreeMap<SeqNo, Waiting>,
    /// A syncer is in its system call.
    syncing: bool,
    /// A sync failed (the database is poisoned): records not durable by
    /// then never will be, and their writers get this error.
    failed: Option<Error>,
    /// Threads waiting on `changed` (not writers: they sleep on the epoch,
    /// all woken by one system call, so that a sync's writers wake together
    /// instead of one after another through the state lock).
    waiters: usize,
    /// While a syncer gathers: the ticket that ends its wait (0 otherwise).
    gather_until: u64,
    /// The most durable writers seen at once since the last sync started.
    writers_seen: usize,
    /// Of the previous cycle.
    writers_seen_before: usize,
    /// A moving average of a sync's duration, in nanoseconds.
    sync_nanos: u64,
    /// How long a syncer gathers, if not half a sync, at most
    /// [`MAX_GATHER`] (tests).
    gather_limit: Option<Duration>,
    /// How waiters wait: asleep, or yielding first (see `commit_wait`).
    wait: CommitWait,
}

impl Pipeline {
    /// Takes the next ticket for a record just handed to the WAL, and counts
    /// its writer as inserting. REQUIRES: the WAL lock is held, so tickets
    /// follow the order of the records in the WAL.
    pub fn handed_to_wal(&self) -> u64 {
        self.inserting.fetch_add(1, Ordering::AcqRel);
        // Only here, under the WAL lock: no locked instruction needed.
        let ticket = self.written.load(Ordering::Relaxed) + 1;
        self.written.store(ticket, Ordering::Release);
        ticket
    }

    /// The last seqno published.
    fn cursor(&self) -> SeqNo {
        self.cursor.load(Ordering::Acquire)
    }

    /// Whether the pipeline is idle for the holder of the commit lock whose
    /// queue's last writer took seqno `writer_last`: every writer is
    /// published, so none is inserting, waiting for a sync or in `done`,
    /// and none can come while the lock is held. Such a *solo* writer may
    /// then insert under the commit lock without [`Pipeline::handed_to_wal`]
    /// counting it as inserting (no rotation can start meanwhile), and
    /// publish with [`Pipeline::publish_solo`] instead of the state lock.
    pub fn idle_after(&self, writer_last: SeqNo) -> bool {
        self.cursor() == writer_last
    }

    /// Takes the next ticket for a solo writer's record (see
    /// [`Pipeline::idle_after`]). REQUIRES: the WAL lock is held.
    pub fn handed_to_wal_solo(&self) -> u64 {
        let ticket = self.written.load(Ordering::Relaxed) + 1;
        self.written.store(ticket, Ordering::Release);
        ticket
    }

    /// Publishes a solo writer's seqnos up to `last` (see
    /// [`Pipeline::idle_after`]): nobody else moves the cursor or raises
    /// `visible` meanwhile, and no writer waits on them (a waiter for
    /// publication holds commit leadership), so no lock is needed; only a
    /// transaction beginning ([`Pipeline::settled`]) may be woken. REQUIRES: the commit lock is held, and the pipeline
    /// was idle when this writer took its seqnos.
    pub fn publish_solo(&self, visible: &AtomicU64, last: SeqNo) {
        self.cursor.store(last, Ordering::Release);
        if visible.load(Ordering::Relaxed) < last {
            visible.store(last, Ordering::Release);
        }
        self.wake_parked();
    }

    /// A writer whose commit must be synced enters; it leaves when the guard
    /// drops (it has returned or failed).
    pub fn durable_writer(&self) -> DurableWriter<'_> {
        self.durable_writers.fetch_add(1, Ordering::AcqRel);
        DurableWriter(self)
    }

    /// The writer has finished its memtable insert.
    pub fn inserted(&self) {
        if self.inserting.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.wake_parked();
        }
    }

    /// Waits until no writer is between the WAL and the memtable.
    /// REQUIRES: no writer can hand a record to the WAL meanwhile (the
    /// caller holds the commit lock or commit leadership).
    pub fn wait_for_inserts(&self) {
        self.wait_until(|| self.inserting.load(Ordering::Acquire) == 0);
    }

    /// Waits until `done()`, which another writer's insert or publication
    /// makes true ([`Pipeline::wake_parked`]): spinning for [`SPINS`]
    /// rounds, then asleep.
    fn wait_until(&self, done: impl Fn() -> bool) {
        for _ in 0..SPINS {
            if done() {
                return;
            }
            std::hint::spin_loop();
        }
        let mut g = self.parking.lock();
        self.parked.fetch_add(1, Ordering::SeqCst);
        while !done() {
            self.moved.wait(&mut g);
        }
        self.parked.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes the threads [`Pipeline::wait_until`] put to sleep, after a
    /// change of what they wait for. The fence orders that change before
    /// the count of sleepers is read: a waiter that counted itself after
    /// this read sees the change when it checks, under `parking`, before
    /// it sleeps.
    #[inline]
    fn wake_parked(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.parked.load(Ordering::Relaxed) > 0 {
            drop(self.parking.lock());
            self.moved.notify_all();
        }
    }

    /// The ticket of the last record handed to the WAL. Read under the WAL
    /// lock, it names what a sync started now covers; without it (the
    /// syncer gathering), only how many records have been handed so far.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// Every record up to `ticket` is durable (a sync outside the
    /// pipeline: a segment closed, `Db::sync`); writers it covers publish.
    pub fn synced_to(&self, ticket: u64, visible: &AtomicU64) {
        self.synced.fetch_max(ticket, Ordering::AcqRel);
        let mut s = self.state.lock();
        let mut wakes = Wakes::default();
        self.advance(&mut s, visible, &mut wakes);
        if s.waiters > 0 {
            self.changed.notify_all();
        }
        drop(s);
        self.wake_all(&mut wakes);
    }

    /// Publishes seqnos `prev + 1 ..= last` (inserted into the memtable) to
    /// readers through `visible`, in the order writers took them: `prev` is
    /// the last seqno the previous writer took (0 for the first writer since
    /// the open; seqnos between `prev` and this writer's first were taken
    /// by an ingest, which publishes its own). With a `ticket` (not 0) the
    /// seqnos are published only once that record is durable; if it is not
    /// yet and no sync is running, this thread runs `sync` (which makes
    /// every record handed to the WAL before it started durable and
    /// returns the ticket it covers). Returns once the seqnos are
    /// published: `Ok` if the record is durable, else the error of the
    /// sync that failed (the seqnos are published all the same, so later
    /// writers do not wait forever; the database is poisoned and no later
    /// write is acknowledged).
    pub fn finish(
        &self,
        visible: &AtomicU64,
        prev: SeqNo,
        last: SeqNo,
        ticket: u64,
        sync: impl Fn() -> Result<u64>,
    ) -> Result<()> {
        let mut s = self.state.lock();
        self.enter(&mut s, visible, prev, last, ticket);
        let mut wakes = Wakes::default();
        loop {
            self.advance(&mut s, visible, &mut wakes);
            let synced = self.synced.load(Ordering::Acquire);
            if self.cursor() >= last {
                let result = match &s.failed {
                    Some(e) if synced < ticket => Err(e.clone()),
                    _ => Ok(()),
                };
                drop(s);
                self.wake_all(&mut wakes);
                return result;
            }
            if ticket > synced && !s.syncing && s.failed.is_none() {
                s = self.sync_for_all(s, &mut wakes, &sync);
                continue;
            }
            // The epoch as of now, under the lock: whatever publishes this
            // writer, or leaves it to sync next, happens under the lock
            // after this and raises the epoch after that.
            let seen = self.epoch.0.load(Ordering::Acquire);
            if let Some(w) = s.done.get_mut(&prev) {
                w.asleep = true;
            }
            let yielding = s.wait.yield_for(s.sync_nanos);
            drop(s);
            self.wake_all(&mut wakes);
            self.await_epoch(seen, yielding);
            // Woken for any writer, or for none: only `visible` past `last`
            // says this one is published. Anything else sends the writer
            // round the loop under the lock again.
            if visible.load(Ordering::Acquire) >= last {
                if ticket <= self.synced.load(Ordering::Acquire) {
                    return Ok(());
                }
                // Published uncovered: only after a failed sync.
                return match &self.state.lock().failed {
                    Some(e) => Err(e.clone()),
                    None => Ok(()),
                };
            }
            s = self.state.lock();
        }
    }

    /// The last seqno of a writer such that it and every writer before it
    /// have inserted into the memtable: at least the last one published,
    /// and beyond it over inserted writers still waiting for a sync (or
    /// for an earlier writer). Whatever they inserted happens before this
    /// returns their seqnos.
    pub fn applied(&self) -> SeqNo {
        let applied = self.applied.load(Ordering::Acquire);
        applied.max(self.cursor())
    }

    /// A writer took seqnos up to `last`. REQUIRES: the commit lock is
    /// held.
    pub fn took(&self, last: SeqNo) {
        self.last_writer.store(last, Ordering::Release);
    }

    /// Waits until every writer that has taken seqnos has inserted, and
    /// returns [`Pipeline::applied`] then: a writer between its seqnos and
    /// the memtable is waited for (it has no lock to wait on and no sync:
    /// microseconds, unless it is descheduled), rather than read past.
    pub fn settled(&self) -> SeqNo {
        let target = self.last_writer.load(Ordering::Acquire);
        self.wait_until(|| self.applied() >= target);
        self.applied()
    }

    /// Raises `applied` over the writers in `done` that follow it without a
    /// gap. REQUIRES: the state lock is held (`s`).
    fn raise_applied(&self, s: &State) {
        let mut applied = self.applied();
        while let Some(w) = s.done.get(&applied) {
            applied = w.last;
        }
        self.applied.store(applied, Ordering::Release);
        self.wake_parked();
    }

    /// Takes in the writer of seqnos `prev + 1 ..= last` (record `ticket`,
    /// 0 for none to sync): published at once if it is next in line and
    /// durable enough, else left in `done` for whoever publishes it.
    fn enter(&self, s: &mut State, visible: &AtomicU64, prev: SeqNo, last: SeqNo, ticket: u64) {
        if ticket != 0 {
            s.writers_seen = s
                .writers_seen
                .max(self.durable_writers.load(Ordering::Acquire));
            if s.gather_until != 0 && self.written() >= s.gather_until {
                self.gathered.notify_one();
            }
        }
        if self.cursor() == prev && ticket <= self.synced.load(Ordering::Acquire) {
            // Next in line and durable enough: published here, without going
            // through `done`; `advance` publishes any writer that was
            // waiting behind it. `visible` first: a solo writer that sees
            // the cursor here raises `visible` after this raise, never
            // before it.
            raise(visible, last);
            self.cursor.store(last, Ordering::Release);
            self.wake_parked();
            if s.waiters > 0 {
                self.changed.notify_all();
            }
        } else {
            s.done.insert(
                prev,
                Waiting {
                    last,
                    ticket,
                    asleep: false,
                },
            );
        }
        self.raise_applied(s);
    }

    /// Becomes the syncer: gathers the writers expected, runs `sync` with
    /// the state lock released, and records what it covered (or its
    /// failure) and how long it took. Returns the state lock, taken again.
    fn sync_for_all<'a>(
        &'a self,
        mut s: MutexGuard<'a, State>,
        wakes: &mut Wakes,
        sync: &impl Fn() -> Result<u64>,
    ) -> MutexGuard<'a, State> {
        s.syncing = true;
        // Rare here (a syncer publishes on its way out): woken under the
        // lock, before gathering the writers they may be.
        self.wake_all(wakes);
        self.gather(&mut s);
        drop(s);
        let before = self.synced.load(Ordering::Acquire);
        let started = Instant::now();
        let result = sync();
        let ended = Instant::now();
        let took = ended
            .duration_since(started)
            .as_nanos()
            .min(u64::MAX as u128) as u64;
        if let Ok(covered) = &result {
            self.synced.fetch_max(*covered, Ordering::AcqRel);
        }
        let mut s = self.state.lock();
        if let Ok(covered) = &result {
            // The records this sync made durable.
            s.wait.synced(covered.saturating_sub(before), ended);
        }
        s.syncing = false;
        s.sync_nanos = if s.sync_nanos == 0 {
            took
        } else {
            (s.sync_nanos * 7 + took) / 8
        };
        if let Err(e) = result {
            s.failed = Some(e);
        }
        s
    }

    /// Before a sync: waits, for a fraction of a sync at most, until as many
    /// records are waiting to be synced as there were writers needing a
    /// sync in the last cycle. Writers released by the last sync come back
    /// while the disk would otherwise start a sync without them; a lone
    /// writer never waits. While waiters yield the CPU (`commit_wait`), so
    /// does the syncer, watching the records come: asleep on the condition
    /// variable, the last record's wake-up reached it 16 µs after the
    /// record, a tenth of a sixteen-writer cycle (`lamina-bench commit
    /// --threads 16`).
    fn gather(&self, s: &mut parking_lot::MutexGuard<'_, State>) {
        let expected = s.writers_seen.max(s.writers_seen_before);
        s.writers_seen_before = s.writers_seen;
        s.writers_seen = 0;
        if expected <= 1 || s.sync_nanos == 0 {
            return;
        }
        let target = self.synced.load(Ordering::Acquire) + expected as u64;
        let window = s
            .gather_limit
            .unwrap_or_else(|| Duration::from_nanos(s.sync_nanos / 2).min(MAX_GATHER));
        let deadline = Instant::now() + window;
        s.gather_until = target;
        if s.wait.wait(s.sync_nanos) == Wait::Yield {
            parking_lot::MutexGuard::unlocked(s, || {
                while self.written() < target && Instant::now() < deadline {
                    std::thread::yield_now();
                }
            });
        } else {
            while self.written() < target && s.failed.is_none() {
                if self.gathered.wait_until(s, deadline).timed_out() {
                    break;
                }
            }
        }
        s.gather_until = 0;
    }

    /// [`Pipeline::finish`] for a record that need not be synced first.
    pub fn publish(&self, visible: &AtomicU64, prev: SeqNo, last: SeqNo) {
        // With ticket 0 `sync` is never called and no error returned.
        let _ = self.finish(visible, prev, last, 0, || Ok(0));
    }

    /// Moves the cursor over every registered writer that may be published
    /// now (in order, durable if it must be), makes them visible and adds
    /// them to `wakes`; with no sync running, adds one writer still waiting
    /// for one to sync next. The caller wakes them once it lets go of the
    /// state lock.
    fn advance(&self, s: &mut State, visible: &AtomicU64, wakes: &mut Wakes) {
        let synced = self.synced.load(Ordering::Acquire);
        let start = self.cursor();
        let mut cursor = start;
        while let Some(w) = s.done.get(&cursor) {
            if w.ticket > synced && s.failed.is_none() {
                break;
            }
            let w = s.done.remove(&cursor).expect("just found");
            cursor = w.last;
            // Woken once the state lock is let go, after `visible` is
            // raised below.
            wakes.any |= w.asleep;
        }
        if cursor != start {
            // `visible` before the cursor, as in `finish`.
            raise(visible, cursor);
            self.cursor.store(cursor, Ordering::Release);
            self.wake_parked();
            if s.waiters > 0 {
                self.changed.notify_all();
            }
        }
        if !s.syncing && s.failed.is_none() {
            // A writer still waiting for a sync, with none running: woken
            // (with the others asleep) to sync next.
            let next = s.done.values().find(|w| w.ticket > synced);
            wakes.any |= next.is_some_and(|w| w.asleep);
        }
    }

    /// Returns once the epoch is no longer `seen` (or on a spurious
    /// wake-up): yielding the CPU in a loop for up to `yielding`, then
    /// asleep. A yielding writer counts as asleep for its wakers (it is
    /// marked so), so that one whose loop ends just before the epoch moves
    /// is still woken.
    fn await_epoch(&self, seen: u32, yielding: Duration) {
        if !yielding.is_zero() {
            self.waits.yielded.fetch_add(1, Ordering::Relaxed);
            let start = Instant::now();
            while self.epoch.0.load(Ordering::Acquire) == seen {
                if start.elapsed() >= yielding {
                    break;
                }
                std::thread::yield_now();
            }
        }
        if self.epoch.0.load(Ordering::Acquire) == seen {
            self.waits.slept.fetch_add(1, Ordering::Relaxed);
            atomic_wait::wait(&self.epoch.0, seen);
        }
    }

    /// Raises the epoch and wakes every writer asleep on it, if `wakes`
    /// says any should wake; best called with the state lock let go.
    fn wake_all(&self, wakes: &mut Wakes) {
        if std::mem::take(&mut wakes.any) {
            self.epoch.0.fetch_add(1, Ordering::AcqRel);
            atomic_wait::wake_all(&self.epoch.0);
        }
    }

    /// Waits for a sync or for earlier writers since the open: how many
    /// began by yielding the CPU, and how many slept (at once or after
    /// yielding).
    pub fn waits(&self) -> (u64, u64) {
        (
            self.waits.yielded.load(Ordering::Relaxed),
            self.waits.slept.load(Ordering::Relaxed),
        )
    }

    /// Waits until every writer up to the one that took seqno `last` has
    /// published. REQUIRES: `last` is a writer's last seqno, and no writer
    /// takes a seqno meanwhile (commit leadership is held) or `last` is at
    /// most [`Pipeline::applied`] (that writer has entered, so the cursor
    /// reaches `last` under the state lock, never by a solo writer).
    pub fn wait_published(&self, last: SeqNo) {
        let mut s = self.state.lock();
        s.waiters += 1;
        while self.cursor() < last {
            self.changed.wait(&mut s);
        }
        s.waiters -= 1;
    }
}

/// A writer in [`State::done`].
struct Waiting {
    /// The last seqno it took.
    last: SeqNo,
    /// The ticket that must be synced before it is published (0: none).
    ticket: u64,
    /// Set when it went to sleep on the epoch.
    asleep: bool,
}

/// Whether writers asleep on the epoch are to be woken once the state lock
/// is let go ([`Pipeline::wake_all`]).
#[derive(Default)]
struct Wakes {
    any: bool,
}

/// A durable writer's presence (see [`Pipeline::durable_writer`]).
pub(crate) struct DurableWriter<'a>(&'a Pipeline);

impl Drop for DurableWriter<'_> {
    fn drop(&mut self) {
        self.0.durable_writers.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests;
