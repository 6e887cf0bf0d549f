//! Whether a point lookup asks a table's filter before a block it already
//! holds in memory: the policy, apart from the table and from the mechanism
//! (`sampled_use`).
//!
//! A filter spares the lookups of keys the table does not hold: it
//! answers them with one line, where the block would take its index
//! search, its bucket and perhaps a scan, or a read from the disk. A
//! lookup of a key the table holds gains nothing from it, and a filter too
//! large for the CPU's caches costs such a lookup a line from memory that
//! the block's own misses wait behind. So while nearly every sampled key passes a table's large filter (the
//! keys asked are there), the others skip it when the slot of the block
//! the index names holds that block, and still ask it before a block is
//! looked up in the cache or read. A skipped filter never changes an
//! answer: the block is searched either way.

use crate::sampled_use::{SampledUse, UsePolicy};

/// A table's filter's use (see the module doc).
pub(crate) type FilterUse = SampledUse<Filters>;

/// The filters' policy.
#[derive(Debug)]
pub(crate) struct Filters;

/// Every lookup asks while more than one sampled ask in this many is
/// refused.
const REFUSED_SHARE: u32 = 32;

impl UsePolicy for Filters {
    /// Bits 56-59, not the row cache's: keys the row cache samples, and
    /// may answer before any table is asked, are not this sample.
    const SAMPLE_SHIFT: u32 = 56;
    /// About 4,000 lookups in the table.
    const WINDOW: u32 = 256;

    /// A "hit" is a key the filter let through.
    fn every_lookup(passed: u32, asks: u32) -> bool {
        asks.saturating_sub(passed).saturating_mul(REFUSED_SHARE) > asks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(sampled: bool, i: u64) -> u64 {
        FilterUse::test_hash(sampled, i)
    }

    #[test]
    fn lookups_skip_the_filter_while_nearly_every_sampled_key_passes_it() {
        let u = FilterUse::new();
        assert!(u.asks(hash(false, 1)), "every lookup asks at first");
        for i in 0..u64::from(Filters::WINDOW) {
            u.record(hash(true, i), i % 64 != 0); // one in 64 refused
        }
        assert!(
            !u.asks(hash(false, 1)),
            "one sampled key in 64 refused: others skip"
        );
        assert!(u.asks(hash(true, 1)), "sampled keys always ask");
        for i in 0..u64::from(Filters::WINDOW) {
            u.record(hash(true, i), i % 16 != 0); // one in 16 refused
        }
        assert!(
            u.asks(hash(false, 1)),
            "one in 16 refused: every lookup asks again"
        );
    }

    #[test]
    fn the_sample_is_not_the_row_cache_s() {
        let both = (0..1u64 << 16)
            .map(|i| crate::table::key_hash(&i.to_le_bytes()))
            .filter(|&h| FilterUse::sampled(h) && crate::cache::RowUse::sampled(h))
            .count();
        assert!(
            both < 600,
            "{both} of 65,536 in both samples (about 256 if independent)"
        );
    }
}
