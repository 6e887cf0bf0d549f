//! One ordered index over the first skip lists of a memtable (`lists`):
//! an array of their entries' positions in key order, so that an ordered
//! read searches and steps through one array instead of searching every
//! list and merging them entry by entry.
//!
//! A memtable of 64 MiB holds up to eight lists of 8 MiB; a seek of an
//! ordered read searched each of them (a cache miss at nearly every step
//! down each tower) and merged them with every table's cursor: short range
//! scans of 10 entries spent half their time there (docs/design.md, "The
//! memtable's lists, indexed for ordered reads").
//!
//! The index is built off the writers' path (by the flush thread, when a
//! list is sealed or inserts pause; at a read-only open, for the replayed
//! memtables) and extended list by list: each list is merged into the
//! index of the ones before it. Once inserts pause it covers the active
//! list too, as far as that list had counted. A writer may insert into a
//! list after it was indexed (the active one, or one it took before
//! inserts moved on); the index records how many entries each list had
//! counted when it was read, and a read uses it only for the lists that
//! still count as many (an entry is counted after it is linked, so every
//! counted entry is in the index): all of them, or all but the last, whose
//! entries the read then skips and takes from that list itself. A reader
//! asks after its seqno is fixed: every entry it may see was counted by
//! then.
//!
//! Beside the positions, a number for each entry's tree key
//! (`crate::key_numbers`): a search compares numbers, side by side in
//! memory, and reads an entry itself only where its number ties with the
//! target's, where a search of the positions alone waited for memory at
//! nearly every step to read the entry there.

use super::lists::{IndexRead, Lists};
use super::skiplist::{Position, SkipList};
use crate::key;
use crate::key_numbers::KeyNumbers;
use std::borrow::Cow;
use std::cmp::Ordering;

/// The entries of lists `0..covers` of a memtable, in key order.
pub(super) struct Frozen {
    /// For each list indexed, the entries it had counted before its walk.
    counts: Vec<usize>,
    entries: Vec<Position>,
    /// The numbers of the entries' tree keys, one per entry (`None` if an
    /// entry could not be read: searches then read every entry they pass).
    numbers: Option<KeyNumbers<u64>>,
}

impl Frozen {
    /// The index of lists `0..covers` of `lists`, extending `prev` (the
    /// index of the first lists, as a read may use it now) with the lists
    /// after it.
    pub fn build(lists: &Lists, covers: usize, prev: Option<&IndexRead>) -> Frozen {
        // The entries of `prev` are merged from where they are, not copied
        // first: each list after them makes one new array.
        let (mut counts, mut entries) = match prev {
            Some(p) if p.lists() <= covers && !p.but_last => {
                (p.index.counts.clone(), Cow::Borrowed(&p.index.entries[..]))
            }
            Some(p) if p.lists() <= covers => {
                // Its last list counted more since: indexed again whole.
                let last = lists.id() + p.lists() as u64;
                let entries = p.index.entries.iter().copied();
                (
                    p.index.counts.get(..p.lists()).unwrap_or_default().to_vec(),
                    Cow::Owned(entries.filter(|e| e.list_id() != last).collect()),
                )
            }
            _ => (Vec::new(), Cow::Owned(Vec::new())),
        };
        for i in counts.len()..covers {
            let Some(list) = lists.get(i) else { break };
            // Counted before the walk: each entry counted is linked, so
            // the walk finds it.
            counts.push(list.counted());
            entries = Cow::Owned(merge(lists, &entries, list));
        }
        let entries = entries.into_owned();
        let numbers = numbers_of(lists, &entries);
        Frozen {
            counts,
            entries,
            numbers,
        }
    }

    /// The lists indexed: `0..covers()`.
    pub fn covers(&self) -> usize {
        self.counts.len()
    }

    /// Whether none of the first `first` lists indexed has counted an
    /// entry since it was read: then the index holds every entry of theirs
    /// a reader whose seqno is fixed may see.
    pub fn is_current(&self, lists: &Lists, first: usize) -> bool {
        self.counts
            .iter()
            .take(first)
            .enumerate()
            .all(|(i, &n)| lists.get(i).is_some_and(|l| l.counted() == n))
    }

    /// Bytes of memory the index holds.
    pub fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Position>()
            + self.counts.capacity() * std::mem::size_of::<usize>()
            + self.numbers.as_ref().map_or(0, KeyNumbers::bytes)
    }

    /// Entries indexed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The position of entry `i` in key order.
    pub fn get(&self, i: usize) -> Option<Position> {
        self.entries.get(i).copied()
    }

    /// The index of the first entry at or after internal key `target`
    /// ([`Frozen::len`] if none).
    pub fn lower_bound(&self, lists: &Lists, target: &[u8]) -> usize {
        let (lo, ties) = self.candidates(target);
        lo + ties.partition_point(|&p| order(lists, p, target) == Ordering::Less)
    }

    /// The index of the last entry before `target` (`or_equal`: at or
    /// before), if any.
    pub fn upper_bound(&self, lists: &Lists, target: &[u8], or_equal: bool) -> Option<usize> {
        let (lo, ties) = self.candidates(target);
        let after = lo
            + ties.partition_point(|&p| match order(lists, p, target) {
                Ordering::Less => true,
                Ordering::Equal => or_equal,
                Ordering::Greater => false,
            });
        after.checked_sub(1)
    }

    /// The entries whose tree key may be `target`'s, from where they start:
    /// every entry before them is of a smaller tree key, every one after
    /// them of a larger.
    #[inline]
    fn candidates(&self, target: &[u8]) -> (usize, &[Position]) {
        let (lo, hi) = match &self.numbers {
            Some(n) => n.candidates(key::tree_key_of(target)),
            None => (0, self.entries.len()),
        };
        (lo, self.entries.get(lo..hi).unwrap_or_default())
    }
}

/// The numbers of the tree keys of `entries` (positions in `lists`, in key
/// order); `None` if one cannot be read.
fn numbers_of(lists: &Lists, entries: &[Position]) -> Option<KeyNumbers<u64>> {
    let tree_key = |p: &Position| lists.entry(*p).map(|e| key::tree_key_of(e.key()));
    let keys = entries.iter().map(tree_key).collect::<Option<Vec<_>>>()?;
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return Some(KeyNumbers::empty());
    };
    KeyNumbers::new(first, last, keys.iter().copied()).ok()
}

/// The order of the entry at `p` against internal key `target`.
fn order(lists: &Lists, p: Position, target: &[u8]) -> Ordering {
    lists
        .entry(p)
        .map_or(Ordering::Greater, |e| key::compare(e.key(), target))
}

/// The positions of `a` (entries of `lists`, in key order) and of every
/// entry of `list`, merged in key order.
fn merge(lists: &Lists, a: &[Position], list: &SkipList) -> Vec<Position> {
    let mut out = Vec::with_capacity(a.len() + list.counted());
    let mut b = list.front();
    let mut a = a.iter().copied().peekable();
    while let (Some(&pa), Some(eb)) = (a.peek(), b) {
        let ka = lists.entry(pa).map_or(&[][..], |e| e.key());
        if key::compare(ka, eb.key()) == Ordering::Less {
            out.push(pa);
            a.next();
        } else {
            out.push(eb.position());
            b = eb.next();
        }
    }
    out.extend(a);
    while let Some(eb) = b {
        out.push(eb.position());
        b = eb.next();
    }
    out
}
