//! The compaction policy: leveled, with a tiered level 0 and trivial moves.
//! A pure function of the version and the options; tested as data.

use crate::manifest::{FileMeta, Version, NUM_LEVELS};
use std::sync::Arc;

/// The settings the picker reads.
#[derive(Debug, Clone)]
pub struct PickerOptions {
    /// Level-0 tables that trigger a compaction into level 1.
    pub l0_trigger: usize,
    /// Target bytes of level 1.
    pub level_base_size: u64,
    /// Growth factor between levels.
    pub level_multiplier: u64,
}

/// One unit of compaction work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The level the inputs come from.
    pub level: usize,
    /// Inputs from `level`.
    pub inputs: Vec<Arc<FileMeta>>,
    /// Inputs from `level + 1` that overlap them.
    pub next_inputs: Vec<Arc<FileMeta>>,
    /// Move the inputs down a level without rewriting them.
    pub trivial_move: bool,
    /// Why this task was picked (for logs and golden tests).
    pub reason: String,
}

impl Task {
    /// The level the outputs go to.
    pub fn output_level(&self) -> usize {
        self.level + 1
    }

    /// Smallest and largest tree keys over all inputs.
    pub fn key_range(&self) -> (Vec<u8>, Vec<u8>) {
        key_range(self.inputs.iter().chain(&self.next_inputs))
    }
}

fn key_range<'a>(files: impl Iterator<Item = &'a Arc<FileMeta>>) -> (Vec<u8>, Vec<u8>) {
    let mut lo: Option<&[u8]> = None;
    let mut hi: Option<&[u8]> = None;
    for f in files {
        let (s, l) = (f.smallest_tree_key(), f.largest_tree_key());
        lo = Some(lo.map_or(s, |x| x.min(s)));
        hi = Some(hi.map_or(l, |x| x.max(l)));
    }
    (
        lo.unwrap_or_default().to_vec(),
        hi.unwrap_or_default().to_vec(),
    )
}

/// Level-1 tables are cut at this fraction of `target_table_size`.
const LEVEL1_TABLE_DIVISOR: u64 = 4;

/// The size at which a compaction into `level` cuts its output tables:
/// `target_table_size`, but a quarter of it in level 1. Every level-0
/// compaction rewrites the level-1 tables its inputs overlap, whole; smaller
/// ones make that rewrite closer to the bytes actually overlapped, so no
/// level-0 compaction holds level 0 back for long (the numbers load's 125 M
/// records, `lamina gen numbers 124999999 | lamina shell --newdb --progress
/// DB`: the longest took a quarter less time).
pub fn output_table_size(level: usize, target_table_size: u64) -> u64 {
    if level == 1 {
        (target_table_size / LEVEL1_TABLE_DIVISOR).max(1)
    } else {
        target_table_size
    }
}

/// Target size in bytes of `level` (≥ 1).
pub fn level_target(level: usize, opts: &PickerOptions) -> u64 {
    let mut t = opts.level_base_size.max(1);
    for _ in 1..level {
        t = t.saturating_mul(opts.level_multiplier.max(2));
    }
    t
}

/// How far over its target each level is: ≥ 1.0 means it needs compaction.
pub fn scores(v: &Version, opts: &PickerOptions) -> Vec<(usize, f64)> {
    let mut out = vec![(0, v.level(0).len() as f64 / opts.l0_trigger.max(1) as f64)];
    for level in 1..NUM_LEVELS - 1 {
        out.push((
            level,
            v.level_bytes(level) as f64 / level_target(level, opts) as f64,
        ));
    }
    out
}

/// Picks the most urgent compaction, or `None` when every level is within target.
pub fn pick(v: &Version, opts: &PickerOptions) -> Option<Task> {
    let (level, score) = scores(v, opts)
        .into_iter()
        .filter(|(_, s)| *s >= 1.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let reason = if level == 0 {
        format!(
            "level 0 has {} tables (trigger {})",
            v.level(0).len(),
            opts.l0_trigger
        )
    } else {
        format!("level {level} is {score:.2}x its target")
    };
    if level == 0 {
        return Some(task_for(v, 0, v.level(0).to_vec(), reason));
    }
    // Among the level's tables, the one that overlaps the fewest bytes below:
    // it costs the least rewriting per byte moved down.
    let best = v.level(level).iter().min_by_key(|f| {
        let below: u64 = v
            .overlapping(
                level + 1,
                Some(f.smallest_tree_key()),
                Some(f.largest_tree_key()),
            )
            .iter()
            .map(|g| g.size)
            .sum();
        // Ratio of bytes rewritten to bytes moved, in parts per thousand.
        below.saturating_mul(1000) / f.size.max(1)
    })?;
    Some(task_for(v, level, vec![Arc::clone(best)], reason))
}

/// A task compacting `inputs` from `level` (with everything it overlaps in
/// `level + 1`), or a trivial move when nothing below overlaps and the inputs
/// do not overlap each other.
pub fn task_for(v: &Version, level: usize, inputs: Vec<Arc<FileMeta>>, reason: String) -> Task {
    let (lo, hi) = key_range(inputs.iter());
    let next_inputs = v.overlapping(level + 1, Some(&lo), Some(&hi));
    let trivial_move = next_inputs.is_empty() && !inputs_overlap(&inputs);
    Task {
        level,
        inputs,
        next_inputs,
        trivial_move,
        reason,
    }
}

fn inputs_overlap(files: &[Arc<FileMeta>]) -> bool {
    let mut sorted: Vec<&Arc<FileMeta>> = files.iter().collect();
    sorted.sort_by(|a, b| a.smallest_tree_key().cmp(b.smallest_tree_key()));
    sorted.windows(2).any(|w| match w {
        [a, b] => a.largest_tree_key() >= b.smallest_tree_key(),
        _ => false,
    })
}

/// A task that rewrites tables which may point into blob files being
/// collected (`ranges`: the tree-key ranges of those files' records), so that
/// their live values move to a new blob file: the shallowest level holding
/// such tables is compacted into the next. `None` when only the last level
/// holds them (its tables have no level to go to).
pub fn pick_blob_collection(v: &Version, ranges: &[(Vec<u8>, Vec<u8>)]) -> Option<Task> {
    let hits = |f: &Arc<FileMeta>| {
        ranges
            .iter()
            .any(|(lo, hi)| f.overlaps(Some(lo.as_slice()), Some(hi.as_slice())))
    };
    for level in 0..NUM_LEVELS - 1 {
        let files = v.level(level);
        let inputs: Vec<Arc<FileMeta>> = if level == 0 {
            // Level-0 tables overlap: they go down together, as in `pick`.
            if files.iter().any(hits) {
                files.to_vec()
            } else {
                Vec::new()
            }
        } else {
            files.iter().filter(|f| hits(f)).cloned().collect()
        };
        if inputs.is_empty() {
            continue;
        }
        let mut t = task_for(
            v,
            level,
            inputs,
            format!("blob files to collect are named from level {level}"),
        );
        t.trivial_move = false;
        return Some(t);
    }
    None
}

/// Tasks that together rewrite every table overlapping `[lo, hi]` down to
/// the deepest non-empty level (a manual full or range compaction), one level
/// at a time: returns the first step, or `None` when nothing is left to do.
pub fn pick_manual(
    v: &Version,
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
    from_level: usize,
) -> Option<Task> {
    let deepest = v.deepest_nonempty_level()?;
    for level in from_level..deepest.max(1) {
        let inputs = v.overlapping(level, lo, hi);
        if inputs.is_empty() {
            continue;
        }
        let mut t = task_for(
            v,
            level,
            inputs,
            format!("manual compaction of level {level}"),
        );
        t.trivial_move = false;
        return Some(t);
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::key::{internal_key, tree_key};
    use crate::manifest::VersionEdit;

    fn meta(number: u64, lo: &str, hi: &str, size: u64) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            size,
            smallest: internal_key(&tree_key(0, lo.as_bytes()), number, 1),
            largest: internal_key(&tree_key(0, hi.as_bytes()), number, 1),
            smallest_seqno: number,
            largest_seqno: number,
            entries: 1,
        })
    }

    #[test]
    fn level_1_tables_are_cut_at_a_quarter_of_the_target() {
        assert_eq!(output_table_size(1, 64 << 20), 16 << 20);
        for level in [0, 2, 3, 6] {
            assert_eq!(output_table_size(level, 64 << 20), 64 << 20);
        }
        assert_eq!(output_table_size(1, 2), 1, "never zero");
    }

    #[test]
    fn blob_collection_takes_the_shallowest_overlapping_level() {
        let v = version(&[
            (1, meta(1, "a", "c", 10)),
            (1, meta(2, "m", "p", 10)),
            (2, meta(3, "a", "z", 10)),
            (6, meta(4, "a", "z", 10)),
        ]);
        let ranges = [(tree_key(0, b"n"), tree_key(0, b"o"))];
        let t = pick_blob_collection(&v, &ranges).unwrap();
        assert_eq!((t.level, t.inputs.len(), t.inputs[0].number), (1, 1, 2));
        assert_eq!(
            t.next_inputs.iter().map(|f| f.number).collect::<Vec<_>>(),
            vec![3]
        );
        assert!(!t.trivial_move);
        let only_last = version(&[(6, meta(4, "a", "z", 10))]);
        assert!(pick_blob_collection(&only_last, &ranges).is_none());
        assert!(pick_blob_collection(&v, &[(tree_key(1, b""), tree_key(1, b"z"))]).is_none());
    }

    fn version(files: &[(usize, Arc<FileMeta>)]) -> Version {
        let e = VersionEdit {
            new_files: files.to_vec(),
            ..Default::default()
        };
        Version::default().apply(&e).unwrap()
    }

    fn opts() -> PickerOptions {
        PickerOptions {
            l0_trigger: 4,
            level_base_size: 1000,
            level_multiplier: 10,
        }
    }

    /// Renders a decision as one line, for golden comparisons.
    fn show(t: Option<Task>) -> String {
        match t {
            None => "nothing".into(),
            Some(t) => format!(
                "L{} {:?} + L{} {:?}{} ({})",
                t.level,
                t.inputs.iter().map(|f| f.number).collect::<Vec<_>>(),
                t.output_level(),
                t.next_inputs.iter().map(|f| f.number).collect::<Vec<_>>(),
                if t.trivial_move { " move" } else { "" },
                t.reason
            ),
        }
    }

    #[test]
    fn golden_decisions() {
        let cases: Vec<(Version, &str)> = vec![
            (version(&[]), "nothing"),
            (
                version(&[
                    (0, meta(1, "a", "z", 10)),
                    (0, meta(2, "a", "z", 10)),
                    (0, meta(3, "a", "z", 10)),
                ]),
                "nothing",
            ),
            (
                version(&[
                    (0, meta(1, "a", "c", 10)),
                    (0, meta(2, "d", "f", 10)),
                    (0, meta(3, "g", "i", 10)),
                    (0, meta(4, "j", "l", 10)),
                ]),
                "L0 [4, 3, 2, 1] + L1 [] move (level 0 has 4 tables (trigger 4))",
            ),
            (
                version(&[
                    (0, meta(1, "a", "m", 10)),
                    (0, meta(2, "d", "f", 10)),
                    (0, meta(3, "g", "i", 10)),
                    (0, meta(4, "j", "l", 10)),
                    (1, meta(5, "b", "c", 10)),
                    (1, meta(6, "x", "y", 10)),
                ]),
                "L0 [4, 3, 2, 1] + L1 [5] (level 0 has 4 tables (trigger 4))",
            ),
            (
                version(&[
                    (1, meta(1, "a", "c", 600)),
                    (1, meta(2, "d", "f", 600)),
                    (2, meta(3, "a", "b", 500)),
                ]),
                "L1 [2] + L2 [] move (level 1 is 1.20x its target)",
            ),
        ];
        for (v, want) in cases {
            assert_eq!(show(pick(&v, &opts())), want);
        }
    }

    #[test]
    fn manual_compaction_walks_down_to_the_deepest_level() {
        let v = version(&[(0, meta(1, "a", "c", 10)), (2, meta(2, "a", "b", 10))]);
        assert_eq!(
            show(pick_manual(&v, None, None, 0)),
            "L0 [1] + L1 [] (manual compaction of level 0)"
        );
        assert_eq!(show(pick_manual(&v, None, None, 1)), "nothing");
        let v2 = version(&[(1, meta(1, "a", "c", 10)), (2, meta(2, "a", "b", 10))]);
        assert_eq!(
            show(pick_manual(&v2, None, None, 0)),
            "L1 [1] + L2 [2] (manual compaction of level 1)"
        );
        assert_eq!(level_target(3, &opts()), 100_000);
    }
}
