//! A version: the set of live tables, level by level. Immutable; readers pin
//! one with an `Arc` and the tables it names stay on disk while they do.

use super::edit::{FileMeta, VersionEdit};
use crate::key;
use std::cmp::Ordering;
use std::sync::Arc;

/// Number of levels (0 to 6).
pub const NUM_LEVELS: usize = 7;

/// The live tables. Level 0 is ordered newest first (its tables may overlap);
/// every other level is ordered by smallest key and its tables do not overlap.
#[derive(Debug, Clone, Default)]
pub struct Version {
    levels: [Vec<Arc<FileMeta>>; NUM_LEVELS],
    /// Live blob files by number.
    blobs: std::collections::BTreeMap<u64, Arc<crate::blob::BlobMeta>>,
    /// Dead value bytes of live blob files (absent = none).
    blob_dead: std::collections::BTreeMap<u64, u64>,
}

impl Version {
    /// The tables of `level` in search order. Out-of-range levels are empty.
    pub fn level(&self, level: usize) -> &[Arc<FileMeta>] {
        self.levels.get(level).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Total bytes of the tables in `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.level(level).iter().map(|f| f.size).sum()
    }

    /// Every live table with its level.
    pub fn all_files(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(l, fs)| fs.iter().map(move |f| (l, f)))
    }

    #[cfg(any(test, feature = "internals"))]
    /// Number of live tables.
    pub fn file_count(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }

    /// The deepest level holding a table, if any.
    pub fn deepest_nonempty_level(&self) -> Option<usize> {
        (0..NUM_LEVELS).rev().find(|&l| !self.level(l).is_empty())
    }

    /// The tables of `level` whose tree-key range meets `[lo, hi]`.
    pub fn overlapping(
        &self,
        level: usize,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
    ) -> Vec<Arc<FileMeta>> {
        self.level(level)
            .iter()
            .filter(|f| f.overlaps(lo, hi))
            .cloned()
            .collect()
    }

    /// For a level ≥ 1: the table that may hold `tree_key`, and its place
    /// in [`Version::level`].
    pub fn find_in_level(&self, level: usize, tree_key: &[u8]) -> Option<(usize, &Arc<FileMeta>)> {
        let files = self.level(level);
        let i = files.partition_point(|f| f.largest_tree_key() < tree_key);
        files
            .get(i)
            .filter(|f| f.smallest_tree_key() <= tree_key)
            .map(|f| (i, f))
    }

    /// The version after `edit`; `Err` names an inconsistency (a deleted table
    /// that is not there, overlapping tables in a level ≥ 1).
    pub fn apply(&self, edit: &VersionEdit) -> Result<Version, String> {
        let mut v = self.clone();
        for (level, number) in &edit.deleted_files {
            let files = v
                .levels
                .get_mut(*level)
                .ok_or_else(|| format!("level {level} out of range"))?;
            let before = files.len();
            files.retain(|f| f.number != *number);
            if files.len() == before {
                return Err(format!(
                    "table {number:06} deleted from level {level}, which does not hold it"
                ));
            }
        }
        for (level, f) in &edit.new_files {
            v.levels
                .get_mut(*level)
                .ok_or_else(|| format!("level {level} out of range"))?
                .push(Arc::clone(f));
        }
        v.apply_blobs(edit)?;
        v.sort();
        v.validate()?;
        Ok(v)
    }

    fn apply_blobs(&mut self, edit: &VersionEdit) -> Result<(), String> {
        for m in &edit.new_blobs {
            if self.blobs.insert(m.number, Arc::clone(m)).is_some() {
                return Err(format!("blob file {:06} is added twice", m.number));
            }
        }
        for n in &edit.deleted_blobs {
            if self.blobs.remove(n).is_none() {
                return Err(format!("blob file {n:06} removed, but it is not live"));
            }
            self.blob_dead.remove(n);
        }
        for (n, dead) in &edit.blob_dead {
            let m = self.blobs.get(n).ok_or_else(|| {
                format!("dead bytes recorded for blob file {n:06}, which is not live")
            })?;
            if *dead > m.value_bytes {
                return Err(format!(
                    "blob file {n:06} has {dead} dead bytes of {} value bytes",
                    m.value_bytes
                ));
            }
            self.blob_dead.insert(*n, *dead);
        }
        Ok(())
    }

    /// Live blob files by number.
    pub fn blobs(&self) -> &std::collections::BTreeMap<u64, Arc<crate::blob::BlobMeta>> {
        &self.blobs
    }

    /// Dead value bytes of blob file `number` (0 if none or not live).
    pub fn blob_dead(&self, number: u64) -> u64 {
        self.blob_dead.get(&number).copied().unwrap_or(0)
    }

    fn sort(&mut self) {
        let mut levels = self.levels.iter_mut();
        if let Some(l0) = levels.next() {
            l0.sort_by(|a, b| {
                b.largest_seqno
                    .cmp(&a.largest_seqno)
                    .then(b.number.cmp(&a.number))
            });
        }
        for files in levels {
            files.sort_by(|a, b| key::compare(&a.smallest, &b.smallest));
        }
    }

    /// Checks the invariants: levels ≥ 1 sorted and non-overlapping, every
    /// table's smallest key ≤ its largest, no table listed twice.
    pub fn validate(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for (level, files) in self.levels.iter().enumerate() {
            for f in files {
                if !seen.insert(f.number) {
                    return Err(format!("table {:06} is listed twice", f.number));
                }
                if key::compare(&f.smallest, &f.largest) == Ordering::Greater {
                    return Err(format!(
                        "table {:06} has smallest key after largest key",
                        f.number
                    ));
                }
            }
            if level == 0 {
                continue;
            }
            for pair in files.windows(2) {
                if let [a, b] = pair {
                    if a.largest_tree_key() >= b.smallest_tree_key() {
                        return Err(format!(
                            "tables {:06} and {:06} overlap in level {level}",
                            a.number, b.number
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// An edit that recreates this version from nothing (the first record of a manifest).
    pub fn snapshot_edit(&self) -> VersionEdit {
        let mut e = VersionEdit::default();
        for (level, f) in self.all_files() {
            e.new_files.push((level, Arc::clone(f)));
        }
        e.new_blobs = self.blobs.values().cloned().collect();
        e.blob_dead = self.blob_dead.iter().map(|(n, d)| (*n, *d)).collect();
        e
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::key::{internal_key, tree_key};

    pub(crate) fn meta(number: u64, lo: &[u8], hi: &[u8], seq: u64) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            size: 100,
            smallest: internal_key(&tree_key(0, lo), seq, 1),
            largest: internal_key(&tree_key(0, hi), seq, 1),
            smallest_seqno: seq,
            largest_seqno: seq,
            entries: 1,
        })
    }

    #[test]
    fn apply_orders_levels_and_refuses_overlap() {
        let mut e = VersionEdit::default();
        e.new_files.push((0, meta(1, b"a", b"m", 1)));
        e.new_files.push((0, meta(2, b"c", b"z", 2)));
        e.new_files.push((1, meta(4, b"n", b"p", 1)));
        e.new_files.push((1, meta(3, b"a", b"c", 1)));
        let v = Version::default().apply(&e).unwrap();
        assert_eq!(
            v.level(0).iter().map(|f| f.number).collect::<Vec<_>>(),
            vec![2, 1]
        );
        assert_eq!(
            v.level(1).iter().map(|f| f.number).collect::<Vec<_>>(),
            vec![3, 4]
        );
        assert_eq!(
            v.find_in_level(1, &tree_key(0, b"o"))
                .map(|(i, f)| (i, f.number)),
            Some((1, 4))
        );
        assert!(v.find_in_level(1, &tree_key(0, b"d")).is_none());
        let mut bad = VersionEdit::default();
        bad.new_files.push((1, meta(5, b"b", b"d", 3)));
        assert!(v.apply(&bad).unwrap_err().contains("overlap"));
        let mut missing = VersionEdit::default();
        missing.deleted_files.push((2, 3));
        assert!(v.apply(&missing).is_err());
    }
}
