//! Block slots: one per entry of a table's index, holding the data block a
//! point lookup last found there, so the next lookup that the index sends
//! to the same entry reaches the block without the block cache's lookup
//! (its hash, shard lock, table probe and reference count).
//!
//! A slot holds only a block the cache holds: the cache's eviction hook
//! (`BlockCache`'s lifecycle) clears the slot of every block it lets go, so
//! slots keep no memory outside the budget. The race between a lookup
//! filling a slot and the cache evicting that block is closed by two flags
//! on the block, each written before the other's is read (all `SeqCst`):
//! the filler records the slot in the block (its home), stores the block,
//! then reads the block's evicted flag and, if set, clears the slot; the
//! evictor sets the flag, then reads the home and clears the slot there.
//! Whichever runs second sees the other's write.
//!
//! Generic over the block, so that slots need nothing of the block's
//! module: a block carries its [`SlotMark`] and hands it over through
//! [`Slotted`].

use arc_swap::{ArcSwapOption, Guard};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// The slots of one table, one per index entry.
#[derive(Debug)]
pub struct BlockSlots<B> {
    slots: Box<[ArcSwapOption<B>]>,
}

/// Where a block sits in a table's slots (set once, by the first lookup
/// that puts it there).
#[derive(Debug)]
pub struct Home<B> {
    slots: Weak<BlockSlots<B>>,
    index: usize,
}

/// What a block carries for the slots: its home, and whether the block
/// cache has let it go (the two flags of the module's documentation).
#[derive(Debug)]
pub struct SlotMark<B> {
    home: OnceLock<Home<B>>,
    evicted: AtomicBool,
}

/// A block that can sit in a slot: it carries a [`SlotMark`].
pub trait Slotted: Sized {
    /// The block's mark.
    fn slot_mark(&self) -> &SlotMark<Self>;
}

impl<B> BlockSlots<B> {
    /// `n` empty slots.
    pub fn new(n: usize) -> Arc<BlockSlots<B>> {
        Arc::new(BlockSlots {
            slots: (0..n).map(|_| ArcSwapOption::empty()).collect(),
        })
    }

    /// Bytes the slots take (charged with the table's index).
    pub fn charge(&self) -> usize {
        self.slots.len() * std::mem::size_of::<ArcSwapOption<B>>()
    }

    /// The block in slot `i`, without touching its reference count; `None`
    /// if the slot is empty or out of range.
    pub fn get(&self, i: usize) -> Option<Guard<Option<Arc<B>>>> {
        let g = self.slots.get(i)?.load();
        g.is_some().then_some(g)
    }

    /// Every block the slots hold.
    #[cfg(test)]
    pub fn held(&self) -> Vec<Arc<B>> {
        self.slots.iter().filter_map(|s| s.load_full()).collect()
    }
}

impl<B: Slotted> BlockSlots<B> {
    /// Puts `block`, which the block cache holds, in slot `i`; clears it
    /// again if the cache let the block go meanwhile (see the module's
    /// documentation).
    pub fn fill(self: &Arc<Self>, i: usize, block: &Arc<B>) {
        let Some(slot) = self.slots.get(i) else {
            return;
        };
        let home = Home {
            slots: Arc::downgrade(self),
            index: i,
        };
        let mark = block.slot_mark();
        if !mark.set_home(home) && !mark.is_home(self, i) {
            // A block has one place in one table; never another.
            return;
        }
        slot.store(Some(Arc::clone(block)));
        if mark.is_evicted() {
            clear(slot, block);
        }
    }
}

impl<B> Home<B> {
    /// Whether this is slot `i` of `slots`.
    pub fn is(&self, slots: &Arc<BlockSlots<B>>, i: usize) -> bool {
        self.index == i && std::ptr::eq(self.slots.as_ptr(), Arc::as_ptr(slots))
    }
}

impl<B> Default for SlotMark<B> {
    fn default() -> Self {
        SlotMark {
            home: OnceLock::new(),
            evicted: AtomicBool::new(false),
        }
    }
}

impl<B> SlotMark<B> {
    /// Records the slot the block is put in; false if it has one already.
    fn set_home(&self, home: Home<B>) -> bool {
        self.home.set(home).is_ok()
    }

    /// Whether the block's slot is slot `i` of `slots`.
    fn is_home(&self, slots: &Arc<BlockSlots<B>>, i: usize) -> bool {
        self.home.get().is_some_and(|h| h.is(slots, i))
    }

    /// The slot the block was put in, if any.
    fn home(&self) -> Option<&Home<B>> {
        self.home.get()
    }

    /// Marks the block let go by the block cache.
    fn mark_evicted(&self) {
        self.evicted.store(true, Ordering::SeqCst);
    }

    /// Whether the block cache has let the block go.
    fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::SeqCst)
    }
}

/// Called by the block cache for every block it lets go (evicted or
/// replaced): marks it evicted and clears its slot if it holds it.
pub fn evicted<B: Slotted>(block: &Arc<B>) {
    let mark = block.slot_mark();
    mark.mark_evicted();
    if let Some(home) = mark.home() {
        if let Some(slots) = home.slots.upgrade() {
            if let Some(slot) = slots.slots.get(home.index) {
                clear(slot, block);
            }
        }
    }
}

/// Empties `slot` if it holds `block`.
fn clear<B>(slot: &ArcSwapOption<B>, block: &Arc<B>) {
    let held = slot.load();
    if held.as_ref().is_some_and(|b| Arc::ptr_eq(b, block)) {
        drop(held);
        slot.compare_and_swap(&Some(Arc::clone(block)), None);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    /// A block reduced to its mark.
    #[derive(Debug, Default)]
    struct Block {
        mark: SlotMark<Block>,
    }

    impl Slotted for Block {
        fn slot_mark(&self) -> &SlotMark<Block> {
            &self.mark
        }
    }

    fn block() -> Arc<Block> {
        Arc::new(Block::default())
    }

    #[test]
    fn a_filled_slot_serves_until_its_block_is_evicted() {
        let slots = BlockSlots::new(3);
        let b = block();
        assert!(slots.get(1).is_none());
        slots.fill(1, &b);
        assert!(Arc::ptr_eq(slots.get(1).unwrap().as_ref().unwrap(), &b));
        assert!(slots.get(0).is_none() && slots.get(3).is_none());
        evicted(&b);
        assert!(slots.get(1).is_none(), "the evicted block left its slot");
        assert_eq!(Arc::strong_count(&b), 1, "no reference kept");
    }

    #[test]
    fn a_block_evicted_before_its_slot_is_filled_does_not_stay() {
        let slots = BlockSlots::new(2);
        let b = block();
        evicted(&b);
        slots.fill(0, &b);
        assert!(slots.get(0).is_none());
        assert_eq!(Arc::strong_count(&b), 1);
    }

    #[test]
    fn evicting_another_block_leaves_the_slot_alone() {
        let slots = BlockSlots::new(1);
        let (a, b) = (block(), block());
        slots.fill(0, &a);
        slots.fill(0, &b);
        // `a` was replaced in the slot (as the cache replaces a block read
        // twice); its eviction must not clear `b`.
        evicted(&a);
        assert!(Arc::ptr_eq(slots.get(0).unwrap().as_ref().unwrap(), &b));
        // A block has one home: it is not put in another slot.
        let other = BlockSlots::new(1);
        other.fill(0, &b);
        assert!(other.get(0).is_none());
    }

    #[test]
    fn fills_and_evictions_racing_leave_no_evicted_block_in_a_slot() {
        for _ in 0..200 {
            let slots = BlockSlots::new(1);
            let b = block();
            let (s2, b2) = (Arc::clone(&slots), Arc::clone(&b));
            let filler = std::thread::spawn(move || s2.fill(0, &b2));
            evicted(&b);
            filler.join().unwrap();
            assert!(slots.get(0).is_none());
            assert_eq!(Arc::strong_count(&b), 1);
        }
    }
}
