//! The read path: point lookups and the user iterator over a pinned view.

use super::floor::{End, LiveWalk};
use super::Pinned;
use super::Reads;
use crate::db::Handle;
use crate::error::{Error, Result};
use crate::iter::{Cursor, LevelIter, MergingIter, Source};
use crate::key::{self, KeyspaceId, SeqNo};
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// What a reader pins: the published memtables (newest first) and version,
/// and a seqno.
pub(crate) struct ReadView {
    pub pinned: Arc<Pinned>,
    pub seqno: SeqNo,
}

impl Reads {
    /// Pins the published memtables and version; reads see writes up to
    /// `seqno` (`Commit::read_seqno`, taken before).
    pub(crate) fn read_view(&self, seqno: SeqNo) -> Result<ReadView> {
        Ok(ReadView {
            pinned: self.pinned()?,
            seqno,
        })
    }

    /// A merged iterator over every source of `view`: each memtable's
    /// index of its full lists and each list after them
    /// (`Memtable::iters`), each level-0 table, each deeper level.
    pub(crate) fn merged(&self, view: &ReadView) -> MergingIter<Source> {
        let (mems, version) = (&view.pinned.mems, &view.pinned.version);
        let deeper = (1..crate::manifest::NUM_LEVELS).filter(|&l| !version.level(l).is_empty());
        // Most memtables read as an index of their full lists and the
        // active one.
        let mut children =
            Vec::with_capacity(2 * mems.len() + version.level(0).len() + deeper.clone().count());
        for m in mems {
            children.extend(m.iters().map(Source::Mem));
        }
        let level = |level: usize, range| {
            let tables = Arc::clone(&self.tables);
            Source::Level(LevelIter::of_version(
                Arc::clone(version),
                level,
                range,
                tables,
            ))
        };
        children.extend((0..version.level(0).len()).map(|i| level(0, i..i + 1)));
        children.extend(deeper.map(|l| level(l, 0..version.level(l).len())));
        MergingIter::new(children)
    }

    /// A cursor over `lower..upper` of `view`, values read from blob files.
    pub(crate) fn cursor(
        &self,
        view: &ReadView,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
    ) -> Cursor {
        let merged = self.merged(view);
        let op = Arc::clone(&self.merge_operator);
        Cursor::new(merged, view.seqno, lower, upper, op).with_blobs(Arc::clone(&self.blobs))
    }
}

/// Iterator over a keyspace's entries in key order, as `(key, value)` pairs.
///
/// It pins the memtables and tables it reads: it sees the data as of its
/// creation, never blocks writers, and keeps the database open while it lives.
/// Iterate with `next` (ascending) and `next_back` (descending); `.rev()`
/// gives a descending iterator. An error is yielded once, then the iterator
/// ends — except [`Error::Merge`], which concerns one key only: the iterator
/// goes on past that key.
pub struct Iter {
    handle: Arc<Handle>,
    view: Option<ReadView>,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    front: Option<Cursor>,
    back: Option<Cursor>,
    front_last: Option<Vec<u8>>,
    back_last: Option<Vec<u8>>,
    done: bool,
    error: Option<Error>,
    keys_only: bool,
    /// Where each cursor starts (the keyspace's live floor or ceiling) and
    /// the limit its first key sets (`read::floor`).
    live: LiveWalk,
}

fn bound_tree_key<K: AsRef<[u8]>>(ks: KeyspaceId, b: Bound<&K>) -> Bound<Vec<u8>> {
    match b {
        Bound::Included(k) => Bound::Included(key::tree_key(ks, k.as_ref())),
        Bound::Excluded(k) => Bound::Excluded(key::tree_key(ks, k.as_ref())),
        Bound::Unbounded => Bound::Unbounded,
    }
}

pub(super) fn keyspace_end(ks: KeyspaceId) -> Bound<Vec<u8>> {
    match ks.checked_add(1) {
        Some(n) => Bound::Excluded(n.to_be_bytes().to_vec()),
        None => Bound::Unbounded,
    }
}

/// The smallest byte string greater than every string starting with `prefix`, if any.
fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut s = prefix.to_vec();
    while let Some(last) = s.pop() {
        if last < 0xff {
            s.push(last + 1);
            return Some(s);
        }
    }
    None
}

impl Iter {
    pub(crate) fn new<K: AsRef<[u8]>, R: RangeBounds<K>>(
        handle: Arc<Handle>,
        ks: KeyspaceId,
        range: &R,
        seqno: Option<SeqNo>,
    ) -> Iter {
        let lower = match bound_tree_key(ks, range.start_bound()) {
            Bound::Unbounded => Bound::Included(key::tree_key(ks, b"")),
            b => b,
        };
        let upper = match bound_tree_key(ks, range.end_bound()) {
            Bound::Unbounded => keyspace_end(ks),
            b => b,
        };
        Iter::with_bounds(handle, lower, upper, seqno)
    }

    pub(crate) fn with_prefix(
        handle: Arc<Handle>,
        ks: KeyspaceId,
        prefix: &[u8],
        seqno: Option<SeqNo>,
    ) -> Iter {
        let lower = Bound::Included(key::tree_key(ks, prefix));
        let upper = match prefix_successor(prefix) {
            Some(s) => Bound::Excluded(key::tree_key(ks, &s)),
            None => keyspace_end(ks),
        };
        Iter::with_bounds(handle, lower, upper, seqno)
    }

    pub(crate) fn with_bounds(
        handle: Arc<Handle>,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        seqno: Option<SeqNo>,
    ) -> Iter {
        let inner = &handle.inner;
        let live = LiveWalk::watch(inner.reads(), &lower);
        let (view, error) = match inner.read_view(seqno) {
            Ok(view) => (Some(view), None),
            Err(e) => (None, Some(e)),
        };
        Iter {
            handle,
            view,
            lower,
            upper,
            front: None,
            back: None,
            front_last: None,
            back_last: None,
            done: false,
            error,
            keys_only: false,
            live,
        }
    }

    /// The same iterator yielding keys with empty values: it folds no merge
    /// operand, so a key whose operands cannot be folded is listed like any
    /// other (what counting and listing keys need). Call it before the first
    /// `next` or `next_back`.
    pub fn keys_only(mut self) -> Iter {
        self.keys_only = true;
        self
    }

    /// The keys the iterator has yet to yield, counted without reading,
    /// copying or folding a value: what `keys_only()` would yield, without
    /// a merge operand folded or a value read from a blob file. Consumes
    /// the iterator.
    ///
    /// Python's `len(db)` counts with it: a walk of every key (O(n)), a
    /// little faster than a loop of `next`.
    pub fn count_keys(mut self) -> Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.done {
            return Ok(0);
        }
        if let Some(closed) = self.closed() {
            return Err(closed);
        }
        if self.back.is_some() {
            // Walked from both ends: counted up to where they meet.
            let mut n = 0;
            for item in self.by_ref() {
                match item {
                    // A key whose operands cannot be folded is a key.
                    Ok(_) | Err(Error::Merge(_)) => n += 1,
                    Err(e) => return Err(e),
                }
            }
            return Ok(n);
        }
        if self.front.is_none() {
            self.front = self.cursor(End::Front);
        }
        let Some(front) = self.front.as_mut() else {
            return Ok(0);
        };
        let n = front.count_forward();
        self.done = true;
        n
    }

    /// Entries of the tree the iterator has stepped over so far, both ends
    /// (see [`Cursor::stepped`]).
    #[cfg(any(test, feature = "internals"))]
    #[doc(hidden)]
    pub fn entries_stepped(&self) -> u64 {
        let front = self.front.as_ref().map_or(0, Cursor::stepped);
        front + self.back.as_ref().map_or(0, Cursor::stepped)
    }

    /// The cursor at `end`, over the range from where the keyspace's limit
    /// there lets it start.
    fn cursor(&mut self, end: End) -> Option<Cursor> {
        let view = self.view.as_ref()?;
        let inner = &self.handle.inner;
        let bounds = (&self.lower, &self.upper);
        let start = self.live.start(inner.reads(), end, bounds, view.seqno);
        let (lower, upper) = match end {
            End::Front => (start, self.upper.clone()),
            End::Back => (self.lower.clone(), start),
        };
        if let Some(mut c) = inner.reads().spare_cursor(&view.pinned) {
            c.restart(view.seqno, &lower, &upper, self.keys_only);
            return Some(c);
        }
        let c = inner.reads().cursor(view, lower, upper);
        Some(if self.keys_only { c.keys_only() } else { c })
    }

    /// Shows the keyspace's limit at `end` the answer `item` of the cursor
    /// there (only its first counts).
    fn found(&mut self, end: End, item: &Option<Result<(Vec<u8>, Vec<u8>)>>) {
        let cursor = match end {
            End::Front => &self.front,
            End::Back => &self.back,
        };
        if let (Some(view), Some(cursor)) = (&self.view, cursor) {
            let (inner, bounds) = (&self.handle.inner, (&self.lower, &self.upper));
            let walked = (item, cursor.stepped());
            let subsystems = (inner.reads(), inner.commit());
            self.live.found(subsystems, end, view.seqno, walked, bounds);
        }
    }

    /// `Error::Closed` once the database is closed, with the iterator's
    /// view and cursors (its open tables and blob files) let go of and the
    /// iterator ended; `None` while it is open.
    fn closed(&mut self) -> Option<Error> {
        if !self.handle.inner.is_closed() {
            return None;
        }
        self.front = None;
        self.back = None;
        self.view = None;
        self.done = true;
        Some(Error::Closed)
    }

    fn finish(
        &mut self,
        item: Option<Result<(Vec<u8>, Vec<u8>)>>,
        forward: bool,
    ) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        match item {
            None => {
                self.done = true;
                None
            }
            Some(Err(e @ Error::Merge(_))) => {
                // One key's operands could not be folded: report it and go on
                // past it, unless the two ends have met there.
                let cursor = if forward { &self.front } else { &self.back };
                let tk = cursor
                    .as_ref()
                    .and_then(|c| c.last_tree_key())
                    .map(<[u8]>::to_vec);
                let crossed = match (&tk, forward) {
                    (Some(tk), true) => self.back_last.as_ref().is_some_and(|b| tk >= b),
                    (Some(tk), false) => self.front_last.as_ref().is_some_and(|f| tk <= f),
                    (None, _) => false,
                };
                if crossed {
                    self.done = true;
                    return None;
                }
                if forward {
                    self.front_last = tk;
                } else {
                    self.back_last = tk;
                }
                Some(Err(e))
            }
            Some(Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            Some(Ok((mut tk, v))) => {
                let crossed = if forward {
                    self.back_last.as_ref().is_some_and(|b| tk >= *b)
                } else {
                    self.front_last.as_ref().is_some_and(|f| tk <= *f)
                };
                if crossed {
                    self.done = true;
                    return None;
                }
                let last = if forward {
                    &mut self.front_last
                } else {
                    &mut self.back_last
                };
                match last {
                    Some(l) => {
                        l.clear();
                        l.extend_from_slice(&tk);
                    }
                    None => *last = Some(tk.clone()),
                }
                // The tree key becomes the user key in place.
                tk.drain(..key::KEYSPACE_ID_LEN.min(tk.len()));
                Some(Ok((tk, v)))
            }
        }
    }
}

impl Iterator for Iter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.error.take() {
            self.done = true;
            return Some(Err(e));
        }
        if self.done {
            return None;
        }
        if let Some(closed) = self.closed() {
            return Some(Err(closed));
        }
        if self.front.is_none() {
            self.front = self.cursor(End::Front);
        }
        let front = self.front.as_mut()?;
        let item = front.next_forward();
        self.found(End::Front, &item);
        self.finish(item, true)
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.error.take() {
            self.done = true;
            return Some(Err(e));
        }
        if self.done {
            return None;
        }
        if let Some(closed) = self.closed() {
            return Some(Err(closed));
        }
        if self.back.is_none() {
            self.back = self.cursor(End::Back);
        }
        let item = self.back.as_mut()?.next_backward();
        self.found(End::Back, &item);
        self.finish(item, false)
    }
}

impl std::iter::FusedIterator for Iter {}

impl Drop for Iter {
    /// Leaves a cursor to the next iterator over the same view.
    fn drop(&mut self) {
        let cursor = self.front.take().or_else(|| self.back.take());
        if let (Some(view), Some(cursor)) = (self.view.take(), cursor) {
            if !self.handle.inner.is_closed() {
                self.handle.inner.reads().keep_cursor(view.pinned, cursor);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_successor;

    #[test]
    fn prefix_successor_skips_trailing_ff() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_successor(&[0xff, 0xff]), None);
        assert_eq!(prefix_successor(b""), None);
    }
}
