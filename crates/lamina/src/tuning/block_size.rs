//! The data block size, chosen from the sizes of the entries that flushes
//! write.
//!
//! Policy only: [`choose_block_size`] is a pure function of what was seen
//! ([`DataShape`]) and of what the user set, tested as data below. The engine
//! gathers the shape when it flushes (`background/flush.rs`) and asks again for each
//! table it writes; `lamina stat` prints the answer and its reason.
//!
//! Why these numbers: a data block is the unit the block cache holds, the
//! index points at, and a point read decompresses. `lamina-bench blocksize`
//! (the numbers load's records, about 70 bytes an entry) finds 64 KiB the
//! best or within 5 % of it for loads and point reads, and smaller blocks
//! slower: a block of only ~250 such entries makes the index, filter lookups
//! and per-block costs a larger share. Aiming at about [`ENTRIES_PER_BLOCK`]
//! entries a block, within [`MIN_BLOCK`]..=[`MAX_BLOCK`], keeps that share
//! alike for small and large entries while a point read of large values never
//! decompresses more than 64 KiB.
//!
//! That holds while the blocks stay in the cache. Once the tables outgrow
//! it, most point reads miss it, and a miss reads, checks and decompresses
//! the whole block for one entry: the tables written below level 0 then get
//! blocks of [`DEVICE_BLOCK`], a page of the device, so that such a read
//! costs one page (`lamina-bench btree-rows`' random reads, 5 M entries of
//! 174 bytes under the default budget: about 1.4x the reads per second of
//! 64 KiB blocks; 16x fewer bytes read per lookup from the device). Level 0
//! keeps the size chosen from the data: its tables are recent, small and
//! soon rewritten; except a table that a batch larger than the memtable
//! made, which alone outgrows the cache (that row's bulk load is one batch
//! of 5 M entries: its level-0 table then read 2.1x the keys per second).

use super::{kib, kib_u64, DataShape, AUTOMATIC};
use std::fmt::Write as _;

/// The block size before any flush was seen.
pub(crate) const FIRST_BLOCK: usize = 16 << 10;
/// Smallest block size chosen.
pub(crate) const MIN_BLOCK: usize = 4 << 10;
/// Largest block size chosen.
pub(crate) const MAX_BLOCK: usize = 64 << 10;
/// The block size of tables written below level 0 once the tables outgrow
/// the block cache.
pub(crate) const DEVICE_BLOCK: usize = 4 << 10;
/// Entries a chosen block aims to hold.
pub(crate) const ENTRIES_PER_BLOCK: u64 = 1024;
/// A forced block size this many times away from the choice is reported.
const FAR: usize = 4;

/// The block size in use and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSizeChoice {
    /// Bytes of a data block before compression.
    pub block_size: usize,
    /// False when the user set `Options::block_size`.
    pub chosen: bool,
    /// Why this size, in words.
    pub reason: String,
    /// When a forced size is far from what would be chosen: what it costs.
    pub warning: Option<String>,
}

/// The block size for tables written now. `forced`: `Options::block_size`
/// ([`AUTOMATIC`]: choose). `shape`: the entries flushed so far.
/// `outgrown`: for a table below level 0 when the tables outgrow the block
/// cache, their bytes and the cache's.
pub fn choose_block_size(
    forced: usize,
    shape: &DataShape,
    outgrown: Option<(u64, u64)>,
) -> BlockSizeChoice {
    let auto = match outgrown {
        Some((tables, cache)) => BlockSizeChoice {
            block_size: DEVICE_BLOCK,
            chosen: true,
            reason: format!(
                "the tables ({}) outgrow the block cache ({}): below level 0, blocks of {}, \
                 so that a read that misses the cache reads one page",
                kib_u64(tables),
                kib_u64(cache),
                kib(DEVICE_BLOCK)
            ),
            warning: None,
        },
        None => automatic(shape),
    };
    if forced == AUTOMATIC {
        return auto;
    }
    let warning = shape.mean_entry().and_then(|mean| {
        let (small, large) = (forced.min(auto.block_size), forced.max(auto.block_size));
        if large < small.saturating_mul(FAR) {
            return None;
        }
        let per_block = forced as u64 / mean.max(1);
        let mut w = format!(
            "block_size is set to {}: a block holds about {per_block} entries of {mean} bytes; ",
            kib(forced)
        );
        if forced < auto.block_size {
            let _ = write!(
                w,
                "the index and per-block costs grow with the number of blocks, which slows loads \
                 and cached reads (`lamina-bench blocksize`: 4 KiB blocks read about a quarter \
                 slower than 64 KiB)"
            );
        } else {
            let _ = write!(
                w,
                "every point read that misses the cache reads and decompresses the whole block"
            );
        }
        let _ = write!(
            w,
            "; leave it unset and lamina would use {}",
            kib(auto.block_size)
        );
        Some(w)
    });
    BlockSizeChoice {
        block_size: forced,
        chosen: false,
        reason: format!("set by the user ({})", kib(forced)),
        warning,
    }
}

/// The choice when the user set nothing.
fn automatic(shape: &DataShape) -> BlockSizeChoice {
    let Some(mean) = shape.mean_entry() else {
        return BlockSizeChoice {
            block_size: FIRST_BLOCK,
            chosen: true,
            reason: format!("no flush seen yet: {}", kib(FIRST_BLOCK)),
            warning: None,
        };
    };
    let want = mean.saturating_mul(ENTRIES_PER_BLOCK);
    let size = nearest_power_of_two(want).clamp(MIN_BLOCK as u64, MAX_BLOCK as u64) as usize;
    BlockSizeChoice {
        block_size: size,
        chosen: true,
        reason: format!(
            "chosen from the data: entries average {mean} bytes ({} of {} sampled), \
             {} holds about {} of them",
            kib_u64(shape.key_bytes + shape.value_bytes),
            shape.entries,
            kib(size),
            size as u64 / mean.max(1)
        ),
        warning: None,
    }
}

/// The power of two nearest to `n` on a log scale (at least 1).
fn nearest_power_of_two(n: u64) -> u64 {
    let up = n.max(1).next_power_of_two();
    let down = up / 2;
    // n is nearer `down` when n / down < up / n, i.e. n² < up × down.
    if down > 0 && u128::from(n) * u128::from(n) < u128::from(up) * u128::from(down) {
        down
    } else {
        up
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(entries: u64, key: u64, value: u64) -> DataShape {
        DataShape::uniform(entries, key, value)
    }

    /// (mean key bytes, mean value bytes) → chosen block size.
    #[test]
    fn chosen_sizes_as_data() {
        let cases: &[((u64, u64), usize)] = &[
            // The numbers load: ~18-byte internal keys, ~50-byte values.
            ((18, 50), 64 << 10),
            // Small entries: smaller blocks, down to the floor of 4 KiB.
            ((12, 4), 16 << 10),
            ((8, 0), 8 << 10),
            ((4, 0), 4 << 10),
            ((2, 0), 4 << 10),
            ((20, 100), 64 << 10),
            // Large values: capped at 64 KiB.
            ((20, 4000), 64 << 10),
            ((40, 1 << 20), 64 << 10),
        ];
        for &((k, v), want) in cases {
            let c = choose_block_size(AUTOMATIC, &shape(1000, k, v), None);
            assert_eq!(c.block_size, want, "key {k} value {v}: {}", c.reason);
            assert!(c.chosen);
            assert!(c.warning.is_none());
        }
    }

    #[test]
    fn tables_that_outgrow_the_cache_get_device_pages() {
        let s = shape(1000, 18, 50);
        let c = choose_block_size(AUTOMATIC, &s, Some((900 << 20, 600 << 20)));
        assert_eq!((c.block_size, c.chosen), (DEVICE_BLOCK, true));
        assert!(c.reason.contains("outgrow the block cache"), "{}", c.reason);
        // The user's size wins, and is measured against the device page.
        let forced = choose_block_size(64 << 10, &s, Some((900 << 20, 600 << 20)));
        assert_eq!((forced.block_size, forced.chosen), (64 << 10, false));
        let w = forced.warning.expect("64 KiB against 4 KiB is far");
        assert!(w.contains("lamina would use 4 KiB"), "{w}");
    }

    #[test]
    fn before_any_flush_the_first_size() {
        let c = choose_block_size(AUTOMATIC, &DataShape::default(), None);
        assert_eq!(c.block_size, FIRST_BLOCK);
        assert!(c.reason.contains("no flush"), "{}", c.reason);
    }

    #[test]
    fn a_forced_size_is_kept_and_warned_about_only_when_far() {
        let s = shape(1000, 18, 50);
        let near = choose_block_size(32 << 10, &s, None);
        assert_eq!((near.block_size, near.chosen), (32 << 10, false));
        assert_eq!(near.warning, None);
        let small = choose_block_size(4 << 10, &s, None);
        assert_eq!(small.block_size, 4 << 10);
        let w = small.warning.expect("4 KiB against 64 KiB is far");
        assert!(w.contains("about 60 entries of 68 bytes"), "{w}");
        assert!(w.contains("lamina would use 64 KiB"), "{w}");
        let large = choose_block_size(1 << 20, &s, None);
        let w = large.warning.expect("1 MiB against 64 KiB is far");
        assert!(w.contains("decompresses the whole block"), "{w}");
        // Nothing seen: nothing to compare with.
        assert_eq!(
            choose_block_size(1024, &DataShape::default(), None).warning,
            None
        );
    }

    #[test]
    fn nearest_power_of_two_on_a_log_scale() {
        let cases = [
            (0, 1),
            (1, 1),
            (3, 4),
            (5, 4),
            (34_816, 32_768),
            (46_340, 32_768),
            (46_341, 65_536),
        ];
        for (n, want) in cases {
            assert_eq!(nearest_power_of_two(n), want, "{n}");
        }
    }
}
