//! Admission on the second sighting, as in TinyLFU: a set of bits, one per
//! hash, cleared every so often, so that "seen before" means "seen
//! recently". A key read once (as every key of a scan-like pass is) costs a
//! bit, not a copy into a cache and an eviction.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bits of a doorkeeper (128 KiB).
const BITS: usize = 1 << 20;
/// A doorkeeper is cleared after this many offers.
pub(crate) const PERIOD: u64 = 1 << 19;

/// Hashes offered since the doorkeeper was last cleared. Thread-safe.
pub(crate) struct Doorkeeper {
    seen: Vec<AtomicU64>,
    offered: AtomicU64,
}

impl Doorkeeper {
    /// A doorkeeper; `enabled: false` makes one that holds no bits and
    /// admits nothing.
    pub fn new(enabled: bool) -> Doorkeeper {
        let words = if enabled { BITS / 64 } else { 0 };
        Doorkeeper {
            seen: (0..words).map(|_| AtomicU64::new(0)).collect(),
            offered: AtomicU64::new(0),
        }
    }

    /// The word and bit of `hash`.
    fn bit(&self, hash: u64) -> Option<(&AtomicU64, u64)> {
        let bit = hash as usize % BITS;
        let word = self.seen.get(bit / 64)?;
        Some((word, 1u64 << (bit % 64)))
    }

    /// Asks the CPU for the word of `hash`, so that its miss overlaps the
    /// work before [`Doorkeeper::marked`] reads it.
    pub fn prefetch(&self, hash: u64) {
        if let Some((word, _)) = self.bit(hash) {
            crate::prefetch::prefetch(word);
        }
    }

    /// Whether `hash` is marked as offered, without marking it.
    pub fn marked(&self, hash: u64) -> bool {
        self.bit(hash)
            .is_some_and(|(word, mask)| word.load(Ordering::Relaxed) & mask != 0)
    }

    /// Whether `hash` was offered before since the doorkeeper was last
    /// cleared; marks it as offered.
    pub fn seen_before(&self, hash: u64) -> bool {
        if self.offered.fetch_add(1, Ordering::Relaxed) % PERIOD == PERIOD - 1 {
            for w in &self.seen {
                w.store(0, Ordering::Relaxed);
            }
        }
        let Some((word, mask)) = self.bit(hash) else {
            return false;
        };
        // A plain load first: a key seen before costs no locked write.
        word.load(Ordering::Relaxed) & mask != 0
            || word.fetch_or(mask, Ordering::Relaxed) & mask != 0
    }
}
