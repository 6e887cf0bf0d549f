//! The memtable's ordered store: an insert-only concurrent skip list of
//! internal keys and their values.
//!
//! Each entry is one piece of memory — its header, its tower of links, its
//! key and its value side by side — carved from the list's arena when it is
//! inserted and freed with the list (`arena.rs`). Nothing is ever unlinked,
//! so a reader needs no guard, no epoch and no reference count: an entry it
//! reaches stays valid for as long as it borrows the list. Writers link a
//! new entry level by level with one compare-and-swap each (RocksDB's
//! `InlineSkipList`, LevelDB's `SkipList` made concurrent); a reader that
//! loads a link with `Acquire` sees the whole entry the writer published
//! with `Release`.
//!
//! An insertion hint makes ascending loads cheap: the list remembers where
//! its last insert went (the predecessors at every level, the "splice"), and
//! a key that falls right after it is linked there without a search from
//! the top. Only one writer at a time uses the hint (the others search from
//! the top), so concurrent writers never wait for it; the only inserter
//! uses it without taking its lock.
//!
//! This module allows `unsafe` (docs/design.md#unsafe-code): entries are
//! laid out by hand and reached through raw links. Every `unsafe` block
//! rests on three facts stated once here: an entry is fully written before
//! the `Release` store that links it (its link of each level before the
//! store that links it at that level, level 0 first: a reader that reached
//! it at some level reads only its links at that level and below), it is
//! never modified after (only its links, which are atomics), and it is
//! freed only when the list is dropped, which needs `&mut`.
#![allow(unsafe_code)]

use super::arena::Inserters;
use super::arena::{Arena, ALIGN as ARENA_ALIGN};
use super::height::{random_height, MAX_HEIGHT};
use crate::key;
use crate::prefetch::prefetch;
use parking_lot::Mutex;
use std::alloc::Layout;
use std::cmp::Ordering as Order;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// What an entry holds before its tower: the lengths of its key and value
/// and the height of its tower. The tower (`height` links), the key and the
/// value follow it in the same allocation.
#[repr(C)]
struct Node {
    key_len: u32,
    value_len: u32,
    height: u32,
    _pad: u32,
}

const HEADER: usize = size_of::<Node>();
const LINK: usize = size_of::<AtomicPtr<Node>>();

/// The layout of an entry with a tower of `height` links; `None` past
/// `isize::MAX`.
fn layout(height: usize, key_len: usize, value_len: usize) -> Option<Layout> {
    let size = HEADER
        .checked_add(height.checked_mul(LINK)?)?
        .checked_add(key_len)?
        .checked_add(value_len)?;
    Layout::from_size_align(size, align_of::<Node>().max(align_of::<AtomicPtr<Node>>())).ok()
}

/// Link `level` of `node`'s tower.
///
/// SAFETY (callers): `node` is a live entry of the list (or its head) and
/// `level` is below its height.
unsafe fn link<'a>(node: *const Node, level: usize) -> &'a AtomicPtr<Node> {
    // SAFETY: the tower starts right after the header and holds `height`
    // links, aligned by the layout; see the caller's requirement.
    unsafe {
        &*(node
            .cast::<u8>()
            .add(HEADER + level * LINK)
            .cast::<AtomicPtr<Node>>())
    }
}

/// The entry after `node` at `level` (null at the end).
///
/// SAFETY (callers): as for [`link`].
unsafe fn next(node: *const Node, level: usize) -> *mut Node {
    // SAFETY: the caller's requirement; `Acquire` pairs with the `Release`
    // that linked the entry, so all of its bytes are visible.
    unsafe { link(node, level).load(Ordering::Acquire) }
}

/// The key of `node`.
///
/// SAFETY (callers): `node` is a live entry (never the head); the slice
/// lives no longer than the list.
unsafe fn key_of<'a>(node: *const Node) -> &'a [u8] {
    // SAFETY: the key follows the tower; its bytes were written before the
    // entry was linked and are never written again.
    unsafe {
        let n = &*node;
        let start = node.cast::<u8>().add(HEADER + n.height as usize * LINK);
        std::slice::from_raw_parts(start, n.key_len as usize)
    }
}

/// The value of `node`. SAFETY (callers): as for [`key_of`].
unsafe fn value_of<'a>(node: *const Node) -> &'a [u8] {
    // SAFETY: the value follows the key; as for `key_of`.
    unsafe {
        let n = &*node;
        let start = node
            .cast::<u8>()
            .add(HEADER + n.height as usize * LINK + n.key_len as usize);
        std::slice::from_raw_parts(start, n.value_len as usize)
    }
}

/// True if `key` sorts after `node`'s key (the head sorts before all).
///
/// SAFETY (callers): `node` is null, the head, or a live entry.
unsafe fn is_after(key: &[u8], node: *const Node, head: *const Node) -> bool {
    // SAFETY: a non-null entry other than the head has a key.
    node == head
        || (!node.is_null() && key::compare(key, unsafe { key_of(node) }) == Order::Greater)
}

/// The predecessors and successors of a key at every level: where it goes.
struct Splice {
    /// Levels for which `prev` and `next` hold a bracket.
    height: usize,
    prev: [*mut Node; MAX_HEIGHT + 1],
    next: [*mut Node; MAX_HEIGHT + 1],
}

// SAFETY: a splice is only links into the list that owns it; it is read and
// written under the list's hint lock (or by the list's only inserter).
unsafe impl Send for Splice {}

impl Splice {
    fn new() -> Splice {
        Splice {
            height: 0,
            prev: [ptr::null_mut(); MAX_HEIGHT + 1],
            next: [ptr::null_mut(); MAX_HEIGHT + 1],
        }
    }

    /// Sets the bracket at `level` (at most `MAX_HEIGHT`).
    fn set(&mut self, level: usize, prev: *mut Node, next: *mut Node) {
        if let (Some(p), Some(n)) = (self.prev.get_mut(level), self.next.get_mut(level)) {
            *p = prev;
            *n = next;
        }
    }
}

/// An insert-only, ordered, concurrent list of (internal key, value)
/// entries; keys are distinct and ordered by [`key::compare`].
pub(super) struct SkipList {
    /// Where the entries (and the head) live; freed with the list.
    arena: Arena,
    head: NonNull<Node>,
    /// This list's identity, carried by its positions.
    id: u64,
    /// Levels in use (at least 1).
    height: AtomicUsize,
    len: AtomicUsize,
    /// Where the last insert that used it went (see the module doc).
    hint: Mutex<Splice>,
    /// The entry with the largest key (null while the list is empty):
    /// raised by an insert that finds nothing after its entry.
    last: AtomicPtr<Node>,
}

// SAFETY: entries are immutable once linked, links are atomics, and entries
// are freed only by `drop` (`&mut self`): sharing the list between threads
// shares nothing unsynchronised.
unsafe impl Send for SkipList {}
// SAFETY: as for `Send`.
unsafe impl Sync for SkipList {}

/// A borrowed entry of a [`SkipList`].
#[derive(Clone, Copy)]
pub(super) struct Entry<'a> {
    node: NonNull<Node>,
    /// The identity of the list.
    list: u64,
    _list: PhantomData<&'a SkipList>,
}

// SAFETY: an entry is a shared borrow of immutable bytes in a `Sync` list.
unsafe impl Send for Entry<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for Entry<'_> {}

impl<'a> Entry<'a> {
    fn new(node: *mut Node, list: u64) -> Option<Entry<'a>> {
        NonNull::new(node).map(|node| Entry {
            node,
            list,
            _list: PhantomData,
        })
    }

    /// The entry's internal key.
    pub fn key(&self) -> &'a [u8] {
        // SAFETY: an `Entry` is only made from a live, non-head entry of a
        // list borrowed for `'a`.
        unsafe { key_of(self.node.as_ptr()) }
    }

    /// The entry's value.
    pub fn value(&self) -> &'a [u8] {
        // SAFETY: as for `key`.
        unsafe { value_of(self.node.as_ptr()) }
    }

    /// The next entry in key order.
    pub fn next(&self) -> Option<Entry<'a>> {
        // SAFETY: a live entry has a level 0.
        Entry::new(unsafe { next(self.node.as_ptr(), 0) }, self.list)
    }

    /// The entry, detached from its borrow, to be found again with
    /// [`SkipList::entry`].
    pub fn position(&self) -> Position {
        Position {
            node: self.node,
            list: self.list,
        }
    }
}

/// An entry's place in its list, without a borrow (for a cursor that owns
/// its memtable, or an index beside the list): the entry's address and the
/// list's identity, so that only the list it came from can follow it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Position {
    node: NonNull<Node>,
    list: u64,
}

/// Identities of lists, never reused within a process.
static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

/// Identities reserved together and handed out in order, each to one list
/// ([`SkipList::from_block`]): the lists of one block have consecutive
/// identities, so a position says which of them holds it.
pub(super) struct IdBlock {
    next: u64,
    end: u64,
}

impl IdBlock {
    /// `n` identities no list has had.
    pub fn reserve(n: usize) -> IdBlock {
        let next = NEXT_LIST_ID.fetch_add(n as u64, Ordering::Relaxed);
        IdBlock {
            next,
            end: next + n as u64,
        }
    }

    /// The identity the next list made from the block gets.
    pub fn next_id(&self) -> u64 {
        self.next
    }
}

impl Position {
    /// The identity of the list that holds the entry.
    pub fn list_id(&self) -> u64 {
        self.list
    }

    /// The entry's address alone, for an index that keeps which list
    /// holds it apart (in 16-byte slots): [`Position::from_addr`] is the
    /// way back.
    pub fn addr(&self) -> NodeAddr {
        NodeAddr(self.node)
    }

    /// The position `addr` was taken from, given that position's list.
    ///
    /// SAFETY (callers): `addr` is the [`Position::addr`] of a position in
    /// the list of identity `list`, so that the position is one that list
    /// handed out (a list follows only its own).
    pub unsafe fn from_addr(addr: NodeAddr, list: u64) -> Position {
        Position { node: addr.0, list }
    }
}

/// An entry's address without its list's identity (see [`Position::addr`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct NodeAddr(NonNull<Node>);

impl NodeAddr {
    /// Asks the CPU for the two lines after the entry's first, where the
    /// rest of its key and its value lie (a value of about 100 bytes ends
    /// in the second or third), while its first line, with its lengths, is
    /// read: the value is copied from them next. Reads nothing.
    pub(super) fn prefetch_body(self) {
        let at = self.0.as_ptr().cast::<u8>();
        crate::prefetch::prefetch(at.wrapping_add(64));
        crate::prefetch::prefetch(at.wrapping_add(128));
    }
}

// SAFETY: as for `Position`: an address, followed only once made a
// position again, through the list it came from.
unsafe impl Send for NodeAddr {}
// SAFETY: as for `Send`.
unsafe impl Sync for NodeAddr {}

// SAFETY: a position is an address; it is dereferenced only through
// `SkipList::entry`, which checks that it belongs to that list.
unsafe impl Send for Position {}
// SAFETY: as for `Send`.
unsafe impl Sync for Position {}

impl SkipList {
    #[cfg(test)]
    pub fn new() -> SkipList {
        SkipList::with_id(NEXT_LIST_ID.fetch_add(1, Ordering::Relaxed), usize::MAX)
    }

    /// An empty list with the next identity of `block`, whose arena holds
    /// at most `limit` bytes (see [`SkipList::try_insert`]); `None` once
    /// the block is used up.
    pub fn from_block(block: &mut IdBlock, limit: usize) -> Option<SkipList> {
        (block.next < block.end).then(|| {
            let id = block.next;
            block.next += 1;
            SkipList::with_id(id, limit)
        })
    }

    /// An empty list; `id` is no other list's.
    fn with_id(id: u64, limit: usize) -> SkipList {
        let arena = Arena::new(limit);
        let Some(head) = alloc_node(&arena, MAX_HEIGHT, &[], &[], true, Inserters::Many) else {
            unreachable!("an allocation past the limit is always made")
        };
        for level in 0..MAX_HEIGHT {
            // SAFETY: the head has `MAX_HEIGHT` links; nobody sees it yet.
            unsafe { link(head.as_ptr(), level).store(ptr::null_mut(), Ordering::Relaxed) };
        }
        SkipList {
            arena,
            head,
            id,
            height: AtomicUsize::new(1),
            len: AtomicUsize::new(0),
            hint: Mutex::new(Splice::new()),
            last: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of entries, read `Acquire`: a walk of the list after it finds
    /// every entry counted (an index of the list, `frozen`).
    pub fn counted(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The entry at `pos`; `None` if `pos` was taken from another list.
    pub fn entry(&self, pos: Position) -> Option<Entry<'_>> {
        (pos.list == self.id).then_some(Entry {
            node: pos.node,
            list: self.id,
            _list: PhantomData,
        })
    }

    /// Bytes of memory the list holds (its arena's chunks, whole).
    pub fn reserved(&self) -> usize {
        self.arena.reserved()
    }

    /// Bytes of memory the list is charged for ([`Arena::charged`]).
    pub fn charged(&self) -> usize {
        self.arena.charged()
    }

    /// [`SkipList::try_insert`] into a list without a limit.
    #[cfg(test)]
    pub fn insert(&self, key_parts: &[&[u8]], value: &[u8]) -> Entry<'_> {
        match self.try_insert(key_parts, value, Inserters::Many) {
            Some(e) => e,
            None => panic!("a list with a limit is full"),
        }
    }

    /// Inserts an entry whose key is the concatenation of `key_parts`;
    /// `None` (nothing inserted) when the list is full: its arena has
    /// reached its limit. An empty list is never full.
    /// REQUIRES: no entry with an equal key is in the list (the memtable
    /// inserts each internal key once). Concurrent inserts are allowed
    /// unless `who` is [`Inserters::One`].
    pub fn try_insert(
        &self,
        key_parts: &[&[u8]],
        value: &[u8],
        who: Inserters,
    ) -> Option<Entry<'_>> {
        let height = random_height();
        let node = alloc_node(&self.arena, height, key_parts, value, self.is_empty(), who)?;
        let node_ptr = node.as_ptr();
        // SAFETY: the node was just made and is not linked yet.
        let key = unsafe { key_of(node_ptr) };
        let mut max = self.height.load(Ordering::Relaxed);
        while height > max {
            match self.height.compare_exchange_weak(
                max,
                height,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => max = height,
                Err(now) => max = now,
            }
        }
        let mut guard = (who == Inserters::Many)
            .then(|| self.hint.try_lock())
            .flatten();
        let hint = match who {
            // SAFETY: no other writer inserts (so none takes the hint)
            // until this insert returns; readers never touch it.
            Inserters::One => Some(unsafe { &mut *self.hint.data_ptr() }),
            Inserters::Many => guard.as_deref_mut(),
        };
        match hint {
            Some(hint) => {
                self.place(hint, key, max);
                self.link_node(hint, node_ptr, key, height, who);
                for level in 0..height {
                    if let Some(p) = hint.prev.get_mut(level) {
                        *p = node_ptr;
                    }
                }
            }
            None => {
                let mut splice = Splice::new();
                self.place(&mut splice, key, max);
                self.link_node(&mut splice, node_ptr, key, height, who);
            }
        }
        // SAFETY: `node_ptr` is linked at level 0.
        if unsafe { next(node_ptr, 0) }.is_null() {
            self.raise_last(node_ptr, key, who);
        }
        // Counted after it is linked, `Release`: whoever reads the count
        // with `Acquire` ([`SkipList::counted`]) finds every entry counted
        // by a walk of the list.
        match who {
            Inserters::Many => {
                self.len.fetch_add(1, Ordering::Release);
            }
            Inserters::One => {
                let n = self.len.load(Ordering::Relaxed);
                self.len.store(n + 1, Ordering::Release);
            }
        }
        Some(Entry {
            node,
            list: self.id,
            _list: PhantomData,
        })
    }

    /// Makes `node` (of key `key`, just linked, nothing after it then) the
    /// last entry unless a later one is: writers appending at once leave
    /// the largest. The only inserter stores it.
    fn raise_last(&self, node: *mut Node, key: &[u8], who: Inserters) {
        if who == Inserters::One {
            self.last.store(node, Ordering::Release);
            return;
        }
        let head = self.head.as_ptr();
        let mut cur = self.last.load(Ordering::Acquire);
        // SAFETY: `cur` is null or a live entry of this list.
        while cur.is_null() || unsafe { is_after(key, cur, head) } {
            match self
                .last
                .compare_exchange_weak(cur, node, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// The key of the entry with the largest key, if any: every entry
    /// inserted before this call sorts at or before it.
    pub fn last_key(&self) -> Option<&[u8]> {
        let last = self.last.load(Ordering::Acquire);
        // SAFETY: a non-null `last` is a live entry of this list, which
        // lives as long as the borrow of `self`.
        (!last.is_null()).then(|| unsafe { key_of(last) })
    }

    /// Makes `splice` bracket `key` at every level below `max`: reuses the
    /// levels of a previous splice that still bracket it, searching down
    /// from the lowest of them (or from the top) for the rest.
    fn place(&self, splice: &mut Splice, key: &[u8], max: usize) {
        let head = self.head.as_ptr();
        let fresh = splice.height == 0;
        // The list's height was read before the hint was taken: another
        // writer may have raised it, and the splice with it, since. A
        // search starts from the head at the splice's top level, never from
        // a bracket left there for another key (which may sort after this
        // one: the search would then link the entry after it).
        let max = max.max(splice.height);
        // Levels a previous splice did not cover bracket everything.
        for level in splice.height..=max.min(MAX_HEIGHT) {
            splice.set(level, head, ptr::null_mut());
        }
        splice.height = splice.height.max(max);
        // A key that falls right after the previous insert is bracketed at
        // level 0, and then at every level above (a splice's brackets nest:
        // each level's pair encloses the pair below it). Any other key is
        // searched for from the top.
        let mut from = max;
        if !fresh {
            if let (Some(&prev), Some(next_slot)) = (splice.prev.first(), splice.next.first_mut()) {
                // SAFETY: `prev` is the head or an entry of this list, which
                // has a level 0; `now` is null or a live entry.
                let brackets = unsafe {
                    let now = next(prev, 0);
                    let b = is_after(key, prev, head) && !is_after(key, now, head);
                    if b {
                        *next_slot = now;
                    }
                    b
                };
                if brackets {
                    from = 0;
                }
            }
        }
        for level in (0..from).rev() {
            let start = splice.prev.get(level + 1).copied().unwrap_or(head);
            let (p, n) = self.find_for_level(key, start, level);
            splice.set(level, p, n);
        }
    }

    /// Walks `level` from `before` (which sorts before `key`) to the pair of
    /// entries `key` goes between.
    ///
    /// Above level 0, each entry reached also has the entry after it one
    /// level down fetched into the cache ([`prefetch`]: the line where it
    /// starts, its header, the start of its tower and, for most entries,
    /// its key): the first one the next level's walk compares if the walk
    /// goes down there, whose cache miss then overlaps this level's.
    /// Random inserts into a memtable of 400,000 entries took 12% less time
    /// with it (`cargo run --release -p lamina --example memtable_inserts`).
    fn find_for_level(
        &self,
        key: &[u8],
        mut before: *mut Node,
        level: usize,
    ) -> (*mut Node, *mut Node) {
        let head = self.head.as_ptr();
        loop {
            // SAFETY: `before` is the head or an entry linked at `level`.
            let after = unsafe { next(before, level) };
            if let Some(below) = level.checked_sub(1) {
                // SAFETY: linked at `level`, `before` is linked below it too.
                prefetch(unsafe { next(before, below) }.cast_const());
            }
            // SAFETY: `after` is null or a live entry.
            if unsafe { is_after(key, after, head) } {
                before = after;
            } else {
                return (before, after);
            }
        }
    }

    /// Links `node` into every level below `height`, between the splice's
    /// brackets, searching a level again where another writer got there
    /// first. Level 0 first: once linked there the entry is in the list.
    /// The only inserter stores each link; others compare and swap.
    fn link_node(
        &self,
        splice: &mut Splice,
        node: *mut Node,
        key: &[u8],
        height: usize,
        who: Inserters,
    ) {
        for level in 0..height {
            loop {
                let (Some(&prev), Some(&succ)) = (splice.prev.get(level), splice.next.get(level))
                else {
                    return;
                };
                // SAFETY: `node` is ours and its tower has `height` links;
                // nobody else sees it at this level yet.
                unsafe { link(node, level).store(succ, Ordering::Relaxed) };
                // SAFETY: `prev` is the head or an entry linked at `level`.
                // `Release` publishes the node's bytes to whoever loads
                // this link; at level 0, `SeqCst`, so that a hash index
                // built while writers insert sees every entry whose writer
                // did not record it (see `NewestIndex::build`; the same
                // instruction on x86).
                let order = if level == 0 {
                    Ordering::SeqCst
                } else {
                    Ordering::Release
                };
                // SAFETY: as above.
                let at = unsafe { link(prev, level) };
                if who == Inserters::One {
                    // No other writer moves this link: it is still `succ`.
                    at.store(node, order);
                    break;
                }
                if at
                    .compare_exchange(succ, node, order, Ordering::Relaxed)
                    .is_ok()
                {
                    break;
                }
                let (p, n) = self.find_for_level(key, prev, level);
                splice.set(level, p, n);
            }
        }
    }

    /// The last entry, descending from the top, past which `advance` says
    /// to go no further (or the head): keys for which `advance` holds must
    /// come before all keys for which it does not.
    fn last_where(&self, advance: impl Fn(&[u8]) -> bool) -> *mut Node {
        let mut x = self.head.as_ptr();
        let mut level = self.height.load(Ordering::Relaxed);
        while level > 0 {
            level -= 1;
            loop {
                // SAFETY: `x` is the head or an entry reached at `level`.
                let n = unsafe { next(x, level) };
                // SAFETY: a non-null `n` is a live entry.
                if n.is_null() || !advance(unsafe { key_of(n) }) {
                    break;
                }
                x = n;
            }
        }
        x
    }

    /// The last entry whose key is below `target` (`or_equal`: at or
    /// below), or the head.
    fn last_before(&self, target: &[u8], or_equal: bool) -> *mut Node {
        self.last_where(|k| match key::compare(k, target) {
            Order::Less => true,
            Order::Equal => or_equal,
            Order::Greater => false,
        })
    }

    /// `x` as an entry, `None` for the head.
    fn entry_unless_head(&self, x: *mut Node) -> Option<Entry<'_>> {
        if x == self.head.as_ptr() {
            None
        } else {
            Entry::new(x, self.id)
        }
    }

    /// The first entry at or after `target`.
    pub fn lower_bound(&self, target: &[u8]) -> Option<Entry<'_>> {
        let before = self.last_before(target, false);
        // SAFETY: the head or an entry has a level 0.
        Entry::new(unsafe { next(before, 0) }, self.id)
    }

    /// The last entry before `target` (`or_equal`: at or before).
    pub fn upper_bound(&self, target: &[u8], or_equal: bool) -> Option<Entry<'_>> {
        self.entry_unless_head(self.last_before(target, or_equal))
    }

    /// The first entry.
    pub fn front(&self) -> Option<Entry<'_>> {
        // SAFETY: the head has every level.
        Entry::new(unsafe { next(self.head.as_ptr(), 0) }, self.id)
    }

    /// The last entry.
    pub fn back(&self) -> Option<Entry<'_>> {
        self.entry_unless_head(self.last_where(|_| true))
    }
}

/// A new entry of `height` links holding the concatenation of `key_parts`
/// and `value`; `None` if `arena` is full (past its limit only if
/// `past_limit`: see [`Arena::alloc`]). Its links are not written: the
/// caller writes each before anything can read it (`link_node` writes the
/// link of each level just before it links the entry there).
fn alloc_node(
    arena: &Arena,
    height: usize,
    key_parts: &[&[u8]],
    value: &[u8],
    past_limit: bool,
    who: Inserters,
) -> Option<NonNull<Node>> {
    let key_len: usize = key_parts.iter().map(|p| p.len()).sum();
    let (Ok(k32), Ok(v32), Some(l)) = (
        u32::try_from(key_len),
        u32::try_from(value.len()),
        layout(height, key_len, value.len()),
    ) else {
        // Keys and values are bounded far below 4 GiB before they reach
        // the memtable (Batch::validate).
        panic!("memtable entry of {key_len} + {} bytes", value.len());
    };
    debug_assert!(l.align() <= ARENA_ALIGN);
    let node = arena.alloc(l.size(), past_limit, who)?.cast::<Node>();
    let raw = node.as_ptr().cast::<u8>();
    // SAFETY: `raw` holds `l.size()` bytes: the header, `height` links, the
    // key and the value, written here once (but the links), before anyone
    // can see them.
    unsafe {
        node.as_ptr().write(Node {
            key_len: k32,
            value_len: v32,
            height: height as u32,
            _pad: 0,
        });
        let mut at = raw.add(HEADER + height * LINK);
        for part in key_parts {
            copy_part(part, at);
            at = at.add(part.len());
        }
        ptr::copy_nonoverlapping(value.as_ptr(), at, value.len());
    }
    Some(node)
}

/// Copies `part` to `dst`: a keyspace id (4 bytes) or a trailer (8) with
/// one store, any other part with a `memcpy` call.
/// SAFETY (callers): `dst` is valid for `part.len()` bytes of writes.
#[inline(always)]
unsafe fn copy_part(part: &[u8], dst: *mut u8) {
    // SAFETY: the caller's requirement; the stores are unaligned.
    unsafe {
        if let Ok(b) = <[u8; 4]>::try_from(part) {
            dst.cast::<[u8; 4]>().write_unaligned(b);
        } else if let Ok(b) = <[u8; 8]>::try_from(part) {
            dst.cast::<[u8; 8]>().write_unaligned(b);
        } else {
            ptr::copy_nonoverlapping(part.as_ptr(), dst, part.len());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
#[path = "skiplist_tests.rs"]
mod tests;
