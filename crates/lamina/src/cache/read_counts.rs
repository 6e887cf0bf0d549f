//! The database's read counters: point lookups, the block cache's hits and
//! misses, and the reads of table files by the kind of block read.
//! Every table of a database reads through its block cache, which keeps
//! them; `Stats` sums them (docs/design.md#counters).
//!
//! Every reading thread bumps them, so one counter each would be one cache
//! line all of them write. They are kept in stripes instead, each on lines
//! of its own: a thread bumps the stripe it was given (threads take stripes
//! in turn), with a relaxed add, and a total sums the stripes.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// Point lookups: each key a get, a `get_many` or a `contains_key`
    /// looked up (one that may not wait: once it answers).
    Lookup = 0,
    /// Block cache lookups that found their block.
    CacheHit = 1,
    /// Block cache lookups that did not.
    CacheMiss = 2,
    /// Data blocks read from table files, by any reader.
    DataRead = 3,
    /// Of those, the ones point lookups read.
    LookupDataRead = 4,
    /// Reads of a table's filter, properties and index blocks, which lie
    /// back to back and are read at once when the table is opened.
    IndexFilterRead = 5,
    /// Reads of a table's footer, when it is opened.
    FooterRead = 6,
}

/// Counters in one stripe: as many as [`Count`] has kinds.
const COUNTS: usize = 7;

/// Stripes: more than the threads that usually read at once, few enough
/// that summing them is cheap; a power of two.
const STRIPES: usize = 16;

/// The counters of one stripe, on two cache lines of their own (a CPU
/// fetching one line may fetch its neighbour too).
#[repr(align(128))]
#[derive(Default)]
struct Stripe([AtomicU64; COUNTS]);

/// Counters of reads, striped by thread (see the module doc). Held in
/// place (not behind a pointer of its own): a count is one load of the
/// thread's stripe number and one add.
#[derive(Default)]
pub(crate) struct ReadCounts {
    stripes: [Stripe; STRIPES],
}

impl std::fmt::Debug for ReadCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCounts")
            .field("lookups", &self.total(Count::Lookup))
            .field("data_reads", &self.total(Count::DataRead))
            .finish_non_exhaustive()
    }
}

thread_local! {
    /// This thread's stripe; `usize::MAX` until it first counts.
    static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The next stripe handed to a thread.
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

/// The calling thread's stripe, given on its first call; below `STRIPES`.
#[inline]
fn stripe() -> usize {
    let mine = STRIPE.with(Cell::get);
    if mine != usize::MAX {
        // Masked (a no-op) so that indexing the stripes needs no check.
        return mine & (STRIPES - 1);
    }
    give_stripe()
}

/// Gives the calling thread its stripe (threads take them in turn).
#[cold]
fn give_stripe() -> usize {
    let given = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
    STRIPE.with(|s| s.set(given));
    given
}

impl ReadCounts {
    /// Adds `n` to counter `c`.
    #[inline]
    pub(crate) fn add(&self, c: Count, n: u64) {
        if let Some(counter) = self.stripes.get(stripe()).and_then(|s| s.0.get(c as usize)) {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Counter `c` over every stripe. Each stripe is read once, so a total
    /// taken while threads count may miss their latest adds.
    pub(crate) fn total(&self, c: Count) -> u64 {
        self.stripes
            .iter()
            .filter_map(|s| s.0.get(c as usize))
            .map(|a| a.load(Ordering::Relaxed))
            .fold(0u64, u64::wrapping_add)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;

    #[test]
    fn totals_sum_every_threads_adds() {
        let counts = Arc::new(ReadCounts::default());
        let threads: Vec<_> = (0..STRIPES as u64 + 3)
            .map(|t| {
                let counts = Arc::clone(&counts);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        counts.add(Count::DataRead, 1);
                    }
                    counts.add(Count::Lookup, t);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let n = STRIPES as u64 + 3;
        assert_eq!(counts.total(Count::DataRead), n * 1000);
        assert_eq!(counts.total(Count::Lookup), n * (n - 1) / 2);
        assert_eq!(counts.total(Count::FooterRead), 0);
    }
}
