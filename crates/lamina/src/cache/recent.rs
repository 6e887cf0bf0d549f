//! The blocks this thread was served last, one per table: a lookup of the
//! same block again (the next key read in order, the next entry of a scan's
//! point reads) skips the block cache's shard lock and table probe.
//!
//! Mechanism only, beside [`BlockCache`](super::BlockCache), which asks it
//! first and tells it what it served. A slot holds a [`Weak`]: the memo
//! never keeps a block alive after the cache has evicted it and every reader
//! has let it go, so it adds nothing to the memory the cache accounts for.
//! A slot names its cache, table file and offset; file numbers are never
//! reused within a database, so a block found here is the one asked for.

use crate::table::Block;
use std::cell::RefCell;
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
}

impl Slot {
    const EMPTY: Slot = Slot {
        cache: 0,
        file: 0,
        offset: 0,
        block: Weak::new(),
    };
}

thread_local! {
    static RECENT: RefCell<[Slot; SLOTS]> = const { RefCell::new([Slot::EMPTY; SLOTS]) };
}

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
    RECENT
        .try_with(|r| {
            let r = r.try_borrow().ok()?;
            let s = r.get(slot_of(file))?;
            if s.cache == cache && s.file == file && s.offset == offset {
                s.block.upgrade()
            } else {
                None
            }
        })
        .ok()
        .flatten()
}

/// Records that this thread was served `block`, at `offset` of table
/// `file` of cache `cache`.
pub(super) fn put(cache: u64, file: u64, offset: u64, block: &Arc<Block>) {
    let _ = RECENT.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            if let Some(s) = r.get_mut(slot_of(file)) {
                let same = s.cache == cache && s.file == file && s.offset == offset;
                if same && s.block.strong_count() > 0 {
                    return;
                }
                *s = Slot {
                    cache,
                    file,
                    offset,
                    block: Arc::downgrade(block),
                };
            }
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::table::BlockBuilder;
    use std::path::Path;

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
        assert!(get(cache, 3 + SLOTS as u64, 4096).is_none(), "another table, same slot");
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
    fn each_thread_has_its_own_memo() {
        let cache = new_cache_id();
        let b = block();
        put(cache, 7, 0, &b);
        let other = std::thread::spawn(move || get(cache, 7, 0).is_some());
        assert!(!other.join().unwrap());
        assert!(get(cache, 7, 0).is_some());
    }
}
