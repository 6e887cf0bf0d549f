//! Where ingested tables go: a pure function of the version, tested as data.
//!
//! The ingest runner has already made sure every table of the version that
//! overlaps an ingested range holds only older entries; this decides the level.

use crate::manifest::{Version, NUM_LEVELS};

/// A tree-key range `[lo, hi]` (both inclusive) of one ingested table.
pub type Range = (Vec<u8>, Vec<u8>);

/// Whether any two of `ranges` overlap.
pub fn any_overlap(ranges: &[Range]) -> bool {
    let mut sorted: Vec<&Range> = ranges.iter().collect();
    sorted.sort();
    sorted.windows(2).any(|w| match w {
        [a, b] => b.0 <= a.1,
        _ => false,
    })
}

/// The level of each ingested table, in the order given.
///
/// - Tables of one ingest that overlap each other all go to level 0, where
///   they are searched newest (latest in the list) first.
/// - With `deep` false (a compaction is running and could write into any
///   level ≥ 1), every table goes to level 0.
/// - Otherwise a table goes to the deepest level such that it overlaps no
///   table in that level or any level above; one overlapping level 0 stays
///   in level 0.
pub fn place(version: &Version, ranges: &[Range], deep: bool) -> Vec<usize> {
    let mutual = |i: usize| {
        ranges.iter().enumerate().any(|(j, other)| {
            ranges
                .get(i)
                .is_some_and(|me| j != i && me.0 <= other.1 && other.0 <= me.1)
        })
    };
    ranges
        .iter()
        .enumerate()
        .map(|(i, (lo, hi))| {
            if !deep || mutual(i) {
                return 0;
            }
            let mut target = 0;
            for level in 0..NUM_LEVELS {
                if !version.overlapping(level, Some(lo), Some(hi)).is_empty() {
                    break;
                }
                target = level;
            }
            target
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::key::{internal_key, tree_key};
    use crate::manifest::{FileMeta, VersionEdit};
    use std::sync::Arc;

    fn meta(number: u64, lo: &str, hi: &str) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            size: 100,
            smallest: internal_key(&tree_key(0, lo.as_bytes()), 1, 1),
            largest: internal_key(&tree_key(0, hi.as_bytes()), 1, 1),
            smallest_seqno: 1,
            largest_seqno: 1,
            entries: 1,
        })
    }

    fn range(lo: &str, hi: &str) -> Range {
        (tree_key(0, lo.as_bytes()), tree_key(0, hi.as_bytes()))
    }

    /// Level 0: [a, c]; level 2: [m, p]; level 6: [a, z].
    fn version() -> Version {
        let mut e = VersionEdit::default();
        e.new_files.push((0, meta(1, "a", "c")));
        e.new_files.push((2, meta(2, "m", "p")));
        e.new_files.push((6, meta(3, "a", "z")));
        Version::default().apply(&e).unwrap()
    }

    /// Ingested ranges, whether deep levels are allowed, the levels wanted.
    type Case<'a> = (&'a [(&'a str, &'a str)], bool, &'a [usize]);

    #[test]
    fn decisions() {
        let v = version();
        let cases: &[Case] = &[
            // Overlaps level 0: stays there.
            (&[("b", "d")], true, &[0]),
            // Overlaps level 2: goes just above it.
            (&[("n", "o")], true, &[1]),
            // Overlaps only the bottom: level 5.
            (&[("e", "f")], true, &[5]),
            // Two disjoint tables placed independently.
            (&[("e", "f"), ("n", "n")], true, &[5, 1]),
            // Two tables overlapping each other: both level 0.
            (&[("e", "g"), ("f", "h")], true, &[0, 0]),
            // A compaction may be running: level 0.
            (&[("e", "f")], false, &[0]),
        ];
        for (ranges, deep, want) in cases {
            let r: Vec<Range> = ranges.iter().map(|(a, b)| range(a, b)).collect();
            assert_eq!(&place(&v, &r, *deep), want, "{ranges:?} deep={deep}");
        }
        assert!(any_overlap(&[
            range("e", "g"),
            range("a", "b"),
            range("f", "h")
        ]));
        assert!(!any_overlap(&[
            range("e", "g"),
            range("a", "b"),
            range("h", "h")
        ]));
        // An empty tree: the bottom level.
        assert_eq!(
            place(&Version::default(), &[range("a", "b")], true),
            [NUM_LEVELS - 1]
        );
    }
}
