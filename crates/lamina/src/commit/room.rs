//! Making room for a write: the memtable it goes into, switched when full,
//! and the pace the writer keeps while flushes and compactions are behind.
//! The policy is `compaction::pacing`; this is the waiting.

use crate::cache::Charge;
use crate::compaction::pacing::{self, Pace};
use crate::db::cause_index;
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::memtable::Memtable;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most memtables waiting for flush before writers wait.
const MAX_IMMUTABLE: usize = 2;

/// Paced writers sleep once the delay they owe reaches this.
const MIN_SLEEP: Duration = Duration::from_millis(1);

/// The room a write that may not wait found in the state last: the active
/// memtable, and how full it may get before a write must switch it or be
/// paced; kept by the commit queue (under the commit lock) while the state
/// is unchanged (`Inner::state_epoch`), so that such a write asks the state
/// only when it changed.
pub(crate) struct Room {
    mem: Arc<Memtable>,
    /// Writes go while the memtable holds fewer bytes
    /// ([`pacing::go_below`]).
    go_below: u64,
    /// The `state_epoch` it was made at.
    epoch: u64,
    /// The memtable's size at which the block cache is charged next.
    charge_at: u64,
    /// What the charge holds besides the active memtable (the memtables
    /// waiting for flush, chunks kept for the next ones).
    charged_besides: u64,
}

impl Room {
    /// Whether this room writes into `mem`.
    pub(crate) fn is_in(&self, mem: &Arc<Memtable>) -> bool {
        Arc::ptr_eq(&self.mem, mem)
    }
}

impl Inner {
    /// Returns the memtable to write into, switching to a new one (and a new
    /// WAL segment) when it is full, and pacing the writer by how far
    /// flushes and compactions are behind (`compaction::pacing`): a delay
    /// that grows smoothly with the debt, a stop only at a hard limit.
    pub(crate) fn make_room(&self, incoming: usize) -> Result<Arc<Memtable>> {
        let mut paced = false;
        loop {
            let mut st = self.state().lock();
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
                        let c = self.counters();
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
            self.rotate_memtable(super::SegmentFor::Writes)?;
        }
    }

    /// The memtable to write into if the write needs no waiting: the
    /// active memtable has room and no stop or delay is due (see
    /// [`Inner::try_write`]); `None` otherwise. Asks the state (under its
    /// lock, if free) only when it changed since `kept` was made; `kept` is
    /// the commit queue's, so REQUIRES: the commit lock is held.
    pub(crate) fn room_now<'k>(
        &self,
        kept: &'k mut Option<Room>,
    ) -> Result<Option<&'k Arc<Memtable>>> {
        let epoch = self.state_epoch().load(Ordering::Acquire);
        if kept.as_ref().is_none_or(|r| r.epoch != epoch) {
            let Some(st) = self.state().try_lock() else {
                return Ok(None);
            };
            *kept = self.room_of(&st, epoch)?;
        }
        let Some(room) = kept.as_mut() else {
            return Ok(None);
        };
        let active = room.mem.approximate_size();
        if active >= room.go_below || room.mem.blob_bytes() >= self.opts().memtable_size as u64 {
            return Ok(None);
        }
        if active >= room.charge_at {
            let cache = self.tables().block_cache();
            let total = active + room.charged_besides;
            cache.charge(Charge::Memtables, total);
            room.charge_at = active + cache.charge_step();
        }
        Ok(Some(&room.mem))
    }

    /// The room the state gives writes that may not wait, as of `epoch`
    /// (read before the state was locked, so that a change meanwhile makes
    /// the room stale, not wrong); `None` while none may go. Charges the
    /// block cache with the memtables.
    fn room_of(&self, st: &crate::db::State, epoch: u64) -> Result<Option<Room>> {
        self.check_unpoisoned()?;
        if st.shutting_down {
            return Err(Error::Closed);
        }
        let go_below = pacing::go_below(
            &self.pace_limits(),
            st.version.level(0).len(),
            self.counters()
                .pending_compaction_bytes
                .load(Ordering::Relaxed),
            st.imm.len(),
            self.opts().memtable_size as u64,
        );
        let Some(go_below) = go_below else {
            return Ok(None);
        };
        let charge = self.memtable_charge(st);
        let active = st.mem.approximate_size();
        let cache = self.tables().block_cache();
        cache.charge(Charge::Memtables, charge);
        Ok(Some(Room {
            mem: Arc::clone(&st.mem),
            go_below,
            epoch,
            charge_at: active + cache.charge_step(),
            charged_besides: charge.saturating_sub(active),
        }))
    }

    /// The pacing limits of this database.
    fn pace_limits(&self) -> pacing::Limits {
        pacing::Limits::new(
            self.opts().l0_slowdown_trigger,
            self.opts().l0_stop_trigger,
            self.levels().base,
            MAX_IMMUTABLE,
        )
    }

    /// Whether the active memtable is full, and the pace a write of
    /// `incoming` bytes keeps; an error once the database is poisoned or
    /// closing.
    fn room(&self, st: &crate::db::State, incoming: usize) -> Result<(bool, Pace)> {
        self.check_unpoisoned()?;
        if st.shutting_down {
            return Err(Error::Closed);
        }
        let limits = self.pace_limits();
        let active = st.mem.approximate_size() as usize;
        // A memtable's blob file holds at most `memtable_size` of values,
        // which bounds a blob file, what recovery reads to check the
        // pointers it replays, and what garbage collection rewrites at once
        // (docs/design.md#blob-files).
        let full = active.max(st.mem.blob_bytes() as usize) >= self.opts().memtable_size;
        let debt = pacing::Debt {
            l0_tables: st.version.level(0).len(),
            pending_bytes: self
                .counters()
                .pending_compaction_bytes
                .load(Ordering::Relaxed),
            memtables: st.imm.len() as f64
                + (active as f64 / self.opts().memtable_size.max(1) as f64).min(1.0),
        };
        Ok((full, pacing::pace(&debt, &limits, incoming)))
    }

    /// The active memtable, its bytes charged to the block cache.
    fn charged(&self, st: &crate::db::State) -> Arc<Memtable> {
        self.tables()
            .block_cache()
            .charge(Charge::Memtables, self.memtable_charge(st));
        Arc::clone(&st.mem)
    }

    /// Adds `wait` to the delay writers owe; once that reaches a
    /// millisecond, returns it (now owed by nobody) for this writer to sleep:
    /// short delays of small writes add up instead of each costing a sleep.
    fn owe_delay(&self, wait: Duration) -> Option<Duration> {
        let owed = &self.counters().owed_delay_nanos;
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
        st: &mut parking_lot::MutexGuard<'_, crate::db::State>,
        cause: pacing::Cause,
    ) {
        let c = self.counters();
        c.write_stops.fetch_add(1, Ordering::Relaxed);
        if let Some(a) = c.write_stops_by_cause.get(cause_index(cause)) {
            a.fetch_add(1, Ordering::Relaxed);
        }
        let t = Instant::now();
        self.bg_cv().wait_for(st, Duration::from_millis(100));
        c.write_stop_micros
            .fetch_add(t.elapsed().as_micros() as u64, Ordering::Relaxed);
    }
}
