//! A transaction's validation at commit: nothing it read has changed since
//! its snapshot. Run under the commit lock, on the published view, by the commit, once every
//! writer that took seqnos has inserted into the memtable and before the
//! transaction's batch takes its own (docs/design.md#transactions).

use crate::db::Counters;
use crate::error::{Error, Result};
use crate::key::SeqNo;
use crate::merge::describe_key;
use crate::read::Pinned;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::atomic::Ordering;

/// A range of tree keys.
pub(crate) type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// What a transaction read from its snapshot: keys (tree keys, found or
/// missing) and ranges of tree keys it scanned.
#[derive(Debug, Default)]
pub(crate) struct ReadSet {
    pub keys: BTreeSet<Vec<u8>>,
    pub ranges: Vec<KeyRange>,
}

impl ReadSet {
    /// True when the transaction read nothing from its snapshot.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.ranges.is_empty()
    }
}

/// `Ok` if no entry newer than `seqno` (the snapshot) was written to a key
/// or range of `reads`; otherwise [`Error::Conflict`] naming one, counted.
/// REQUIRES: the commit lock is held and every writer that took seqnos has
/// inserted, so the published view's memtables hold every write newer than
/// its tables.
pub(crate) fn validate(
    view: &Pinned,
    counters: &Counters,
    seqno: SeqNo,
    reads: &ReadSet,
) -> Result<()> {
    if reads.is_empty() {
        return Ok(());
    }
    if view.tables_seqno > seqno {
        // A flush or an ingest wrote newer entries to a table: which keys
        // they touch would take reading the tables, so it is refused.
        counters
            .txn_conflicts_unverifiable
            .fetch_add(1, Ordering::Relaxed);
        counters.txn_conflicts.fetch_add(1, Ordering::Relaxed);
        return Err(Error::Conflict(format!(
            "a flush or an ingest since the transaction began (at seqno {seqno}) wrote newer \
             entries to a table, so what it read can no longer be checked; run it again"
        )));
    }
    let conflict = |why: String| {
        counters.txn_conflicts.fetch_add(1, Ordering::Relaxed);
        Err(Error::Conflict(why))
    };
    for tk in &reads.keys {
        let newer = view
            .mems
            .iter()
            .filter_map(|m| m.newest_seqno(tk))
            .any(|s| s > seqno);
        if newer {
            return conflict(format!(
                "{} was written by another writer after the transaction read it",
                describe_key(tk)
            ));
        }
    }
    for (lo, hi) in &reads.ranges {
        let (lo, hi) = (as_slice(lo), as_slice(hi));
        if let Some(tk) = view
            .mems
            .iter()
            .find_map(|m| m.newer_in_range(lo, hi, seqno))
        {
            return conflict(format!(
                "{} was written by another writer in a range the transaction scanned",
                describe_key(&tk)
            ));
        }
    }
    Ok(())
}

fn as_slice(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(v) => Bound::Included(v.as_slice()),
        Bound::Excluded(v) => Bound::Excluded(v.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::key::{tree_key, Kind};
    use crate::memtable::Memtable;
    use std::ops::Bound::{Excluded, Included, Unbounded};

    /// A memtable of the smallest size: key `k` written at seqnos 1 and 5,
    /// `m` at 3, `p` at 7 (a delete).
    fn memtable() -> Memtable {
        let m = Memtable::new(1, 1);
        m.insert(&tree_key(0, b"k"), 1, Kind::Put, b"1");
        m.insert(&tree_key(0, b"m"), 3, Kind::Put, b"3");
        m.insert(&tree_key(0, b"k"), 5, Kind::Merge, b"5");
        m.insert(&tree_key(0, b"p"), 7, Kind::Delete, b"");
        m
    }

    #[test]
    fn the_newest_seqno_of_a_key_is_its_first_entry_in_any_list() {
        let m = memtable();
        assert_eq!(m.newest_seqno(&tree_key(0, b"k")), Some(5));
        assert_eq!(m.newest_seqno(&tree_key(0, b"p")), Some(7));
        assert_eq!(m.newest_seqno(&tree_key(0, b"l")), None);
        assert_eq!(m.newest_seqno(&tree_key(1, b"k")), None, "another keyspace");
    }

    #[test]
    fn a_range_finds_newer_entries_within_its_bounds_only() {
        let m = memtable();
        let (k, m_, p) = (tree_key(0, b"k"), tree_key(0, b"m"), tree_key(0, b"p"));
        assert_eq!(
            m.newer_in_range(Included(&k[..]), Included(&p[..]), 6),
            Some(p.clone())
        );
        assert_eq!(
            m.newer_in_range(Included(&k[..]), Excluded(&p[..]), 6),
            None
        );
        assert_eq!(
            m.newer_in_range(Included(&k[..]), Excluded(&p[..]), 4),
            Some(k.clone())
        );
        assert_eq!(
            m.newer_in_range(Excluded(&k[..]), Excluded(&p[..]), 2),
            Some(m_.clone())
        );
        assert_eq!(
            m.newer_in_range(Excluded(&k[..]), Excluded(&p[..]), 3),
            None
        );
        assert_eq!(m.newer_in_range(Unbounded, Unbounded, 6), Some(p));
        assert_eq!(m.newer_in_range(Unbounded, Unbounded, 7), None);
        let after = tree_key(0, b"q");
        assert_eq!(m.newer_in_range(Included(&after[..]), Unbounded, 0), None);
    }
}
