//! Level sizes: the target of level 1 and the growth factor between levels.
//!
//! Level 1's target follows the memtables: it is what level 0 holds when it
//! triggers a compaction (`l0_compaction_trigger` memtables' worth), so a
//! level-0 compaction rewrites about as much of level 1 as it brings down.
//! TokuDB's db-update under a 512 MiB memory cap (`bench/memlimit 512M
//! lamina --option level_base_size=N bench update --ops 40000000
//! --memory-budget 256M`: 64 MiB memtables, trigger 4) ran fastest with
//! level 1 at that size, 256 MiB, and about a fifth slower at 64 MiB or
//! 512 MiB.
//!
//! Each level is [`MULTIPLIER`] times the one above. Leveled compaction
//! rewrites a byte about once per level for every multiple of the level
//! above it that the level holds, so a smaller factor trades more levels
//! (one more filter probe per point read that reaches them) for less
//! rewriting. In a deep tree (the same command with `--option
//! memtable_size=4M --option level_base_size=16M --option
//! level_multiplier=N`), a factor of 10, the usual default of leveled
//! stores, ran 13 % slower than 4; with the whole data in two levels the
//! factor makes no difference.

use super::kib_u64;

/// `Options::level_base_size` and `Options::level_multiplier` value asking
/// for the setting to be chosen.
pub(crate) const AUTOMATIC: u64 = 0;
/// The growth factor between levels chosen.
pub(crate) const MULTIPLIER: u64 = 4;
/// Smallest level-1 target chosen.
const MIN_BASE: u64 = 16 << 20;
/// Largest level-1 target chosen.
const MAX_BASE: u64 = 1 << 30;
/// A forced setting this many times away from the choice is reported.
const FAR: u64 = 4;
/// A forced growth factor at or above this is reported.
const FAR_MULTIPLIER: u64 = 8;

/// The level sizes in use and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelChoice {
    /// Target bytes of level 1.
    pub base: u64,
    /// Growth factor between levels.
    pub multiplier: u64,
    /// Why these sizes, in words.
    pub reason: String,
    /// When a forced setting is far from what would be chosen: what it costs.
    pub warning: Option<String>,
}

/// The level sizes for a database whose memtables hold `memtable_size`
/// bytes and whose level 0 is compacted at `l0_trigger` tables.
/// `forced_base`, `forced_multiplier`: the options ([`AUTOMATIC`]: choose).
pub fn choose_levels(
    forced_base: u64,
    forced_multiplier: u64,
    memtable_size: usize,
    l0_trigger: usize,
) -> LevelChoice {
    let level0 = (memtable_size as u64).saturating_mul(l0_trigger.max(1) as u64);
    let auto_base = level0.clamp(MIN_BASE, MAX_BASE);
    let base = if forced_base == AUTOMATIC {
        auto_base
    } else {
        forced_base
    };
    let multiplier = if forced_multiplier == AUTOMATIC {
        MULTIPLIER
    } else {
        forced_multiplier
    };
    let base_reason = if forced_base == AUTOMATIC {
        format!(
            "level 1 holds {}, what level 0 holds at its trigger ({l0_trigger} memtables of {})",
            kib_u64(base),
            kib_u64(memtable_size as u64)
        )
    } else {
        format!("level 1 holds {} (set by the user)", kib_u64(base))
    };
    let multiplier_reason = if forced_multiplier == AUTOMATIC {
        format!("each level {multiplier}x the one above, which rewrites the least per byte written")
    } else {
        format!("each level {multiplier}x the one above (set by the user)")
    };
    let mut warnings = Vec::new();
    if forced_base != AUTOMATIC
        && (base >= auto_base.saturating_mul(FAR) || base <= auto_base / FAR)
    {
        warnings.push(format!(
            "level_base_size is set to {}, far from the {} level 0 brings at each compaction: \
             larger, and every level-0 compaction rewrites more of level 1 than it brings; \
             smaller, and the tree has more levels (in `lamina-bench update`, 512 MiB and 64 MiB \
             both ran about a fifth slower than 256 MiB); leave it unset and lamina would use {}",
            kib_u64(base),
            kib_u64(auto_base),
            kib_u64(auto_base)
        ));
    }
    if forced_multiplier != AUTOMATIC && multiplier >= FAR_MULTIPLIER {
        warnings.push(format!(
            "level_multiplier is set to {multiplier}: compaction rewrites each byte about \
             {multiplier} times per level, where {MULTIPLIER} rewrites it about {MULTIPLIER} times \
             (in `lamina-bench update` on a deep tree, 10 ran 13 % slower than 4); leave it \
             unset and lamina would use {MULTIPLIER}"
        ));
    }
    LevelChoice {
        base,
        multiplier,
        reason: format!("{base_reason}; {multiplier_reason}"),
        warning: (!warnings.is_empty()).then(|| warnings.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (memtable bytes, trigger) → chosen level-1 target.
    #[test]
    fn chosen_bases_as_data() {
        let cases: &[((usize, usize), u64)] = &[
            // The default budget's 64 MiB memtables, trigger 4.
            ((64 << 20, 4), 256 << 20),
            // A 64 MiB budget's 16 MiB memtables.
            ((16 << 20, 4), 64 << 20),
            // Tiny memtables: no smaller than 16 MiB.
            ((1 << 20, 4), 16 << 20),
            ((1 << 20, 0), 16 << 20),
            // Huge ones: no larger than 1 GiB.
            ((1 << 30, 4), 1 << 30),
            ((64 << 20, 8), 512 << 20),
        ];
        for &((memtable, trigger), want) in cases {
            let c = choose_levels(AUTOMATIC, AUTOMATIC, memtable, trigger);
            assert_eq!(
                c.base, want,
                "memtable {memtable} trigger {trigger}: {}",
                c.reason
            );
            assert_eq!(c.multiplier, MULTIPLIER);
            assert_eq!(c.warning, None);
        }
    }

    #[test]
    fn the_reason_says_what_was_chosen() {
        let c = choose_levels(AUTOMATIC, AUTOMATIC, 64 << 20, 4);
        assert!(
            c.reason.contains(
                "level 1 holds 256 MiB, what level 0 holds at its trigger (4 memtables of 64 MiB)"
            ),
            "{}",
            c.reason
        );
        assert!(
            c.reason.contains("each level 4x the one above"),
            "{}",
            c.reason
        );
    }

    #[test]
    fn forced_settings_are_kept_and_warned_about_only_when_far() {
        let near = choose_levels(128 << 20, 6, 64 << 20, 4);
        assert_eq!((near.base, near.multiplier), (128 << 20, 6));
        assert_eq!(near.warning, None);
        assert!(near.reason.contains("set by the user"), "{}", near.reason);

        let big = choose_levels(1 << 30, AUTOMATIC, 64 << 20, 4);
        let w = big.warning.expect("1 GiB against 256 MiB is far");
        assert!(w.contains("level_base_size is set to 1 GiB"), "{w}");
        assert!(w.contains("lamina would use 256 MiB"), "{w}");
        let small = choose_levels(64 << 20, AUTOMATIC, 64 << 20, 4);
        assert!(small.warning.is_some(), "64 MiB against 256 MiB is far");

        let wide = choose_levels(AUTOMATIC, 10, 64 << 20, 4);
        let w = wide.warning.expect("10 is far from 4");
        assert!(w.contains("level_multiplier is set to 10"), "{w}");
        assert!(!w.contains("level_base_size"), "{w}");
    }
}
