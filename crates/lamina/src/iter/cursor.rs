//! The user-visible view of the tree: one value per key as of a seqno, merge
//! operands folded, tombstones hidden, within tree-key bounds.

use super::merging::MergingIter;
use super::{InternalIterator, Source};
use crate::error::{Error, Result};
use crate::key::{self, Kind, SeqNo};
use crate::memtable::MemSource;
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
    it: MergingIter<Source>,
    seqno: SeqNo,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    merge_operator: std::sync::Arc<dyn MergeOperator>,
    started: bool,
    scratch: Vec<(Kind, Vec<u8>)>,
    blobs: Option<std::sync::Arc<crate::blob::BlobStore>>,
    /// Yield keys with empty values, folding no merge operand.
    keys_only: bool,
    /// The tree key of the key the last step stopped at (returned, or
    /// whose merge failed), when it stopped at one; a buffer kept from
    /// key to key, so that a step allocates only what it returns.
    last: Vec<u8>,
    has_last: bool,
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

/// Makes `dst` the bound `src`, in the buffer `dst` holds when it can.
fn copy_bound(dst: &mut Bound<Vec<u8>>, src: &Bound<Vec<u8>>) {
    match (&mut *dst, src) {
        (Bound::Included(d), Bound::Included(s)) | (Bound::Excluded(d), Bound::Excluded(s)) => {
            d.clear();
            d.extend_from_slice(s);
        }
        _ => *dst = src.clone(),
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
        it: MergingIter<Source>,
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
            last: Vec::new(),
            has_last: false,
            blobs: None,
            stepped: 0,
        }
    }

    /// The cursor made ready for another walk over the same sources: as of
    /// `seqno`, within new bounds, keys only or not. Nothing of the last
    /// walk is kept but its buffers; the first step seeks.
    pub fn restart(
        &mut self,
        seqno: SeqNo,
        lower: &Bound<Vec<u8>>,
        upper: &Bound<Vec<u8>>,
        keys_only: bool,
    ) {
        self.seqno = seqno;
        copy_bound(&mut self.lower, lower);
        copy_bound(&mut self.upper, upper);
        self.keys_only = keys_only;
        self.started = false;
        self.has_last = false;
        self.stepped = 0;
        self.scratch.clear();
    }

    /// What the cursor's memtable sources read, in order (a skip list, or
    /// the index of a memtable's first lists, each); `None` for one that
    /// no longer reads all of it (`MemtableIter::source`).
    pub fn memtable_sources(&self) -> impl Iterator<Item = Option<MemSource>> + '_ {
        self.it.children().iter().filter_map(|s| match s {
            Source::Mem(m) => Some(m.source()),
            Source::Level(_) => None,
        })
    }

    /// Whether no source met an error (a cursor that did is not walked
    /// again).
    pub fn healthy(&self) -> bool {
        self.it.status().is_ok()
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
    /// returned or its merge failed (read right after the step that
    /// returned it).
    pub fn last_tree_key(&self) -> Option<&[u8]> {
        self.has_last.then_some(self.last.as_slice())
    }

    /// The value the entries in `scratch` (newest first if `newest_first`,
    /// else oldest first) give the key `last`: the decider's own bytes,
    /// taken rather than copied, when no merge operand is to be folded.
    fn resolve_scratch(&mut self, newest_first: bool) -> Result<Option<Vec<u8>>> {
        if self.keys_only {
            let newest = if newest_first {
                self.scratch.first()
            } else {
                self.scratch.last()
            };
            return Ok(present(newest.map(|(k, _)| *k)));
        }
        let newest = if newest_first {
            self.scratch.first_mut()
        } else {
            self.scratch.last_mut()
        };
        match newest {
            Some((Kind::Put, v)) => return Ok(Some(std::mem::take(v))),
            Some((Kind::Delete, _)) => return Ok(None),
            _ => {}
        }
        let op = self.merge_operator.as_ref();
        if newest_first {
            let entries = self.scratch.iter().map(|(k, v)| (*k, v.as_slice()));
            resolve(&self.last, entries, op)
        } else {
            let entries = self.scratch.iter().rev().map(|(k, v)| (*k, v.as_slice()));
            resolve(&self.last, entries, op)
        }
    }

    /// The entries of the tree this cursor has stepped over so far (every
    /// version of every key it passed or returned, tombstones included):
    /// the work a scan did, counted rather than timed.
    pub fn stepped(&self) -> u64 {
        self.stepped
    }

    /// Seeks to the lower bound before the first forward step.
    fn start_forward(&mut self) {
        if !self.started {
            self.started = true;
            match &self.lower {
                Bound::Included(l) | Bound::Excluded(l) => self.it.seek(&key::seek_key(l)),
                Bound::Unbounded => self.it.seek_to_first(),
            }
        }
    }

    /// The keys from here to the upper bound that a keys-only walk would
    /// list (each whose newest entry at the cursor's seqno is not a
    /// tombstone), counted without copying a key or a value; the cursor is
    /// then at the end. Each key's entries are stepped over as a walk steps
    /// over them.
    pub fn count_forward(&mut self) -> Result<u64> {
        self.start_forward();
        self.has_last = false;
        let mut n = 0;
        loop {
            if !self.it.valid() {
                return self.it.status().map(|()| n);
            }
            let Some(p) = key::parse(self.it.key()) else {
                return Err(malformed(self.it.key()));
            };
            if !below_upper(p.tree_key, &self.upper) {
                return Ok(n);
            }
            let wanted = above_lower(p.tree_key, &self.lower);
            self.last.clear();
            self.last.extend_from_slice(p.tree_key);
            let mut newest = None;
            while self.it.valid() {
                let Some(p) = key::parse(self.it.key()) else {
                    return Err(malformed(self.it.key()));
                };
                if p.tree_key != self.last.as_slice() {
                    break;
                }
                if newest.is_none() && p.seqno <= self.seqno {
                    newest = Some(p.kind);
                }
                self.it.next();
                self.stepped += 1;
            }
            self.it.status()?;
            if wanted && present(newest).is_some() {
                n += 1;
            }
        }
    }

    /// The next entry in ascending order.
    pub fn next_forward(&mut self) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        self.start_forward();
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
            let wanted = above_lower(p.tree_key, &self.lower);
            self.last.clear();
            self.last.extend_from_slice(p.tree_key);
            self.has_last = false;
            self.scratch.clear();
            let mut decided = false;
            while self.it.valid() {
                let Some(p) = key::parse(self.it.key()) else {
                    return Some(Err(malformed(self.it.key())));
                };
                if p.tree_key != self.last.as_slice() {
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
            self.has_last = true;
            match self.resolve_scratch(true) {
                Ok(Some(v)) => return Some(Ok((self.last.clone(), v))),
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
            let wanted = below_upper(p.tree_key, &self.upper);
            self.last.clear();
            self.last.extend_from_slice(p.tree_key);
            self.has_last = false;
            self.scratch.clear();
            while self.it.valid() {
                let Some(p) = key::parse(self.it.key()) else {
                    return Some(Err(malformed(self.it.key())));
                };
                if p.tree_key != self.last.as_slice() {
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
            self.has_last = true;
            match self.resolve_scratch(false) {
                Ok(Some(v)) => return Some(Ok((self.last.clone(), v))),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
