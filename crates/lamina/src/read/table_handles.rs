//! The open tables of one published version, kept beside it for point reads.
//!
//! A point read finds the tables that may hold its key in the version's
//! file lists, then needs each of them open. Asking the table cache for one
//! takes a shard lock and a hash probe, and a reference count taken and
//! dropped: on every read, for every table it asks. The first read that
//! gets a table from the cache leaves a handle to it here, in the slot of
//! the file's place in the version, and later reads of the same version
//! borrow it: one load, no lock, no count.
//!
//! Handles are kept only for a version of no more tables than the table
//! cache keeps open at once, so that the files they hold open stay within
//! its bound (twice it at most, with the tables the cache holds for other
//! versions' readers). They are let go with the version's [`Pinned`]
//! (replaced at every flush and compaction) or with the database.
//!
//! [`Pinned`]: super::point::Pinned

use crate::manifest::{Version, NUM_LEVELS};
use crate::table::Table;
use std::sync::{Arc, OnceLock};

/// One slot a table of a version, level by level in the version's order.
/// A clone shares the slots: every view published over the same version
/// (a new memtable does not change the tables) fills and reads the same.
#[derive(Clone)]
pub(crate) struct TableHandles {
    slots: Arc<[OnceLock<Arc<Table>>]>,
    /// Where each level's slots start.
    starts: [usize; NUM_LEVELS],
}

impl TableHandles {
    /// Empty slots for the tables of `version`; none at all when it lists
    /// more than `most` tables (the table cache's capacity).
    pub fn new(version: &Version, most: usize) -> TableHandles {
        let mut starts = [0; NUM_LEVELS];
        let mut total = 0;
        for (level, start) in starts.iter_mut().enumerate() {
            *start = total;
            total += version.level(level).len();
        }
        let total = if total <= most { total } else { 0 };
        TableHandles {
            slots: (0..total).map(|_| OnceLock::new()).collect(),
            starts,
        }
    }

    /// The handle kept for the table at place `i` of `level`, if any.
    pub fn get(&self, level: usize, i: usize) -> Option<&Arc<Table>> {
        self.slot(level, i)?.get()
    }

    /// Keeps `table` as the table at place `i` of `level` (nothing if a
    /// handle is kept there already, or the version keeps none).
    /// REQUIRES: `table` is the table the version lists there.
    pub fn keep(&self, level: usize, i: usize, table: &Arc<Table>) {
        if let Some(slot) = self.slot(level, i) {
            let _ = slot.set(Arc::clone(table));
        }
    }

    fn slot(&self, level: usize, i: usize) -> Option<&OnceLock<Arc<Table>>> {
        self.slots.get(self.starts.get(level)?.checked_add(i)?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::manifest::{FileMeta, VersionEdit};

    fn version(levels: &[(usize, u64)]) -> Version {
        let mut edit = VersionEdit::default();
        for &(level, number) in levels {
            let k = crate::key::tree_key(0, format!("k{number:03}").as_bytes());
            let ik = crate::key::internal_key(&k, number, 1);
            let meta = FileMeta {
                number,
                size: 100,
                smallest: ik.clone(),
                largest: ik,
                smallest_seqno: number,
                largest_seqno: number,
                entries: 1,
            };
            edit.new_files.push((level, Arc::new(meta)));
        }
        Version::default().apply(&edit).unwrap()
    }

    #[test]
    fn places_are_told_apart_by_level_and_none_kept_past_the_bound() {
        let v = version(&[(0, 1), (0, 2), (1, 3), (1, 4), (3, 5)]);
        let h = TableHandles::new(&v, 5);
        assert_eq!(h.slots.len(), 5);
        assert_eq!(h.starts, [0, 2, 4, 4, 5, 5, 5]);
        assert!(h.slot(1, 1).is_some() && h.slot(3, 0).is_some());
        assert!(h.slot(3, 1).is_none(), "past the last table");
        let none = TableHandles::new(&v, 4);
        assert!(
            none.slot(0, 0).is_none(),
            "more tables than the cache keeps open: no handles"
        );
    }
}
