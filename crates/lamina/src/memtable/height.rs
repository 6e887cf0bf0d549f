//! The height of a new skip-list entry's tower: 1, then one more level
//! with probability 1/[`BRANCHING`] each, up to [`MAX_HEIGHT`], from a
//! generator of each thread's own.

use std::cell::Cell;

/// Tallest tower; with a quarter of the entries reaching each next level,
/// enough for 4^20 entries.
pub(super) const MAX_HEIGHT: usize = 20;

/// One entry in four reaches the next level up.
const BRANCHING: u64 = 4;

thread_local! {
    /// Each thread's generator of tower heights (xorshift64*).
    static HEIGHT_RNG: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let mut b = [0u8; 8];
    // A fixed seed is a fine fallback: heights need spread, not secrecy.
    let _ = getrandom::getrandom(&mut b);
    u64::from_le_bytes(b) | 1
}

/// A tower height: 1, then one more with probability 1/BRANCHING each.
pub(super) fn random_height() -> usize {
    HEIGHT_RNG.with(|rng| {
        let mut x = rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        rng.set(x);
        let mut r = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
        let mut height = 1;
        while height < MAX_HEIGHT && r % BRANCHING == 0 {
            height += 1;
            r /= BRANCHING;
        }
        height
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_of_the_towers_reach_each_next_level() {
        let n = 200_000;
        let mut at_least = [0usize; MAX_HEIGHT + 1];
        for _ in 0..n {
            let h = random_height();
            assert!((1..=MAX_HEIGHT).contains(&h), "height {h}");
            for c in at_least.iter_mut().take(h + 1) {
                *c += 1;
            }
        }
        for level in 2..=4 {
            let share = at_least[level] as f64 / at_least[level - 1] as f64;
            assert!(
                (0.23..0.27).contains(&share),
                "level {level}: {share:.3} of the towers below"
            );
        }
    }
}
