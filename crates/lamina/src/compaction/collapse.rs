//! Which entries of one key survive a flush or a compaction.
//!
//! Readers see a key as of a seqno: the current one or a live snapshot's. The
//! snapshots cut the key's entries (newest first) into *stripes*; every reader
//! whose seqno falls in a stripe sees the same newest entry of it, so within a
//! stripe only what that entry resolves to must be kept:
//! - a Put or Delete hides everything older in its stripe;
//! - Merge operands above a Put/Delete fold into one Put;
//! - Merge operands with nothing below them in the stripe combine into one
//!   operand when the operator allows (`partial_merge`), or into a Put when
//!   the output is the bottommost data for the key and the stripe is the oldest;
//! - in bottommost output the oldest surviving tombstones are dropped.
//!
//! Entries of dropped keyspaces are removed by the caller.

use crate::key::{self, Kind, SeqNo};
use crate::merge::MergeOperator;

/// One entry of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Sequence number.
    pub seqno: SeqNo,
    /// Kind.
    pub kind: Kind,
    /// Value or operand (empty for Delete).
    pub value: Vec<u8>,
}

/// Index of the stripe of `seqno` given snapshots sorted ascending.
fn stripe(seqno: SeqNo, snapshots: &[SeqNo]) -> usize {
    snapshots.partition_point(|&s| s < seqno)
}

/// Collapses the entries of `tree_key` (newest first) into the entries that
/// must be kept (newest first). `bottommost` means no older entry of the key
/// exists outside `entries`.
pub fn collapse(
    tree_key: &[u8],
    entries: Vec<Entry>,
    snapshots: &[SeqNo],
    bottommost: bool,
    op: &dyn MergeOperator,
) -> Vec<Entry> {
    let user_key = tree_key.get(key::KEYSPACE_ID_LEN..).unwrap_or(&[]);
    let mut out: Vec<Entry> = Vec::with_capacity(1);
    let mut rest = entries.as_slice();
    while let Some(head) = rest.first() {
        let s = stripe(head.seqno, snapshots);
        let run_len = rest
            .iter()
            .take_while(|e| stripe(e.seqno, snapshots) == s)
            .count();
        let (run, after) = rest.split_at(run_len);
        rest = after;
        let oldest = rest.is_empty();
        match head.kind {
            Kind::Put | Kind::Delete | Kind::Blob => out.push(head.clone()),
            Kind::Merge => {
                let ops_len = run.iter().take_while(|e| e.kind == Kind::Merge).count();
                let operands: Vec<&[u8]> = run
                    .iter()
                    .take(ops_len)
                    .rev()
                    .map(|e| e.value.as_slice())
                    .collect();
                let base = run.get(ops_len);
                let folded = match base {
                    // Folding onto a value in a blob file would read it: the
                    // operands stay, and reads fold them.
                    Some(b) if b.kind == Kind::Blob => None,
                    Some(b) => {
                        let base_value = (b.kind == Kind::Put).then_some(b.value.as_slice());
                        op.full_merge(user_key, base_value, &operands)
                            .ok()
                            .map(|v| (Kind::Put, v))
                    }
                    None if oldest && bottommost => op
                        .full_merge(user_key, None, &operands)
                        .ok()
                        .map(|v| (Kind::Put, v)),
                    None if operands.len() > 1 => op
                        .partial_merge(user_key, &operands)
                        .map(|v| (Kind::Merge, v)),
                    None => None,
                };
                match folded {
                    Some((kind, value)) => out.push(Entry {
                        seqno: head.seqno,
                        kind,
                        value,
                    }),
                    // Cannot fold: keep the operands and the entry below them as they are.
                    None => out.extend(
                        run.iter()
                            .take(ops_len + usize::from(base.is_some()))
                            .cloned(),
                    ),
                }
            }
        }
    }
    if bottommost {
        while out.last().is_some_and(|e| e.kind == Kind::Delete) {
            out.pop();
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::merge::{Add, Append};

    fn put(seqno: SeqNo, v: &str) -> Entry {
        Entry {
            seqno,
            kind: Kind::Put,
            value: v.as_bytes().to_vec(),
        }
    }
    fn del(seqno: SeqNo) -> Entry {
        Entry {
            seqno,
            kind: Kind::Delete,
            value: vec![],
        }
    }
    fn mrg(seqno: SeqNo, v: &str) -> Entry {
        Entry {
            seqno,
            kind: Kind::Merge,
            value: v.as_bytes().to_vec(),
        }
    }
    fn run(entries: Vec<Entry>, snaps: &[SeqNo], bottom: bool) -> Vec<Entry> {
        collapse(b"\0\0\0\0k", entries, snaps, bottom, &Append)
    }

    #[test]
    fn newest_put_hides_older_without_snapshots() {
        assert_eq!(
            run(vec![put(9, "c"), put(5, "b"), del(3)], &[], false),
            vec![put(9, "c")]
        );
    }

    #[test]
    fn snapshots_keep_what_they_see() {
        assert_eq!(
            run(vec![put(9, "c"), put(5, "b"), put(3, "a")], &[6], false),
            vec![put(9, "c"), put(5, "b")]
        );
        assert_eq!(
            run(vec![put(9, "c"), put(5, "b"), put(3, "a")], &[3, 6], false),
            vec![put(9, "c"), put(5, "b"), put(3, "a")]
        );
    }

    #[test]
    fn merges_fold_onto_base_or_combine() {
        assert_eq!(
            run(vec![mrg(9, "c"), mrg(8, "b"), put(5, "a")], &[], false),
            vec![put(9, "abc")]
        );
        assert_eq!(
            run(vec![mrg(9, "c"), mrg(8, "b")], &[], false),
            vec![mrg(9, "bc")]
        );
        assert_eq!(
            run(vec![mrg(9, "c"), mrg(8, "b")], &[], true),
            vec![put(9, "bc")]
        );
        assert_eq!(
            run(vec![mrg(9, "c"), del(8), put(5, "a")], &[], false),
            vec![put(9, "c")]
        );
        assert_eq!(
            run(vec![mrg(9, "c"), mrg(4, "b"), put(2, "a")], &[5], false),
            vec![mrg(9, "c"), put(4, "ab")]
        );
    }

    #[test]
    fn bottommost_drops_oldest_tombstones_only() {
        assert_eq!(run(vec![del(9), put(5, "a")], &[], true), vec![]);
        assert_eq!(
            run(vec![put(9, "b"), del(5)], &[6], true),
            vec![put(9, "b")]
        );
        assert_eq!(
            run(vec![del(9), put(5, "a")], &[6], true),
            vec![del(9), put(5, "a")]
        );
        assert_eq!(run(vec![del(9)], &[], false), vec![del(9)]);
    }

    #[test]
    fn unfoldable_merges_are_kept() {
        let bad = vec![
            Entry {
                seqno: 9,
                kind: Kind::Merge,
                value: 1u64.to_le_bytes().to_vec(),
            },
            put(5, "abc"),
        ];
        let out = collapse(b"\0\0\0\0k", bad.clone(), &[], true, &Add);
        assert_eq!(out, bad);
    }
}
