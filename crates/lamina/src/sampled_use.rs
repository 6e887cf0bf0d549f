//! Whether every lookup uses a structure or only a sample of them, decided
//! by what the sample found: the mechanism. The policies (which keys are
//! sampled, how many asks a decision weighs, what it takes to keep every
//! lookup asking) are `cache::row_use` and `table::filter_use`.
//!
//! The sample is chosen by the key's hash, not by time: a sampled key
//! always asks, so what the structure would answer is measured on the same
//! keys whatever the others do, and lookups that stopped asking start
//! again within one window of sampled asks once it would answer them.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// One use of [`SampledUse`]: which keys it samples and how it decides.
pub(crate) trait UsePolicy {
    /// Keys whose hash has the four bits from this one on clear are
    /// sampled: one in 16.
    const SAMPLE_SHIFT: u32;
    /// Sampled asks between two decisions.
    const WINDOW: u32;
    /// Whether every lookup asks, given that `hits` of the last window's
    /// `asks` sampled asks found what the structure answers.
    fn every_lookup(hits: u32, asks: u32) -> bool;
}

/// The decision and the sampled asks since it was made. Thread-safe; the
/// counters are updated by sampled lookups only, and may lose a count when
/// threads race (a decision is then made on slightly fewer asks).
#[derive(Debug)]
pub(crate) struct SampledUse<P> {
    every_lookup: AtomicBool,
    asks: AtomicU32,
    hits: AtomicU32,
    policy: PhantomData<P>,
}

impl<P: UsePolicy> SampledUse<P> {
    /// Every lookup asks until the first window says otherwise.
    pub fn new() -> Self {
        SampledUse {
            every_lookup: AtomicBool::new(true),
            asks: AtomicU32::new(0),
            hits: AtomicU32::new(0),
            policy: PhantomData,
        }
    }

    /// Whether the key of hash `hash` is in the sample.
    #[inline]
    pub fn sampled(hash: u64) -> bool {
        (hash >> P::SAMPLE_SHIFT) & 0xf == 0
    }

    /// Whether a lookup of the key of hash `hash` asks.
    #[inline]
    pub fn asks(&self, hash: u64) -> bool {
        Self::sampled(hash) || self.every_lookup.load(Ordering::Relaxed)
    }

    /// Counts an ask of the key of hash `hash` that found what the
    /// structure answers (`hit`) or not; decides again at the end of a
    /// window.
    #[inline]
    pub fn record(&self, hash: u64, hit: bool) {
        if Self::sampled(hash) {
            self.count(hit);
        }
    }

    #[cfg(test)]
    /// A hash in the sample (`sampled`) or out of it, `i` (below 2^56) apart
    /// from that.
    pub fn test_hash(sampled: bool, i: u64) -> u64 {
        if sampled {
            i
        } else {
            (1 << P::SAMPLE_SHIFT) | i
        }
    }

    fn count(&self, hit: bool) {
        if hit {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        let asks = self.asks.fetch_add(1, Ordering::Relaxed) + 1;
        if asks >= P::WINDOW {
            self.asks.store(0, Ordering::Relaxed);
            let hits = self.hits.swap(0, Ordering::Relaxed);
            self.every_lookup
                .store(P::every_lookup(hits, asks), Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asks while at least one sampled ask in 4 hits.
    #[derive(Debug)]
    struct Quarter;

    impl UsePolicy for Quarter {
        const SAMPLE_SHIFT: u32 = 56;
        const WINDOW: u32 = 64;
        fn every_lookup(hits: u32, asks: u32) -> bool {
            hits.saturating_mul(4) >= asks
        }
    }

    fn hash(sampled: bool, i: u64) -> u64 {
        SampledUse::<Quarter>::test_hash(sampled, i)
    }

    #[test]
    fn lookups_stop_asking_after_a_window_that_says_so_and_start_after_one_that_does_not() {
        let u = SampledUse::<Quarter>::new();
        assert!(u.asks(hash(false, 1)), "every lookup asks at first");
        for i in 0..u64::from(Quarter::WINDOW) {
            u.record(hash(false, i), true); // not sampled: not counted
            u.record(hash(true, i), i % 8 == 0);
        }
        assert!(!u.asks(hash(false, 1)), "one sampled ask in 8 hit");
        assert!(u.asks(hash(true, 1)), "sampled keys always ask");
        for i in 0..u64::from(Quarter::WINDOW) - 1 {
            u.record(hash(true, i), i % 2 == 0);
        }
        assert!(
            !u.asks(hash(false, 1)),
            "no decision before the window ends"
        );
        u.record(hash(true, 0), true);
        assert!(
            u.asks(hash(false, 1)),
            "one in 2 hit: every lookup asks again"
        );
    }

    #[test]
    fn one_in_sixteen_hashes_is_sampled() {
        let n = (0..1u64 << 16)
            .filter(|&i| SampledUse::<Quarter>::sampled(crate::table::key_hash(&i.to_le_bytes())))
            .count();
        assert!((3_500..4_700).contains(&n), "{n} of 65,536 sampled");
    }
}
