//! Whether point lookups ask the row cache: the policy, apart from the cache
//! and from the mechanism (`sampled_use`).
//!
//! Asking costs every lookup that misses (the doorkeeper's word, its
//! counters, a row looked up for a key marked by chance): a tenth of a
//! random read of a large table that no key is read twice in. So the rows
//! are asked by every lookup only while they answer enough of them,
//! measured on a sample of keys that always ask and are always admitted,
//! so that a hot set's sampled keys hit as often as the whole set would.

use crate::sampled_use::{SampledUse, UsePolicy};

/// The row cache's use (see the module doc).
pub(crate) type RowUse = SampledUse<Rows>;

/// The row cache's policy.
#[derive(Debug)]
pub(crate) struct Rows;

/// Every lookup asks while at least one sampled ask in this many hits.
const HIT_SHARE: u32 = 8;

impl UsePolicy for Rows {
    /// The top four bits: one key in 16.
    const SAMPLE_SHIFT: u32 = 60;
    /// About 65,000 lookups, so that a hot set of tens of thousands of keys
    /// is read twice (seen, then admitted) and found a third time before
    /// the first decision.
    const WINDOW: u32 = 4096;

    fn every_lookup(hits: u32, asks: u32) -> bool {
        hits.saturating_mul(HIT_SHARE) >= asks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(sampled: bool, i: u64) -> u64 {
        RowUse::test_hash(sampled, i)
    }

    #[test]
    fn lookups_stop_asking_when_few_sampled_asks_hit_and_start_again_when_many_do() {
        let u = RowUse::new();
        assert!(u.asks(hash(false, 1)), "every lookup asks at first");
        for i in 0..u64::from(Rows::WINDOW) {
            u.record(hash(false, i), true); // not sampled: not counted
            u.record(hash(true, i), i % u64::from(HIT_SHARE * 2) == 0);
        }
        assert!(
            !u.asks(hash(false, 1)),
            "one sampled ask in 16 hit: unsampled keys do not ask"
        );
        assert!(u.asks(hash(true, 1)), "sampled keys always ask");
        for i in 0..u64::from(Rows::WINDOW) {
            u.record(hash(true, i), i % u64::from(HIT_SHARE) == 0);
        }
        assert!(
            u.asks(hash(false, 1)),
            "one in 8 hit: every lookup asks again"
        );
    }
}
