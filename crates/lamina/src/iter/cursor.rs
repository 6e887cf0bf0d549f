//! The user-visible view of the tree: one value per key as of a seqno, merge
//! operands folded, tombstones hidden, within tree-key bounds.

use super::merging::MergingIter;
use super::InternalIterator;
use crate::error::{Error, Result};
use crate::key::{self, Kind, SeqNo};
use crate::merge::MergeOperator;
use std::ops::Bound;

/// Folds the entries of the key `tree_key`, newest first, into its value
/// (`None` if deleted or absent). An operator that refuses to fold gives
/// [`Error::Merge`] naming the key and its keyspace.
pub fn resolve<'a>(
    tree_key: &[u8],
    entries: impl Iterator<Item = (Kind, &'a [u8])>,
    op: &dyn MergeOperator,
) -> Result<Option<Vec<u8>>> {
    let mut operands: Vec<&[u8]> = Vec::new();
    let mut base: Option<&[u8]> = None;
    for (kind, value) in entries {
        match kind {
            Kind::Put => {
                base = Some(value);
                break;
            }
            Kind::Delete => break,
            Kind::Merge => operands.push(value),
            Kind::Blob => {
                return Err(Error::corruption(
                    "<tree>",
                    0,
                    "a blob pointer was resolved without its blob file",
                ))
            }
        }
    }
    if operands.is_empty() {
        return Ok(base.map(<[u8]>::to_vec));
    }
    operands.reverse();
    let user_key = tree_key.get(key::KEYSPACE_ID_LEN..).unwrap_or_default();
    op.full_merge(user_key, base, &operands)
        .map(Some)
        .map_err(|why| crate::merge::merge_error(tree_key, &why))
}

/// Whether the key whose newest visible entry is of `kind` has a value,
/// without folding anything: a Put or a Merge operand says yes.
fn present(newest: Option<Kind>) -> Option<Vec<u8>> {
    match newest {
        Some(Kind::Put | Kind::Merge | Kind::Blob) => Some(Vec::new()),
        _ => None,
    }
}

/// A one-directional cursor over user entries (tree key, value).
pub struct Cursor {
    it: MergingIter,
    seqno: SeqNo,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    merge_operator: std::sync::Arc<dyn MergeOperator>,
    started: bool,
    scratch: Vec<(Kind, Vec<u8>)>,
    blobs: Option<std::sync::Arc<crate::blob::BlobStore>>,
    /// Yield keys with empty values, folding no merge operand.
    keys_only: bool,
    /// The tree key of the last key resolved (returned or failed).
    last: Option<Vec<u8>>,
    /// Entries stepped over so far, every version of every key passed.
    stepped: u64,
}

fn above_lower(tk: &[u8], lower: &Bound<Vec<u8>>) -> bool {
    match lower {
        Bound::Included(l) => tk >= l.as_slice(),
        Bound::Excluded(l) => tk > l.as_slice(),
        Bound::Unbounded => true,
    }
}

fn below_upper(tk: &[u8], upper: &Bound<Vec<u8>>) -> bool {
    match upper {
        Bound::Included(u) => tk <= u.as_slice(),
        Bound::Excluded(u) => tk < u.as_slice(),
        Bound::Unbounded => true,
    }
}

fn malformed(k: &[u8]) -> Error {
    Error::corruption(
        "<tree>",
        0,
        format!("malformed internal key of {} bytes", k.len()),
    )
}

impl Cursor {
    /// A cursor over `it` showing entries visible at `seqno` whose tree keys lie in the bounds.
    pub fn new(
        it: MergingIter,
        seqno: SeqNo,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        merge_operator: std::sync::Arc<dyn MergeOperator>,
    ) -> Cursor {
        Cursor {
            it,
            seqno,
            lower,
            upper,
            merge_operator,
            started: false,
            scratch: Vec::new(),
            keys_only: false,
            last: None,
            blobs: None,
            stepped: 0,
        }
    }

    /// The cursor, reading the values of kind 3 entries from `blobs`.
    pub fn with_blobs(mut self, blobs: std::sync::Arc<crate::blob::BlobStore>) -> Cursor {
        self.blobs = Some(blobs);
        self
    }

    /// Replaces the entry that decides the key (the newest Put, Delete or
    /// Blob; `newest_first` tells the scratch order) by its value when it is
    /// in a blob file. A keys-only cursor reads no value.
    fn load_blob(&mut self, newest_first: bool) -> Result<()> {
        if self.keys_only {
            return Ok(());
        }
        let decider = if newest_first {
            self.scratch.iter_mut().find(|(k, _)| *k != Kind::Merge)
        } else {
            self.scratch
                .iter_mut()
                .rev()
                .find(|(k, _)| *k != Kind::Merge)
        };
        let Some(entry) = decider.filter(|(k, _)| *k == Kind::Blob) else {
            return Ok(());
        };
        let Some(blobs) = self.blobs.as_ref() else {
            return Err(Error::corruption(
                "<tree>",
                0,
                "a blob pointer met by a cursor without blob files",
            ));
        };
        let v = blobs.lazy(&entry.1)?.into_vec()?;
        *entry = (Kind::Put, v);
        Ok(())
    }

    /// The same cursor yielding keys with empty values: it folds no merge
    /// operand, so it never fails for a key whose operands cannot be folded.
    pub fn keys_only(mut self) -> Cursor {
        self.keys_only = true;
        self
    }

    /// The tree key of the last key this cursor resolved, whether it was
    /// returned or its merge failed.
    pub fn last_tree_key(&self) -> Option<&[u8]> {
        self.last.as_deref()
    }

    /// The entries of the tree this cursor has stepped over so far (every
    /// version of every key it passed or returned, tombstones included):
    /// the work a scan did, counted rather than timed.
    pub fn stepped(&self) -> u64 {
        self.stepped
    }

    /// The next entry in ascending order.
    pub fn next_forward(&mut self) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if !self.started {
            self.started = true;
            match &self.lower {
                Bound::Included(l) | Bound::Excluded(l) => self.it.seek(&key::seek_key(l)),
                Bound::Unbounded => self.it.seek_to_first(),
            }
        }
        loop {
            if !self.it.valid() {
                return self.it.status().err().map(Err);
            }
            let Some(p) = key::parse(self.it.key()) else {
                return Some(Err(malformed(self.it.key())));
            };
            if !below_upper(p.tree_key, &self.upper) {
                return None;
            }
            let tk = p.tree_key.to_vec();
            let wanted = above_lower(&tk, &self.lower);
            self.scratch.clear();
            let mut decided = false;
            while self.it.valid() {
                let Some(p) = key::parse(self.it.key()) else {
                    return Some(Err(malformed(self.it.key())));
                };
                if p.tree_key != tk.as_slice() {
                    break;
                }
                if wanted && !decided && p.seqno <= self.seqno {
                    self.scratch.push((p.kind, self.it.value().to_vec()));
                    decided = p.kind != Kind::Merge;
                }
                self.it.next();
                self.stepped += 1;
            }
            if let Err(e) = self.it.status() {
                return Some(Err(e));
            }
            if !wanted || self.scratch.is_empty() {
                continue;
            }
            if let Err(e) = self.load_blob(true) {
                return Some(Err(e));
            }
            let resolved = if self.keys_only {
                Ok(present(self.scratch.first().map(|(k, _)| *k)))
            } else {
                resolve(
                    &tk,
                    self.scratch.iter().map(|(k, v)| (*k, v.as_slice())),
                    self.merge_operator.as_ref(),
                )
            };
            self.last = Some(tk.clone());
            match resolved {
                Ok(Some(v)) => return Some(Ok((tk, v))),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// The next entry in descending order.
    pub fn next_backward(&mut self) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if !self.started {
            self.started = true;
            match &self.upper {
                Bound::Included(u) => self.it.seek_for_prev(&key::internal_key(u, 0, 0)),
                Bound::Excluded(u) => self.it.seek_for_prev(&key::seek_key(u)),
                Bound::Unbounded => self.it.seek_to_last(),
            }
        }
        loop {
            if !self.it.valid() {
                return self.it.status().err().map(Err);
            }
            let Some(p) = key::parse(self.it.key()) else {
                return Some(Err(malformed(self.it.key())));
            };
            if !above_lower(p.tree_key, &self.lower) {
                return None;
            }
            let tk = p.tree_key.to_vec();
            let wanted = below_upper(&tk, &self.upper);
            self.scratch.clear();
            while self.it.valid() {
                let Some(p) = key::parse(self.it.key()) else {
                    return Some(Err(malformed(self.it.key())));
                };
                if p.tree_key != tk.as_slice() {
                    break;
                }
                if wanted && p.seqno <= self.seqno {
                    self.scratch.push((p.kind, self.it.value().to_vec()));
                }
                self.it.prev();
                self.stepped += 1;
            }
            if let Err(e) = self.it.status() {
                return Some(Err(e));
            }
            if !wanted || self.scratch.is_empty() {
                continue;
            }
            if let Err(e) = self.load_blob(false) {
                return Some(Err(e));
            }
            let newest_first = self.scratch.iter().rev().map(|(k, v)| (*k, v.as_slice()));
            let resolved = if self.keys_only {
                Ok(present(self.scratch.last().map(|(k, _)| *k)))
            } else {
                resolve(&tk, newest_first, self.merge_operator.as_ref())
            };
            self.last = Some(tk.clone());
            match resolved {
                Ok(Some(v)) => return Some(Ok((tk, v))),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
