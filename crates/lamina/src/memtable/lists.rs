//! The memtable's entries as a short sequence of skip lists, each holding
//! about `list_bytes` of them.
//!
//! Inserts go to the newest list; once it holds `list_bytes`, the next
//! insert opens another. A random insert then searches a list of a few
//! MiB, which stays in the processor's caches, instead of one spanning the
//! whole memtable, where each step down the tower is a cache miss. The
//! hash index beside the lists still answers point lookups with one probe,
//! and ordered reads and flushes merge the lists (a handful: at most
//! [`MAX_LISTS`]; past that the last one grows).
//!
//! The lists of a memtable have consecutive identities (an
//! [`IdBlock`]), so the hash index's position of an entry says which list
//! holds it, and only that list resolves it.

use super::skiplist::{Entry, IdBlock, Position, SkipList};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Most lists in one memtable.
pub(super) const MAX_LISTS: usize = 16;

/// Smallest and largest size of one list. The largest keeps a list, its
/// towers and the keys a search compares within a few MiB of cache beside
/// the hash index and the WAL's pages (a Python random fill measured fastest
/// with 8 MiB memtables: docs/benchmarks-python.md).
const MIN_LIST_BYTES: u64 = 4 << 10;
const MAX_LIST_BYTES: u64 = 8 << 20;

/// The size of each list of a memtable of `memtable_size` bytes: an eighth
/// of it, within [`MIN_LIST_BYTES`, `MAX_LIST_BYTES`].
pub(super) fn list_bytes(memtable_size: u64) -> u64 {
    (memtable_size / 8).clamp(MIN_LIST_BYTES, MAX_LIST_BYTES)
}

/// The skip lists of one memtable, oldest first.
pub(super) struct Lists {
    /// The identity of the first list; list `i` has `base + i`.
    base: u64,
    lists: Box<[OnceLock<SkipList>]>,
    /// The list inserts go to; every list up to it exists.
    active: AtomicUsize,
    /// The memtable size at which inserts move to the next list.
    next_at: AtomicU64,
    list_bytes: u64,
    /// The identities of the lists not made yet; held to make one.
    ids: Mutex<IdBlock>,
}

impl Lists {
    /// One empty list; another opens every `list_bytes`.
    pub(super) fn new(list_bytes: u64) -> Lists {
        let mut ids = IdBlock::reserve(MAX_LISTS);
        let base = ids.next_id();
        let lists: Box<[OnceLock<SkipList>]> = (0..MAX_LISTS).map(|_| OnceLock::new()).collect();
        if let (Some(first), Some(list)) = (lists.first(), SkipList::from_block(&mut ids)) {
            let _ = first.set(list);
        }
        Lists {
            base,
            lists,
            active: AtomicUsize::new(0),
            next_at: AtomicU64::new(list_bytes),
            list_bytes,
            ids: Mutex::new(ids),
        }
    }

    /// The identity of the first list (the others follow it).
    pub(super) fn id(&self) -> u64 {
        self.base
    }

    /// The list an insert goes to when the memtable holds `size` bytes.
    ///
    /// `active` is read and written `SeqCst`: a hash index built while
    /// writers insert finds every list an insert that did not record itself
    /// went to (see `NewestIndex::build`).
    pub(super) fn for_insert(&self, size: u64) -> &SkipList {
        let mut i = self.active.load(Ordering::SeqCst);
        if size >= self.next_at.load(Ordering::Relaxed) && i + 1 < MAX_LISTS {
            let mut ids = self.ids.lock();
            i = self.active.load(Ordering::SeqCst);
            if size >= self.next_at.load(Ordering::Relaxed) {
                if let (Some(slot), Some(list)) = (self.lists.get(i + 1), SkipList::from_block(&mut ids)) {
                    let _ = slot.set(list);
                    self.next_at.store(size + self.list_bytes, Ordering::Relaxed);
                    i += 1;
                    self.active.store(i, Ordering::SeqCst);
                }
            }
        }
        match self.get(i) {
            Some(list) => list,
            None => unreachable!("the active list and every one before it exist"),
        }
    }

    /// The lists made so far, oldest first: up to the active one, read
    /// `SeqCst` (a hash index built while writers insert needs every list
    /// an insert it must walk went to: `NewestIndex::build`).
    pub(super) fn all(&self) -> impl Iterator<Item = &SkipList> {
        let active = self.active.load(Ordering::SeqCst);
        self.lists.iter().take(active + 1).map_while(OnceLock::get)
    }

    /// List `i` (oldest first), if it was made.
    pub(super) fn get(&self, i: usize) -> Option<&SkipList> {
        self.lists.get(i).and_then(OnceLock::get)
    }

    /// The entry at `pos`, in whichever list holds it; `None` if `pos` was
    /// taken from another memtable.
    pub(super) fn entry(&self, pos: Position) -> Option<Entry<'_>> {
        let i = usize::try_from(pos.list_id().wrapping_sub(self.base)).ok()?;
        self.get(i)?.entry(pos)
    }

    /// Number of entries.
    pub(super) fn len(&self) -> usize {
        self.all().map(SkipList::len).sum()
    }

    /// True when nothing was inserted.
    pub(super) fn is_empty(&self) -> bool {
        self.all().all(SkipList::is_empty)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn inserts_move_to_a_new_list_every_list_bytes_up_to_the_last() {
        let lists = Lists::new(1000);
        let mut size = 0;
        for i in 0u32..200 {
            let list = lists.for_insert(size);
            list.insert(&[&i.to_be_bytes()], &[0; 96]);
            size += 100;
        }
        // 20,000 bytes: a list per 1,000, capped.
        assert_eq!(lists.all().count(), MAX_LISTS);
        assert_eq!(lists.len(), 200);
        let first = lists.get(0).unwrap();
        assert_eq!(first.len(), 10);
        let last = lists.get(MAX_LISTS - 1).unwrap();
        assert_eq!(last.len(), 200 - 10 * (MAX_LISTS - 1));
        // A position from any list resolves through the family.
        let e = last.front().unwrap();
        assert_eq!(lists.entry(e.position()).unwrap().key(), e.key());
        let other = Lists::new(1000);
        assert!(other.entry(e.position()).is_none());
    }

    #[test]
    fn list_sizes_follow_the_memtable_within_bounds() {
        assert_eq!(list_bytes(64 << 20), 8 << 20);
        assert_eq!(list_bytes(1 << 30), 8 << 20);
        assert_eq!(list_bytes(1 << 20), 128 << 10);
        assert_eq!(list_bytes(4096), 4 << 10);
    }
}
