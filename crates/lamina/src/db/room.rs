//! Making room for a write: the memtable it goes into, switched when full,
//! and the pace the writer keeps while flushes and compactions are behind.
//! The policy is `compaction::pacing`; this is the waiting.

use super::stats::cause_index;
use super::Inner;
use crate::cache::Charge;
use crate::compaction::pacing::{self, Pace};
use crate::error::{Error, Result};
use crate::memtable::Memtable;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most memtables waiting for flush before writers wait.
const MAX_IMMUTABLE: usize = 2;
/// Paced writers sleep once the delay they owe reaches this.
const MIN_SLEEP: Duration = Duration::from_millis(1);

impl Inner {
    /// Returns the memtable to write into, switching to a new one (and a new
    /// WAL segment) when it is full, and pacing the writer by how far
    /// flushes and compactions are behind (`compaction::pacing`): a delay
    /// that grows smoothly with the debt, a stop only at a hard limit.
    pub(super) fn make_room(&self, incoming: usize) -> Result<Arc<Memtable>> {
        let mut paced = false;
        loop {
            let mut st = self.state.lock();
            let (full, pace) = self.room(&st, incoming)?;
            match pace {
                Pace::Stop(cause) => {
                    self.wait_for_background(&mut st, cause);
                    continue;
                }
                Pace::Delay(wait, cause) if !paced => {
                    paced = true;
                    if let Some(owed) = self.owe_delay(wait) {
                        drop(st);
                        std::thread::sleep(owed);
                        let us = owed.as_micros() as u64;
                        let c = &self.counters;
                        c.write_delay_micros.fetch_add(us, Ordering::Relaxed);
                        if let Some(a) = c.write_delay_micros_by_cause.get(cause_index(cause)) {
                            a.fetch_add(us, Ordering::Relaxed);
                        }
                        continue;
                    }
                }
                _ => {}
            }
            if !full {
                return Ok(self.charged(&st));
            }
            if st.imm.len() >= MAX_IMMUTABLE {
                self.wait_for_background(&mut st, pacing::Cause::Memtables);
                continue;
            }
            drop(st);
            self.rotate_memtable()?;
        }
    }

    /// The memtable to write into if the write needs no waiting: the
    /// active memtable has room and no stop or delay is due (see
    /// [`Inner::try_write`]); `None` otherwise.
    pub(super) fn room_now(&self, incoming: usize) -> Result<Option<Arc<Memtable>>> {
        let Some(st) = self.state.try_lock() else {
            return Ok(None);
        };
        let (full, pace) = self.room(&st, incoming)?;
        Ok((!full && matches!(pace, Pace::Go)).then(|| self.charged(&st)))
    }

    /// Whether the active memtable is full, and the pace a write of
    /// `incoming` bytes keeps; an error once the database is poisoned or
    /// closing.
    fn room(&self, st: &super::State, incoming: usize) -> Result<(bool, Pace)> {
        self.check_unpoisoned()?;
        if st.shutting_down {
            return Err(Error::Closed);
        }
        let limits = pacing::Limits::new(
            self.opts.l0_slowdown_trigger,
            self.opts.l0_stop_trigger,
            self.levels.base,
            MAX_IMMUTABLE,
        );
        let active = st.mem.approximate_size() as usize;
        // A memtable's blob file holds at most `memtable_size` of values,
        // which bounds a blob file, what recovery reads to check the
        // pointers it replays, and what garbage collection rewrites at once
        // (docs/design.md#blob-files).
        let full = active.max(st.mem.blob_bytes() as usize) >= self.opts.memtable_size;
        let debt = pacing::Debt {
            l0_tables: st.version.level(0).len(),
            pending_bytes: self
                .counters
                .pending_compaction_bytes
                .load(Ordering::Relaxed),
            memtables: st.imm.len() as f64
                + (active as f64 / self.opts.memtable_size.max(1) as f64).min(1.0),
        };
        Ok((full, pacing::pace(&debt, &limits, incoming)))
    }

    /// The active memtable, its bytes charged to the block cache.
    fn charged(&self, st: &super::State) -> Arc<Memtable> {
        self.tables
            .block_cache()
            .charge(Charge::Memtables, self.memtable_charge(st));
        Arc::clone(&st.mem)
    }

    /// Adds `wait` to the delay writers owe; once that reaches a
    /// millisecond, returns it (now owed by nobody) for this writer to sleep:
    /// short delays of small writes add up instead of each costing a sleep.
    fn owe_delay(&self, wait: Duration) -> Option<Duration> {
        let owed = &self.counters.owed_delay_nanos;
        let nanos = wait.as_nanos() as u64;
        let total = owed.fetch_add(nanos, Ordering::Relaxed) + nanos;
        if total < MIN_SLEEP.as_nanos() as u64 {
            return None;
        }
        let taken = owed.swap(0, Ordering::Relaxed);
        (taken > 0).then(|| Duration::from_nanos(taken).min(pacing::MAX_DELAY))
    }

    /// Stops the writer until a flush or compaction finishes (or 100 ms pass),
    /// counting the stop, its time and its cause.
    fn wait_for_background(
        &self,
        st: &mut parking_lot::MutexGuard<'_, super::State>,
        cause: pacing::Cause,
    ) {
        let c = &self.counters;
        c.write_stops.fetch_add(1, Ordering::Relaxed);
        if let Some(a) = c.write_stops_by_cause.get(cause_index(cause)) {
            a.fetch_add(1, Ordering::Relaxed);
        }
        let t = Instant::now();
        self.bg_cv.wait_for(st, Duration::from_millis(100));
        c.write_stop_micros
            .fetch_add(t.elapsed().as_micros() as u64, Ordering::Relaxed);
    }
}
