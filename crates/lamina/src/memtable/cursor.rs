//! Cursors over a memtable: [`MemtableIter`] over one of its skip lists,
//! owning the memtable (reads merge one per list with every other source),
//! and [`MemtableScan`], borrowing it and merging its lists (flushes).

use super::skiplist::{Entry, Position, SkipList};
use super::Memtable;
use crate::error::Result;
use crate::iter::{InternalIterator, MergingIter};
use std::sync::Arc;

impl Memtable {
    /// A cursor borrowing the memtable that moves from entry to entry
    /// without copying, merging its skip lists; for flushes.
    pub fn scan(&self) -> MemtableScan<'_> {
        let lists = self.lists.all();
        MergingIter::new(lists.map(|list| ListScan { list, cur: None }).collect())
    }

    /// Iterators over the memtable, one per skip list, to be merged; each
    /// keeps the memtable alive. Entries inserted later may or may not be
    /// seen (the caller filters by seqno: an entry the caller may see was
    /// inserted before its seqno was published).
    pub fn iters(self: &Arc<Self>) -> impl Iterator<Item = MemtableIter> + '_ {
        (0..self.lists.all().count()).map(|i| MemtableIter::new(Arc::clone(self), i))
    }
}

/// Cursor over one skip list of a memtable. Entries inserted while it is
/// open may or may not be seen; the caller filters by seqno.
pub struct MemtableIter {
    mem: Arc<Memtable>,
    list: usize,
    cur: Option<Position>,
}

impl MemtableIter {
    /// A cursor over list `list` of `mem`, not positioned.
    fn new(mem: Arc<Memtable>, list: usize) -> MemtableIter {
        MemtableIter {
            mem,
            list,
            cur: None,
        }
    }

    fn list(&self) -> Option<&SkipList> {
        self.mem.lists.get(self.list)
    }

    fn entry(&self) -> Option<Entry<'_>> {
        self.cur.and_then(|at| self.mem.lists.entry(at))
    }

    fn move_to(&mut self, to: impl FnOnce(&SkipList) -> Option<Entry<'_>>) {
        self.cur = self.list().and_then(to).map(|e| e.position());
    }
}

impl InternalIterator for MemtableIter {
    fn valid(&self) -> bool {
        self.cur.is_some()
    }

    fn seek_to_first(&mut self) {
        self.move_to(SkipList::front);
    }

    fn seek_to_last(&mut self) {
        self.move_to(SkipList::back);
    }

    fn seek(&mut self, target: &[u8]) {
        self.move_to(|l| l.lower_bound(target));
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.move_to(|l| l.upper_bound(target, true));
    }

    fn next(&mut self) {
        self.cur = self.entry().and_then(|e| e.next()).map(|e| e.position());
    }

    fn prev(&mut self) {
        let list = self.list();
        self.cur = self
            .entry()
            .and_then(|e| list?.upper_bound(e.key(), false))
            .map(|e| e.position());
    }

    fn key(&self) -> &[u8] {
        self.entry().map(|e| e.key()).unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.entry().map(|e| e.value()).unwrap_or(&[])
    }

    fn status(&self) -> Result<()> {
        Ok(())
    }
}

/// Cursor over a borrowed memtable, merging its skip lists (see
/// [`Memtable::scan`]).
pub type MemtableScan<'a> = MergingIter<ListScan<'a>>;

/// Cursor over one borrowed skip list.
pub struct ListScan<'a> {
    list: &'a SkipList,
    cur: Option<Entry<'a>>,
}

impl InternalIterator for ListScan<'_> {
    fn valid(&self) -> bool {
        self.cur.is_some()
    }
    fn seek_to_first(&mut self) {
        self.cur = self.list.front();
    }
    fn seek_to_last(&mut self) {
        self.cur = self.list.back();
    }
    fn seek(&mut self, target: &[u8]) {
        self.cur = self.list.lower_bound(target);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.cur = self.list.upper_bound(target, true);
    }
    fn next(&mut self) {
        self.cur = self.cur.and_then(|e| e.next());
    }
    fn prev(&mut self) {
        self.cur = self
            .cur
            .take()
            .and_then(|e| self.list.upper_bound(e.key(), false));
    }
    fn key(&self) -> &[u8] {
        self.cur.as_ref().map(|e| e.key()).unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.cur.as_ref().map(|e| e.value()).unwrap_or(&[])
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}
