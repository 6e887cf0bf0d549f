//! Whether point lookups ask the row cache: the policy, apart from the cache.
//!
//! Asking costs every lookup that misses (the doorkeeper's word, its
//! counters, a row looked up for a key marked by chance): a tenth of a
//! random read of a large table that no key is read twice in. So the rows
//! are asked by every lookup only while they answer enough of them. What
//! they would answer is measured on a sample chosen by the key's hash, not
//! by time: the sampled keys always ask and are always admitted, so a hot
//! set's sampled keys hit as often as the whole set would.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Keys whose hash has these top bits clear are sampled: one in 16.
const SAMPLE_SHIFT: u32 = 60;
/// Sampled asks between two decisions: about 65,000 lookups, so that a hot
/// set of tens of thousands of keys is read twice (seen, then admitted)
/// and found a third time before the first decision.
const WINDOW: u32 = 4096;
/// Every lookup asks while at least one sampled ask in this many hits.
const HIT_SHARE: u32 = 8;

/// The decision and the sampled asks since it was made. Thread-safe; the
/// counters are updated by sampled lookups only, and may lose a count when
/// threads race (a decision is then made on slightly fewer asks).
#[derive(Debug)]
pub(crate) struct RowUse {
    every_lookup: AtomicBool,
    asks: AtomicU32,
    hits: AtomicU32,
}

impl RowUse {
    /// Every lookup asks until the first window says otherwise.
    pub fn new() -> RowUse {
        RowUse {
            every_lookup: AtomicBool::new(true),
            asks: AtomicU32::new(0),
            hits: AtomicU32::new(0),
        }
    }

    /// Whether the key of hash `hash` is in the sample.
    pub fn sampled(hash: u64) -> bool {
        hash >> SAMPLE_SHIFT == 0
    }

    /// Whether a lookup of the key of hash `hash` asks the rows.
    pub fn asks(&self, hash: u64) -> bool {
        RowUse::sampled(hash) || self.every_lookup.load(Ordering::Relaxed)
    }

    /// Counts an ask of the key of hash `hash` that found a row (`hit`) or
    /// not; decides again at the end of a window.
    pub fn record(&self, hash: u64, hit: bool) {
        if !RowUse::sampled(hash) {
            return;
        }
        if hit {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        let asks = self.asks.fetch_add(1, Ordering::Relaxed) + 1;
        if asks >= WINDOW {
            self.asks.store(0, Ordering::Relaxed);
            let hits = self.hits.swap(0, Ordering::Relaxed);
            self.every_lookup
                .store(hits.saturating_mul(HIT_SHARE) >= asks, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash in the sample, or out of it.
    fn hash(sampled: bool, i: u64) -> u64 {
        if sampled {
            i
        } else {
            (1 << 63) | i
        }
    }

    #[test]
    fn lookups_stop_asking_when_few_sampled_asks_hit_and_start_again_when_many_do() {
        let u = RowUse::new();
        assert!(u.asks(hash(false, 1)), "every lookup asks at first");
        for i in 0..u64::from(WINDOW) {
            u.record(hash(false, i), true); // not sampled: not counted
            u.record(hash(true, i), i % u64::from(HIT_SHARE * 2) == 0);
        }
        assert!(!u.asks(hash(false, 1)), "one sampled ask in 16 hit: unsampled keys do not ask");
        assert!(u.asks(hash(true, 1)), "sampled keys always ask");
        for i in 0..u64::from(WINDOW) {
            u.record(hash(true, i), i % u64::from(HIT_SHARE) == 0);
        }
        assert!(u.asks(hash(false, 1)), "one in 8 hit: every lookup asks again");
    }

    #[test]
    fn one_in_sixteen_hashes_is_sampled() {
        let n = (0..1u64 << 16)
            .filter(|&i| RowUse::sampled(crate::table::key_hash(&i.to_le_bytes())))
            .count();
        assert!((3_500..4_700).contains(&n), "{n} of 65,536 sampled");
    }
}
