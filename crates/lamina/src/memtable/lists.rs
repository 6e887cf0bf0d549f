//! The memtable's entries as a short sequence of skip lists, each holding
//! `list_bytes` of memory.
//!
//! Inserts go to the newest list; once its arena has reserved `list_bytes`
//! and refuses an insert, that insert opens another. A random insert then
//! searches a list of a few MiB, which stays in the processor's caches,
//! instead of one spanning the whole memtable, where each step down the
//! tower is a cache miss. The
//! hash index beside the lists still answers point lookups with one probe,
//! and ordered reads and flushes merge the lists (a handful: at most
//! [`MAX_LISTS`]; past that the last one grows).
//!
//! The lists of a memtable have consecutive identities (an
//! [`IdBlock`]), so the hash index's position of an entry says which list
//! holds it, and only that list resolves it.
//!
//! Ordered reads read the first lists through one index of them
//! ([`Frozen`]), once it is built: the lists inserts moved on from, and the
//! active one too once inserts pause.

use super::arena::Inserters;
use super::frozen::Frozen;
use super::skiplist::{Entry, IdBlock, Position, SkipList};
use crate::key;
use arc_swap::ArcSwapOption;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Most lists in one memtable.
pub(super) const MAX_LISTS: usize = 16;

/// Smallest and largest size of one list. The largest keeps a list, its
/// towers and the keys a search compares within a few MiB of cache beside
/// the hash index and the WAL's pages (a Python random fill measured fastest
/// with 8 MiB memtables: `.venv/bin/python bench/memtable_sizes.py`).
const MIN_LIST_BYTES: u64 = 4 << 10;
const MAX_LIST_BYTES: u64 = 8 << 20;

/// The size of each list of a memtable of `memtable_size` bytes: an eighth
/// of it, within [`MIN_LIST_BYTES`, `MAX_LIST_BYTES`].
pub(super) fn list_bytes(memtable_size: u64) -> u64 {
    (memtable_size / 8).clamp(MIN_LIST_BYTES, MAX_LIST_BYTES)
}

/// The index of a memtable's first lists as an ordered read uses it: all
/// of it, or all but the entries of its last list, which the read then
/// takes from that list itself (a list written since it was indexed).
#[derive(Clone)]
pub(super) struct IndexRead {
    pub index: Arc<Frozen>,
    pub but_last: bool,
}

impl IndexRead {
    /// The lists, from the first, whose entries the read takes from the
    /// index.
    pub fn lists(&self) -> usize {
        self.index.covers() - usize::from(self.but_last)
    }
}

/// The skip lists of one memtable, oldest first.
pub(super) struct Lists {
    /// The identity of the first list; list `i` has `base + i`.
    base: u64,
    lists: Box<[OnceLock<SkipList>]>,
    /// The list inserts go to; every list up to it exists.
    active: AtomicUsize,
    /// The most memory each list but the last may hold.
    list_bytes: u64,
    /// The charge of the lists inserts have moved on from: each the most
    /// its arena may still reserve (its limit, or what it reserved past it
    /// if it is the larger), so that a writer still finishing an insert
    /// into one is charged already.
    sealed: AtomicU64,
    /// The identities of the lists not made yet; held to make one.
    ids: Mutex<IdBlock>,
    /// The index of the first lists, once built: of those inserts moved
    /// on from, or, once inserts paused, of every list, the active one as
    /// far as it had counted.
    frozen: ArcSwapOption<Frozen>,
    /// The active list and its count when [`Lists::wants_freeze`] last
    /// looked (`active << 48 | count`): unchanged from one look to the
    /// next, inserts paused.
    last_look: AtomicU64,
    /// Held while the index is built (one builder at a time).
    freezing: Mutex<()>,
    /// Bytes the index holds.
    frozen_bytes: AtomicU64,
    /// Set once an ordered read found lists to index: a memtable only
    /// written is never indexed.
    read_in_order: AtomicBool,
}

impl Lists {
    /// One empty list; another opens each time one holds `list_bytes` of
    /// memory.
    pub(super) fn new(list_bytes: u64) -> Lists {
        let mut ids = IdBlock::reserve(MAX_LISTS);
        let base = ids.next_id();
        let lists: Box<[OnceLock<SkipList>]> = (0..MAX_LISTS).map(|_| OnceLock::new()).collect();
        let limit = usize::try_from(list_bytes).unwrap_or(usize::MAX);
        if let (Some(first), Some(list)) = (lists.first(), SkipList::from_block(&mut ids, limit)) {
            let _ = first.set(list);
        }
        Lists {
            base,
            lists,
            active: AtomicUsize::new(0),
            list_bytes,
            sealed: AtomicU64::new(0),
            ids: Mutex::new(ids),
            frozen: ArcSwapOption::empty(),
            last_look: AtomicU64::new(0),
            freezing: Mutex::new(()),
            frozen_bytes: AtomicU64::new(0),
            read_in_order: AtomicBool::new(false),
        }
    }

    /// The identity of the first list (the others follow it).
    pub(super) fn id(&self) -> u64 {
        self.base
    }

    /// Inserts into the active list the entry whose key is the
    /// concatenation of `key_parts`; if that list is full, moves inserts on
    /// to a new one and inserts there.
    ///
    /// `active` is read and written `SeqCst`: a hash index built while
    /// writers insert finds every list an insert that did not record itself
    /// went to (see `NewestIndex::build`).
    ///
    /// Also returns whether it found the active list full (inserts moved
    /// on from it, by this insert or another's): a list to index.
    pub(super) fn insert(
        &self,
        key_parts: &[&[u8]],
        value: &[u8],
        who: Inserters,
    ) -> (Entry<'_>, bool) {
        let mut rolled = false;
        loop {
            let list = self.active();
            match list.try_insert(key_parts, value, who) {
                Some(entry) => return (entry, rolled),
                None => {
                    self.roll(list);
                    rolled = true;
                }
            }
        }
    }

    /// The list inserts go to now.
    fn active(&self) -> &SkipList {
        match self.get(self.active.load(Ordering::SeqCst)) {
            Some(list) => list,
            None => unreachable!("the active list and every one before it exist"),
        }
    }

    /// Moves inserts on from `full`, a list that refused one, to a new
    /// list; nothing if another writer did already. The last list has no
    /// limit, so an insert into it is never refused.
    fn roll(&self, full: &SkipList) {
        let mut ids = self.ids.lock();
        let i = self.active.load(Ordering::SeqCst);
        if !self.get(i).is_some_and(|active| std::ptr::eq(active, full)) {
            return;
        }
        let limit = usize::try_from(self.list_bytes).unwrap_or(usize::MAX);
        let next_limit = if i + 2 < MAX_LISTS { limit } else { usize::MAX };
        if let (Some(slot), Some(list)) = (
            self.lists.get(i + 1),
            SkipList::from_block(&mut ids, next_limit),
        ) {
            let _ = slot.set(list);
            // Charged before inserts move on: a reader may count it twice
            // for a moment, never not at all.
            let charge = full.reserved().max(limit) as u64;
            self.sealed.fetch_add(charge, Ordering::Relaxed);
            self.active.store(i + 1, Ordering::SeqCst);
        }
    }

    /// Moves inserts on from the active list whether or not it is full,
    /// as a writer that found it full would.
    #[cfg(test)]
    pub(super) fn move_on(&self) {
        self.roll(self.active());
    }

    /// Bytes of memory the lists are charged for: the lists inserts moved
    /// on from, and the active one's arena.
    pub(super) fn charged(&self) -> u64 {
        self.sealed.load(Ordering::Relaxed)
            + self.active().charged() as u64
            + self.frozen_bytes.load(Ordering::Relaxed)
    }

    /// Indexes the lists inserts moved on from ([`Frozen`]), unless fewer
    /// than two are or the index reads them all already, extending the
    /// index of the first ones; and, if inserts paused since the last look
    /// ([`Lists::wants_freeze`]), the active list with them.
    pub(super) fn freeze(&self) {
        self.freeze_lists(false);
    }

    /// [`Lists::freeze`], the active list indexed too, now: for lists no
    /// insert will come to (a read-only handle's replayed memtables).
    pub(super) fn freeze_all(&self) {
        self.freeze_lists(true);
    }

    fn freeze_lists(&self, all: bool) {
        let _one = self.freezing.lock();
        let active = self.active.load(Ordering::SeqCst);
        let old = self.frozen();
        let covered = old.as_ref().map_or(0, IndexRead::lists);
        let whole = active >= 1 && covered <= active && (all || self.paused(active));
        let covers = if whole { active + 1 } else { active };
        if covers < 2 || covered >= covers {
            return;
        }
        let index = Frozen::build(self, covers, old.as_ref());
        self.frozen_bytes
            .store(index.bytes() as u64, Ordering::Relaxed);
        self.frozen.store(Some(Arc::new(index)));
    }

    /// Whether the active list, `active`, counts entries and counts as
    /// many as at the last look: inserts paused. Records this look.
    fn paused(&self, active: usize) -> bool {
        let count = self.get(active).map_or(0, SkipList::counted);
        let look = ((active as u64) << 48) | (count as u64 & ((1 << 48) - 1));
        count > 0 && self.last_look.swap(look, Ordering::Relaxed) == look
    }

    /// Whether [`Lists::freeze`] has lists to index for the ordered reads
    /// the lists have had: two or more that inserts moved on from, not all
    /// read from the index; or, inserts having paused since the last look,
    /// the active list. Each call is a look.
    pub(super) fn wants_freeze(&self) -> bool {
        if !self.read_in_order.load(Ordering::Relaxed) {
            return false;
        }
        let active = self.active.load(Ordering::Relaxed);
        let covered = self.frozen().as_ref().map_or(0, IndexRead::lists);
        (active >= 2 && covered < active)
            || (active >= 1 && covered <= active && self.paused(active))
    }

    /// How an ordered read may use the index now, if at all (see
    /// [`Frozen::is_current`]): whole, while no list it holds has counted
    /// an entry since it was read; or but its last list, while only that
    /// one has (the active list when the index was built, since written).
    pub(super) fn frozen(&self) -> Option<IndexRead> {
        let f = self.frozen.load_full()?;
        if f.is_current(self, f.covers()) {
            Some(IndexRead {
                index: f,
                but_last: false,
            })
        } else if f.covers() >= 3 && f.is_current(self, f.covers() - 1) {
            Some(IndexRead {
                index: f,
                but_last: true,
            })
        } else {
            None
        }
    }

    /// [`Lists::frozen`], for an ordered read: one that reads a list
    /// outside the index, of two lists or more, marks the lists as read in
    /// order, so that they are indexed ([`Lists::wants_freeze`]).
    pub(super) fn frozen_for_read(&self) -> Option<IndexRead> {
        let frozen = self.frozen();
        if !self.read_in_order.load(Ordering::Relaxed) {
            let active = self.active.load(Ordering::Relaxed);
            if active >= 1 && frozen.as_ref().map_or(0, IndexRead::lists) <= active {
                self.read_in_order.store(true, Ordering::Relaxed);
            }
        }
        frozen
    }

    /// The lists made so far, oldest first: up to the active one, read
    /// `SeqCst` (a hash index built while writers insert needs every list
    /// an insert it must walk went to: `NewestIndex::build`).
    pub(super) fn all(&self) -> impl Iterator<Item = &SkipList> {
        let active = self.active.load(Ordering::SeqCst);
        self.lists.iter().take(active + 1).map_while(OnceLock::get)
    }

    /// Whether no list holds an entry of `tree_key`, by each list's first
    /// and last entries alone: `tree_key` sorts before the first, or after
    /// the last (a key written before every key the lists hold, or after:
    /// the next key of an ascending run). False when that does not say.
    pub(super) fn outside(&self, tree_key: &[u8]) -> bool {
        self.all().all(|list| {
            let before_first = list
                .front()
                .is_none_or(|e| tree_key < key::tree_key_of(e.key()));
            before_first
                || list
                    .last_key()
                    .is_some_and(|k| key::tree_key_of(k) < tree_key)
        })
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
    fn inserts_move_to_a_new_list_each_time_one_holds_list_bytes_up_to_the_last() {
        let lists = Lists::new(1000);
        for i in 0u32..200 {
            lists.insert(&[&i.to_be_bytes()], &[0; 96], Inserters::Many);
        }
        assert_eq!(lists.all().count(), MAX_LISTS);
        assert_eq!(lists.len(), 200);
        // Every list but the last holds a few entries within its bytes.
        for i in 0..MAX_LISTS - 1 {
            let list = lists.get(i).unwrap();
            assert!(
                list.reserved() <= 1000,
                "list {i}: {} bytes",
                list.reserved()
            );
            assert!(
                (2..=8).contains(&list.len()),
                "list {i}: {} entries",
                list.len()
            );
        }
        let last = lists.get(MAX_LISTS - 1).unwrap();
        assert!(last.reserved() > 1000, "the last list grows");
        let in_others: usize = (0..MAX_LISTS - 1)
            .map(|i| lists.get(i).unwrap().len())
            .sum();
        assert_eq!(last.len(), 200 - in_others);
        // The full lists are charged their limit, the last what it holds.
        let held = (MAX_LISTS as u64 - 1) * 1000 + last.charged() as u64;
        assert_eq!(lists.charged(), held);
        // A position from any list resolves through the family.
        let e = last.front().unwrap();
        assert_eq!(lists.entry(e.position()).unwrap().key(), e.key());
        let other = Lists::new(1000);
        assert!(other.entry(e.position()).is_none());
    }

    #[test]
    fn a_list_too_small_for_two_entries_holds_one() {
        let lists = Lists::new(1);
        for i in 0u32..5 {
            lists.insert(&[&i.to_be_bytes()], b"v", Inserters::Many);
        }
        assert_eq!(lists.all().count(), 5);
        assert!(lists.all().all(|l| l.len() == 1));
        // Each is charged what it holds beyond its limit.
        let held: u64 = lists.all().map(|l| l.reserved() as u64).sum();
        assert_eq!(lists.charged(), held);
    }

    #[test]
    fn writers_that_fill_a_list_together_open_one_list_after_it() {
        let lists = std::sync::Arc::new(Lists::new(64 << 10));
        let threads: Vec<_> = (0u32..4)
            .map(|t| {
                let lists = std::sync::Arc::clone(&lists);
                std::thread::spawn(move || {
                    for i in 0u32..2_000 {
                        lists.insert(
                            &[&(i * 4 + t).to_be_bytes()],
                            &[t as u8; 40],
                            Inserters::Many,
                        );
                    }
                })
            })
            .collect();
        for h in threads {
            h.join().unwrap();
        }
        assert_eq!(lists.len(), 8_000);
        let made = lists.all().count();
        for i in 0..made - 1 {
            let list = lists.get(i).unwrap();
            assert!(
                list.reserved() <= 64 << 10,
                "list {i}: {} bytes",
                list.reserved()
            );
            // Full: less than one more chunk's worth is left.
            assert!(
                list.reserved() > 60 << 10,
                "list {i}: {} bytes",
                list.reserved()
            );
        }
    }

    #[test]
    fn list_sizes_follow_the_memtable_within_bounds() {
        assert_eq!(list_bytes(64 << 20), 8 << 20);
        assert_eq!(list_bytes(1 << 30), 8 << 20);
        assert_eq!(list_bytes(1 << 20), 128 << 10);
        assert_eq!(list_bytes(4096), 4 << 10);
    }
}
