//! How the keys met by a point lookup's scan of a restart interval stand
//! against its target, told from each entry's shared length and suffix
//! alone: the keys the scan passes are never rebuilt, and only the one it
//! stops at is (from the target's bytes and the entry's suffix).
//!
//! An entry's key is the previous key's first `shared` bytes followed by
//! its suffix (docs/format.md#block). Knowing how many bytes the previous
//! key has in common with the target, and its byte after them, is enough
//! to know the same of the next key, reading only the next key's suffix:
//! a key sharing no more with the previous key than the previous key does
//! with the target starts with the target's own bytes.

use super::block_builder::common_prefix;
use crate::key::TRAILER_LEN;
use std::cmp::Ordering;

/// What is known of the last key taken in against the target.
pub(super) struct Against<'t> {
    target: &'t [u8],
    /// Bytes the key has in common with the target, from the first.
    common: usize,
    /// The key's byte at `common`, if it is longer than that.
    next_byte: Option<u8>,
    /// The key's length (0 before the first).
    len: usize,
    /// Whether the key is the target's first `shared` bytes and its suffix
    /// (it shares no more with the key before it than that key shares
    /// with the target), so that [`Against::rebuild`] can rebuild it.
    rebuildable: bool,
}

impl<'t> Against<'t> {
    /// A scan towards the internal key `target`, before its first entry;
    /// `None` for a target shorter than a trailer (no tree key to compare).
    pub fn new(target: &'t [u8]) -> Option<Against<'t>> {
        (target.len() >= TRAILER_LEN).then_some(Against {
            target,
            common: 0,
            next_byte: None,
            len: 0,
            rebuildable: false,
        })
    }

    /// Takes in the next key, the last one's first `shared` bytes and
    /// `suffix`, and returns its order against the target by
    /// [`crate::key::compare`]; `None` when that cannot be told without
    /// the last key's bytes (keys sharing trailer bytes, or shorter than a
    /// trailer), or the entry does not fit the last key (more shared
    /// bytes than it has). The scan is then done again the full way.
    #[inline]
    pub fn next(&mut self, shared: usize, suffix: &[u8]) -> Option<Ordering> {
        if shared > self.len {
            return None;
        }
        let len = shared + suffix.len();
        let target = self.target;
        self.rebuildable = shared <= self.common;
        if self.rebuildable {
            // The key starts with the target's first `shared` bytes.
            let rest = target.get(shared..).unwrap_or(&[]);
            let same = common_prefix(suffix, rest);
            self.common = shared + same;
            self.next_byte = suffix.get(same).copied();
        }
        // Otherwise the key has the last key's bytes up to and past
        // `common`, where that key parted from the target: the same
        // `common` and `next_byte`.
        self.len = len;
        let key_tree = len.checked_sub(TRAILER_LEN)?;
        let target_tree = target.len() - TRAILER_LEN;
        let common = self.common;
        Some(if common < key_tree && common < target_tree {
            // The tree keys differ at `common`.
            self.next_byte?.cmp(target.get(common)?)
        } else if key_tree == target_tree {
            // The same tree key: the newer entry (the larger trailer) first.
            let at = key_tree.checked_sub(shared)?;
            let trailer = u64::from_le_bytes(suffix.get(at..)?.try_into().ok()?);
            let wanted = u64::from_le_bytes(target.get(target_tree..)?.try_into().ok()?);
            wanted.cmp(&trailer)
        } else if key_tree < target_tree {
            // The key's tree key is the start of the target's.
            Ordering::Less
        } else {
            // The target's tree key is the start of the key's.
            Ordering::Greater
        })
    }

    /// Rebuilds into `key` the key last taken in, given its `shared` and
    /// `suffix` again; false if it cannot be rebuilt from the target (see
    /// `rebuildable`).
    pub fn rebuild(&self, shared: usize, suffix: &[u8], key: &mut super::key_buf::KeyBuf) -> bool {
        let Some(head) = self.target.get(..shared).filter(|_| self.rebuildable) else {
            return false;
        };
        key.assign(head, suffix);
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::key::{self, Kind};

    /// Keys encoded as a block encodes them: (shared, suffix) against the
    /// key before.
    fn encode(keys: &[Vec<u8>]) -> Vec<(usize, Vec<u8>)> {
        let mut prev: &[u8] = &[];
        keys.iter()
            .map(|k| {
                let shared = common_prefix(prev, k);
                prev = k;
                (shared, k[shared..].to_vec())
            })
            .collect()
    }

    fn ikey(tree: &[u8], seqno: u64) -> Vec<u8> {
        key::internal_key(tree, seqno, Kind::Put as u8)
    }

    /// Every key's order against every target, and every key found
    /// rebuilt, as the full comparison of rebuilt keys says.
    #[test]
    fn tells_the_order_of_every_key_as_the_full_comparison_does() {
        let mut keys = Vec::new();
        for tree in [
            &b"a"[..],
            b"ab",
            b"abc",
            b"abd",
            b"b",
            b"ba",
            b"bab",
            b"c\xff",
            b"c\xff\x00",
        ] {
            for seqno in [900, 300, 299, 5, 1] {
                keys.push(ikey(tree, seqno));
            }
        }
        keys.sort_by(|a, b| key::compare(a, b));
        let entries = encode(&keys);
        let mut targets: Vec<Vec<u8>> = keys.clone();
        for tree in [
            &b""[..],
            b"a\x00",
            b"aa",
            b"abb",
            b"abcd",
            b"bb",
            b"c",
            b"c\xff\x00\x00",
            b"d",
        ] {
            for seqno in [1000, 300, 0] {
                targets.push(ikey(tree, seqno));
            }
        }
        let mut told = 0;
        for target in &targets {
            let mut a = Against::new(target).unwrap();
            for (i, (shared, suffix)) in entries.iter().enumerate() {
                // Untold: a scan starts over the full way.
                let Some(ord) = a.next(*shared, suffix) else {
                    break;
                };
                told += 1;
                assert_eq!(
                    ord,
                    key::compare(&keys[i], target),
                    "key {i} against {target:?}"
                );
                let mut k = super::super::key_buf::KeyBuf::new();
                if a.rebuild(*shared, suffix, &mut k) {
                    assert_eq!(&k[..], &keys[i][..]);
                }
                if ord != Ordering::Less {
                    break;
                }
            }
        }
        assert!(told > targets.len() * 3, "most keys are told: {told}");
    }

    #[test]
    fn an_entry_sharing_more_than_the_last_key_has_is_not_told() {
        let target = ikey(b"abc", 7);
        let mut a = Against::new(&target).unwrap();
        assert_eq!(a.next(0, &ikey(b"ab", 7)), Some(Ordering::Less));
        assert_eq!(a.next(11, b"x"), None);
        assert!(Against::new(b"short").is_none());
    }
}
