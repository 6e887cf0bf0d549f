//! Cursors over a memtable: [`MemtableIter`] over one of its skip lists or
//! the index of its first lists, owning the memtable (reads merge them with
//! every other source),
//! and [`MemtableScan`], borrowing it and merging its lists (flushes).

use super::lists::IndexRead;
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

    /// Iterators over the memtable, to be merged: one over the index of its
    /// first lists, as far as it is current (`frozen`), and one per list
    /// after those; each keeps the memtable alive. Lists not indexed
    /// yet are then indexed by the flush thread ([`Memtable::freeze`]). Entries inserted
    /// later may or may not be seen (the caller filters by seqno: an entry
    /// the caller may see was inserted before its seqno was published).
    /// Made after the caller's seqno is fixed, so that the index holds
    /// every entry of its lists the caller may see.
    pub fn iters(self: &Arc<Self>) -> impl Iterator<Item = MemtableIter> + '_ {
        let frozen = self.lists.frozen_for_read();
        let first_list = frozen.as_ref().map_or(0, IndexRead::lists);
        let index = frozen
            .map(|read| MemtableIter::new(Arc::clone(self), Over::Index { read, skip: None }));
        let lists = first_list..self.lists.all().count();
        index
            .into_iter()
            .chain(lists.map(|i| MemtableIter::new(Arc::clone(self), Over::List(i))))
    }

    /// What each iterator [`Memtable::iters`] would make now reads, in its
    /// order: a cursor made before reads all a new one would if its
    /// memtable sources say the same ([`MemtableIter::source`]).
    pub fn sources(&self) -> impl Iterator<Item = MemSource> {
        let mem = std::ptr::from_ref(self) as usize;
        let covers = self.lists.frozen().map_or(0, |f| f.lists());
        let index = (covers > 0).then_some(MemSource {
            mem,
            index: true,
            lists: covers,
        });
        let lists = (covers..self.lists.all().count()).map(move |i| MemSource {
            mem,
            index: false,
            lists: i,
        });
        index.into_iter().chain(lists)
    }
}

/// What one memtable cursor reads: the index of the first `lists` lists of
/// a memtable, or its list number `lists`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MemSource {
    /// The memtable's address (it is pinned while compared).
    mem: usize,
    index: bool,
    lists: usize,
}

/// What a [`MemtableIter`] walks.
enum Over {
    /// One skip list, by its number.
    List(usize),
    /// The index of the first lists, all of it or but its last list's
    /// entries (`skip`: that list's identity).
    Index { read: IndexRead, skip: Option<u64> },
}

/// Where a [`MemtableIter`] is.
#[derive(Clone, Copy)]
enum At {
    /// On an entry of its list.
    List(Position),
    /// On entry `i` of its index, in key order.
    Index(usize),
}

/// Cursor over one skip list of a memtable, or over the index of its first
/// lists. Entries inserted while it is open may or may not be seen; the
/// caller filters by seqno.
pub struct MemtableIter {
    mem: Arc<Memtable>,
    over: Over,
    cur: Option<At>,
}

impl MemtableIter {
    /// A cursor over `over` of `mem`, not positioned.
    fn new(mem: Arc<Memtable>, over: Over) -> MemtableIter {
        let over = match over {
            Over::Index { read, .. } => {
                let skip = read.but_last.then(|| mem.lists.id() + read.lists() as u64);
                Over::Index { read, skip }
            }
            list => list,
        };
        MemtableIter {
            mem,
            over,
            cur: None,
        }
    }

    /// Whether the cursor still reads every entry of what it reads: false
    /// for one over an index that a late insert into its lists has left
    /// behind.
    pub fn is_current(&self) -> bool {
        match &self.over {
            Over::List(_) => true,
            Over::Index { read, .. } => read.index.is_current(&self.mem.lists, read.lists()),
        }
    }

    /// What the cursor reads, if it still reads all of it
    /// ([`MemtableIter::is_current`]).
    pub fn source(&self) -> Option<MemSource> {
        let mem = Arc::as_ptr(&self.mem) as usize;
        match &self.over {
            Over::List(i) => Some(MemSource {
                mem,
                index: false,
                lists: *i,
            }),
            Over::Index { read, .. } => self.is_current().then_some(MemSource {
                mem,
                index: true,
                lists: read.lists(),
            }),
        }
    }

    fn list(&self) -> Option<&SkipList> {
        match self.over {
            Over::List(i) => self.mem.lists.get(i),
            Over::Index { .. } => None,
        }
    }

    fn entry(&self) -> Option<Entry<'_>> {
        let pos = match (self.cur?, &self.over) {
            (At::List(pos), _) => pos,
            (At::Index(i), Over::Index { read, .. }) => read.index.get(i)?,
            (At::Index(_), Over::List(_)) => return None,
        };
        self.mem.lists.entry(pos)
    }

    /// The first index entry from `i` on that the cursor reads (not one of
    /// the list it skips), if any.
    fn index_from(&self, mut i: usize) -> Option<At> {
        let Over::Index { read, skip } = &self.over else {
            return None;
        };
        loop {
            let p = read.index.get(i)?;
            if Some(p.list_id()) != *skip {
                return Some(At::Index(i));
            }
            i += 1;
        }
    }

    /// The last index entry at or before `i` that the cursor reads, if any.
    fn index_back_from(&self, mut i: Option<usize>) -> Option<At> {
        let Over::Index { read, skip } = &self.over else {
            return None;
        };
        loop {
            let p = read.index.get(i?)?;
            if Some(p.list_id()) != *skip {
                return i.map(At::Index);
            }
            i = i?.checked_sub(1);
        }
    }

    /// Moves to what `in_list` finds in a list, or to the index entry
    /// `in_index` finds in the index, stepping forward (`forward`) or back
    /// over the entries of a list it skips.
    fn move_to(
        &mut self,
        in_list: impl FnOnce(&SkipList) -> Option<Entry<'_>>,
        in_index: impl FnOnce(&IndexRead, &Memtable) -> Option<usize>,
        forward: bool,
    ) {
        self.cur = match &self.over {
            Over::List(_) => self
                .list()
                .and_then(in_list)
                .map(|e| At::List(e.position())),
            Over::Index { read, .. } => {
                let i = in_index(read, &self.mem);
                if forward {
                    i.and_then(|i| self.index_from(i))
                } else {
                    self.index_back_from(i)
                }
            }
        };
    }
}

impl InternalIterator for MemtableIter {
    fn valid(&self) -> bool {
        self.cur.is_some()
    }

    fn seek_to_first(&mut self) {
        self.move_to(SkipList::front, |_, _| Some(0), true);
    }

    fn seek_to_last(&mut self) {
        self.move_to(SkipList::back, |r, _| r.index.len().checked_sub(1), false);
    }

    fn seek(&mut self, target: &[u8]) {
        self.move_to(
            |l| l.lower_bound(target),
            |r, m| Some(r.index.lower_bound(&m.lists, target)),
            true,
        );
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.move_to(
            |l| l.upper_bound(target, true),
            |r, m| r.index.upper_bound(&m.lists, target, true),
            false,
        );
    }

    fn next(&mut self) {
        self.cur = match self.cur {
            Some(At::List(_)) => self
                .entry()
                .and_then(|e| e.next())
                .map(|e| At::List(e.position())),
            Some(At::Index(i)) => self.index_from(i + 1),
            None => None,
        };
    }

    fn prev(&mut self) {
        self.cur = match self.cur {
            Some(At::List(_)) => {
                let list = self.list();
                self.entry()
                    .and_then(|e| list?.upper_bound(e.key(), false))
                    .map(|e| At::List(e.position()))
            }
            Some(At::Index(i)) => self.index_back_from(i.checked_sub(1)),
            None => None,
        };
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
