//! The blocks this thread was served last, one per table: a lookup of the
//! same block again (the next key read in order, the next entry of a scan's
//! point reads) skips the block cache's shard lock and table probe. A block
//! a point read found through the table's index also keeps the range of
//! internal keys the index sends to it (after the index key before the
//! block's, up to the block's own): a later point read of a key in that
//! range is in that block, and skips the index search too. And a slot
//! keeps where in its block the thread's last point read there ended (the
//! end of the entry it answered with, and that entry's key), so that the
//! next key read in order is found by decoding the one entry that follows,
//! with no hash or search. A thread whose reads keep missing its memo reads
//! at random, and records the bounds and place of only a sample of them.
//!
//! Mechanism only, beside [`BlockCache`](super::BlockCache), which asks it
//! first and tells it what it served. A slot holds a [`Weak`]: the memo
//! never keeps a block alive after the cache has evicted it and every reader
//! has let it go, so it adds nothing to the memory the cache accounts for.
//! A slot names its cache, table file and offset; file numbers are never
//! reused within a database, so a block found here is the one asked for.

use crate::key;
use crate::table::Block;
use std::cell::RefCell;
use std::cmp::Ordering as KeyOrdering;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Slots per thread; a table's blocks go to the slot of its file number.
const SLOTS: usize = 16;

/// Where one block came from, and the block if still alive.
struct Slot {
    cache: u64,
    file: u64,
    offset: u64,
    block: Weak<Block>,
    /// The keys the table's index sends to the block: those after `after`
    /// (empty: from the table's first key) up to `last`; unknown when
    /// `last` is empty.
    after: Vec<u8>,
    last: Vec<u8>,
    /// Where the entry the last point read in the block answered with ends
    /// (0: unknown), and that entry's key.
    next: usize,
    prev: Vec<u8>,
}

impl Slot {
    const EMPTY: Slot = Slot {
        cache: 0,
        file: 0,
        offset: 0,
        block: Weak::new(),
        after: Vec::new(),
        last: Vec::new(),
        next: 0,
        prev: Vec::new(),
    };

    fn is(&self, cache: u64, file: u64, offset: u64) -> bool {
        self.cache == cache && self.file == file && self.offset == offset
    }

    /// Makes the slot name `block`, with no bounds (keeping the buffers).
    fn set(&mut self, cache: u64, file: u64, offset: u64, block: &Arc<Block>) {
        self.cache = cache;
        self.file = file;
        self.offset = offset;
        self.block = Arc::downgrade(block);
        self.after.clear();
        self.last.clear();
        self.next = 0;
    }

    fn holds(&self, cache: u64, file: u64, block: *const Block) -> bool {
        self.cache == cache && self.file == file && std::ptr::eq(self.block.as_ptr(), block)
    }
}

/// One thread's memo.
struct Memo {
    slots: [Slot; SLOTS],
    /// Calls of [`covering`] in a row that did not find the block (0: the
    /// last one did).
    misses: u32,
}

impl Memo {
    /// Whether point reads record their bounds and place (see
    /// [`AT_RANDOM_AFTER`]).
    fn recording(&self) -> bool {
        self.misses < AT_RANDOM_AFTER || self.misses.is_multiple_of(SAMPLE_EVERY)
    }

    /// Counts a read the memo did not serve; past `u32::MAX` the count goes
    /// on from a sampled one, so that sampling never stops.
    fn missed(&mut self) {
        self.misses = self
            .misses
            .checked_add(1)
            .unwrap_or(AT_RANDOM_AFTER.next_multiple_of(SAMPLE_EVERY));
    }
}

thread_local! {
    static RECENT: RefCell<Memo> = const {
        RefCell::new(Memo {
            slots: [Slot::EMPTY; SLOTS],
            misses: 0,
        })
    };
}

/// Point reads in a row that [`covering`] did not answer, after which the
/// thread is taken to read keys at random: recording each read's bounds and
/// place (copies of up to three keys, and a new weak reference to its
/// block) would serve no later read.
const AT_RANDOM_AFTER: u32 = 8;

/// While a thread reads at random, one point read in this many still
/// records its bounds and place, so that reads turning to keys in order are
/// served from the memo again within as many reads.
const SAMPLE_EVERY: u32 = 16;

/// A number naming one cache in this process (never 0, never reused).
pub(super) fn new_cache_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn slot_of(file: u64) -> usize {
    (file as usize) % SLOTS
}

/// The block at `offset` of table `file` of cache `cache`, if this thread
/// was served it last among that table's blocks and it is still alive.
pub(super) fn get(cache: u64, file: u64, offset: u64) -> Option<Arc<Block>> {
    with_slot(file, |s| {
        if s.is(cache, file, offset) {
            s.block.upgrade()
        } else {
            None
        }
    })
}

/// Records that this thread was served `block`, at `offset` of table
/// `file` of cache `cache`.
pub(super) fn put(cache: u64, file: u64, offset: u64, block: &Arc<Block>) {
    let _ = with_slot(file, |s| {
        if !(s.is(cache, file, offset) && s.block.strong_count() > 0) {
            s.set(cache, file, offset, block);
        }
        Some(())
    });
}

/// [`put`], with the internal keys the table's index sends to the block:
/// those after `after` (empty: from the table's first) up to `last`.
/// Nothing while the thread reads at random (see [`AT_RANDOM_AFTER`]).
pub(super) fn put_bounded(
    cache: u64,
    file: u64,
    offset: u64,
    block: &Arc<Block>,
    after: &[u8],
    last: &[u8],
) {
    let _ = with_memo(|m| {
        if !m.recording() {
            return None;
        }
        let s = m.slots.get_mut(slot_of(file))?;
        // A point read's block was just named here by the cache lookup
        // that served it: only the bounds are new.
        if s.is(cache, file, offset) && s.block.strong_count() > 0 {
            s.after.clear();
            s.last.clear();
        } else {
            s.set(cache, file, offset, block);
        }
        s.after.extend_from_slice(after);
        s.last.extend_from_slice(last);
        Some(())
    });
}

/// The block this thread was served last from table `file` of cache
/// `cache`, if its bounds are known and hold internal key `target`
/// (`after < target <= last`, in [`key::compare`] order), and it is still
/// alive; and whether the thread records bounds and places after this
/// read (see [`AT_RANDOM_AFTER`]), told here so that a read asks the
/// thread's memo once for both.
pub(super) fn covering(cache: u64, file: u64, target: &[u8]) -> (Option<Arc<Block>>, bool) {
    with_memo(|m| {
        // While the thread reads at random, only a read right after one
        // that recorded its bounds asks them (the others would compare two
        // keys for nothing): reads turning to keys in order are found then.
        let asks = m.recording();
        let s = m.slots.get_mut(slot_of(file))?;
        let holds = asks
            && s.cache == cache
            && s.file == file
            && !s.last.is_empty()
            && (s.after.is_empty() || key::compare(&s.after, target) == KeyOrdering::Less)
            && key::compare(target, &s.last) != KeyOrdering::Greater;
        let found = if holds { s.block.upgrade() } else { None };
        match found {
            Some(_) => m.misses = 0,
            None => m.missed(),
        }
        Some((found, m.recording()))
    })
    .unwrap_or((None, false))
}

/// Runs `f` on where this thread's last point read in `block` (of table
/// `file` of cache `cache`) ended: the end of the entry it answered with,
/// and that entry's key, which `f` may move on to the next answer. `None`
/// if the slot holds no such place in that block.
pub(super) fn with_place<R>(
    cache: u64,
    file: u64,
    block: *const Block,
    f: impl FnOnce(&mut usize, &mut Vec<u8>) -> Option<R>,
) -> Option<R> {
    with_slot(file, |s| {
        if s.next == 0 || !s.holds(cache, file, block) {
            return None;
        }
        let Slot { next, prev, .. } = s;
        f(next, prev)
    })
}

/// Records where a point read in `block` (of table `file` of cache
/// `cache`) ended: the entry with key `key` that ends at byte `next`.
/// Nothing if this thread's slot names another block, or the thread reads
/// at random (see [`AT_RANDOM_AFTER`]).
pub(super) fn put_place(cache: u64, file: u64, block: *const Block, next: usize, key: &[u8]) {
    let _ = with_memo(|m| {
        if !m.recording() {
            return None;
        }
        let s = m.slots.get_mut(slot_of(file))?;
        if s.holds(cache, file, block) {
            s.next = next;
            s.prev.clear();
            s.prev.extend_from_slice(key);
        }
        Some(())
    });
}

/// Whether this thread's last point read in a table went to the block it
/// had read before from that table ([`covering`]), as reads of keys in
/// order do.
pub(super) fn reading_in_order() -> bool {
    with_memo(|m| Some(m.misses == 0)).unwrap_or(false)
}

/// Runs `f` on the slot of table `file`; `None` if this thread's slots are
/// gone (it is exiting) or in use (never: no call nests).
fn with_slot<R>(file: u64, f: impl FnOnce(&mut Slot) -> Option<R>) -> Option<R> {
    with_memo(|m| f(m.slots.get_mut(slot_of(file))?))
}

/// Runs `f` on this thread's memo; `None` as [`with_slot`].
fn with_memo<R>(f: impl FnOnce(&mut Memo) -> Option<R>) -> Option<R> {
    RECENT
        .try_with(|r| f(&mut *r.try_borrow_mut().ok()?))
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::table::BlockBuilder;
    use std::path::Path;

    /// The block [`covering`] finds.
    fn found(cache: u64, file: u64, target: &[u8]) -> Option<Arc<Block>> {
        covering(cache, file, target).0
    }

    /// Whether this thread's point reads record their bounds and place.
    fn recording() -> bool {
        with_memo(|m| Some(m.recording())).unwrap_or(false)
    }

    fn block() -> Arc<Block> {
        let mut b = BlockBuilder::new(16);
        b.add(&crate::key::internal_key(b"\0\0\0\0k", 1, 1), b"v");
        Arc::new(Block::new(b.finish().to_vec(), Arc::from(Path::new("t")), 0).unwrap())
    }

    #[test]
    fn a_block_is_found_by_its_cache_file_and_offset_only() {
        let cache = new_cache_id();
        let b = block();
        put(cache, 3, 4096, &b);
        assert!(Arc::ptr_eq(&get(cache, 3, 4096).unwrap(), &b));
        assert!(get(cache, 3, 0).is_none(), "another block of the table");
        assert!(
            get(cache, 3 + SLOTS as u64, 4096).is_none(),
            "another table, same slot"
        );
        assert!(get(new_cache_id(), 3, 4096).is_none(), "another cache");
        // The next block of the table takes the slot.
        let next = block();
        put(cache, 3, 8192, &next);
        assert!(get(cache, 3, 4096).is_none());
        assert!(Arc::ptr_eq(&get(cache, 3, 8192).unwrap(), &next));
    }

    #[test]
    fn a_block_no_one_holds_is_not_kept_alive() {
        let cache = new_cache_id();
        let b = block();
        put(cache, 5, 0, &b);
        drop(b);
        assert!(get(cache, 5, 0).is_none());
    }

    #[test]
    fn a_block_with_bounds_covers_the_keys_between_them_only() {
        let ik = |k: &[u8], seqno| crate::key::internal_key(k, seqno, 1);
        let cache = new_cache_id();
        let b = block();
        put_bounded(
            cache,
            9,
            4096,
            &b,
            &ik(b"\0\0\0\0c", 5),
            &ik(b"\0\0\0\0f", 5),
        );
        // Older than `c`'s entry at 5 sorts after it; `f`'s entry at 5 is
        // the last.
        for inside in [
            ik(b"\0\0\0\0c", 4),
            ik(b"\0\0\0\0d", 1),
            ik(b"\0\0\0\0f", 5),
        ] {
            assert!(Arc::ptr_eq(&found(cache, 9, &inside).unwrap(), &b));
        }
        // The key before the range is not in it; newer than `c`'s entry at
        // 5 sorts before it; older than the last entry of `f` after it.
        for outside in [
            ik(b"\0\0\0\0b", 1),
            ik(b"\0\0\0\0c", 5),
            ik(b"\0\0\0\0c", 9),
            ik(b"\0\0\0\0f", 4),
            ik(b"\0\0\0\0g", 1),
        ] {
            assert!(found(cache, 9, &outside).is_none());
        }
        assert!(found(cache, 9 + SLOTS as u64, &ik(b"\0\0\0\0d", 1)).is_none());
        assert!(found(new_cache_id(), 9, &ik(b"\0\0\0\0d", 1)).is_none());
        assert!(found(cache, 9, &ik(b"\0\0\0\0d", 1)).is_some());
        assert!(
            reading_in_order(),
            "the last read went to the block read before"
        );
        assert!(found(cache, 9, &ik(b"\0\0\0\0z", 1)).is_none());
        assert!(!reading_in_order(), "the last read did not");
        // Another block of the table served (no bounds known) replaces it.
        let other = block();
        put(cache, 9, 0, &other);
        assert!(found(cache, 9, &ik(b"\0\0\0\0d", 1)).is_none());
        // A block no one holds is not covered any more.
        put_bounded(
            cache,
            9,
            4096,
            &b,
            &ik(b"\0\0\0\0c", 5),
            &ik(b"\0\0\0\0f", 5),
        );
        drop(b);
        assert!(found(cache, 9, &ik(b"\0\0\0\0d", 1)).is_none());
    }

    #[test]
    fn a_table_s_first_block_covers_every_key_up_to_its_last() {
        let ik = |k: &[u8], seqno| crate::key::internal_key(k, seqno, 1);
        let cache = new_cache_id();
        let b = block();
        put_bounded(cache, 11, 0, &b, &[], &ik(b"\0\0\0\0f", 5));
        for inside in [ik(b"", 1), ik(b"\0\0\0\0a", 9), ik(b"\0\0\0\0f", 5)] {
            assert!(Arc::ptr_eq(&found(cache, 11, &inside).unwrap(), &b));
        }
        assert!(found(cache, 11, &ik(b"\0\0\0\0f", 4)).is_none());
    }

    #[test]
    fn a_thread_reading_at_random_records_a_sample_of_its_reads() {
        let ik = |k: &[u8], seqno| crate::key::internal_key(k, seqno, 1);
        let cache = new_cache_id();
        let b = block();
        let inside = ik(b"\0\0\0\0c", 1);
        RECENT.with(|m| m.borrow_mut().misses = 0);
        // Misses in a row: the reads are at random from the last of them.
        for _ in 0..AT_RANDOM_AFTER {
            assert!(found(cache, 13, &inside).is_none());
        }
        assert!(!reading_in_order());
        // A read's bounds are recorded again only at the sample's turn.
        let mut unrecorded = 0;
        loop {
            put_bounded(cache, 13, 0, &b, &[], &ik(b"\0\0\0\0f", 5));
            if found(cache, 13, &inside).is_some() {
                break;
            }
            unrecorded += 1;
            assert!(unrecorded < SAMPLE_EVERY, "a sample is recorded");
        }
        assert_eq!(unrecorded, SAMPLE_EVERY - AT_RANDOM_AFTER);
        // Past the largest count, a thread reading at random still samples.
        RECENT.with(|m| m.borrow_mut().misses = u32::MAX);
        assert!(!recording());
        let (none, records) = covering(cache, 13 + SLOTS as u64, &inside);
        assert!(none.is_none());
        assert!(
            records,
            "the count went on from a sampled read, and the read says so"
        );
        assert!(recording());
        put_bounded(cache, 13, 0, &b, &[], &ik(b"\0\0\0\0f", 5));
        assert!(found(cache, 13, &inside).is_some());
        // Served from the memo: every read records again.
        assert!(reading_in_order());
        put_place(cache, 13, Arc::as_ptr(&b), 7, b"k");
        assert_eq!(
            with_place(cache, 13, Arc::as_ptr(&b), |next, _| Some(*next)),
            Some(7)
        );
    }

    #[test]
    fn each_thread_has_its_own_memo() {
        let cache = new_cache_id();
        let b = block();
        put(cache, 7, 0, &b);
        let other = std::thread::spawn(move || get(cache, 7, 0).is_some());
        assert!(!other.join().unwrap());
        assert!(get(cache, 7, 0).is_some());
    }
}
