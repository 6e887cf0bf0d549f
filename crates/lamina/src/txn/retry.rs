//! How `transact` runs a transaction again after a conflict: a random
//! back-off that grows with the conflicts, then exclusive runs.

use super::Transaction;
use crate::db::Db;
use crate::error::{Error, Result};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Runs again, after conflicts, that `transact` allows by default.
pub(crate) const DEFAULT_RETRIES: usize = 100;

/// Conflicts after which every run holds the transaction gate exclusively.
const EXCLUSIVE_AFTER: usize = 4;

/// The first back-off, and the most one back-off may be.
const FIRST_BACKOFF: Duration = Duration::from_micros(50);
const MOST_BACKOFF: Duration = Duration::from_millis(10);

/// The runs of one transaction under `transact`'s policy, for callers that
/// run the loop themselves (the Python binding calls back into Python
/// between steps): [`Attempts::begin`] each run, [`Attempts::conflicted`]
/// after a conflict.
#[derive(Debug)]
pub struct Attempts {
    retries: usize,
    conflicts: usize,
}

impl Attempts {
    /// At most `retries` runs again after conflicts.
    pub fn new(retries: usize) -> Attempts {
        Attempts {
            retries,
            conflicts: 0,
        }
    }

    /// Begins the next run: exclusive once it has conflicted
    /// `EXCLUSIVE_AFTER` times (it may then wait for commits passing the
    /// gate, and for another exclusive run to end). An exclusive run keeps
    /// every other transaction from committing until it is committed or
    /// dropped: end it promptly.
    pub fn begin(&self, db: &Db) -> Transaction {
        if self.conflicts >= EXCLUSIVE_AFTER {
            db.inner().txn_gate().enter_exclusive();
            Transaction::begin(db, true)
        } else {
            Transaction::begin(db, false)
        }
    }

    /// After a run that conflicted (`why`): backs off and returns `Ok`
    /// to run again, or returns the conflict once the retries are spent.
    pub fn conflicted(&mut self, why: String) -> Result<()> {
        if self.conflicts >= self.retries {
            return Err(Error::Conflict(why));
        }
        self.conflicts += 1;
        // Exclusive runs wait for the gate instead.
        if self.conflicts <= EXCLUSIVE_AFTER {
            std::thread::sleep(backoff(self.conflicts));
        }
        Ok(())
    }
}

/// A random while, in [d/2, 3d/2) for d doubling from `FIRST_BACKOFF` with
/// each conflict up to `MOST_BACKOFF`: transactions that conflicted with
/// each other do not meet again at once.
fn backoff(conflicts: usize) -> Duration {
    let shift = u32::try_from(conflicts.saturating_sub(1))
        .unwrap_or(u32::MAX)
        .min(16);
    let d = FIRST_BACKOFF
        .saturating_mul(1u32 << shift)
        .min(MOST_BACKOFF);
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(nanos / 2 + random % nanos.max(1))
}
