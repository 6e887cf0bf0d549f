//! The memory of one skip list's entries: carved in order from chunks (a
//! bump allocator shared by concurrent writers), and freed all at once when
//! the list is dropped.
//!
//! An entry was one `malloc` when inserted and one `free` when its memtable
//! was dropped, on whichever thread let go of it last, often a writer: a
//! profile of ascending puts from Python (`perf record` of
//! `bench/point_loops.py fill sequential`) put 15% of the writer's time in
//! `malloc` and `free`. Here an allocation is one atomic add on the
//! chunk's cursor; a writer that finds the chunk full makes the next one
//! under a lock. Chunks grow from [`FIRST_BLOCK`] to [`MAX_BLOCK`] bytes, so
//! a small memtable holds little unused memory; an arena allowed at least
//! [`HUGE_FROM_THE_START`] bytes (a list of a memtable of 32 MiB or more)
//! takes chunks of [`MAX_BLOCK`] from the first, made resident ahead by
//! [`spare`], so that its writers never fault a page in. An entry larger
//! than a quarter of the next chunk gets an allocation of its own.
//!
//! Chunks of the largest size, 2 MiB, are aligned to 2 MiB and the kernel is
//! asked to back them with huge pages (`MADV_HUGEPAGE`): a skip list's search
//! reaches entries all over its memtable, and one TLB entry then covers 2 MiB
//! of them instead of 4 KiB. A huge page is resident whole from its first
//! byte written, so its memtable is charged every huge chunk whole (other
//! chunks as far as they are handed out: [`Arena::charged`]), and an arena
//! given a limit stops at it: its last chunk is cut to what is left, and an
//! allocation that would pass it is refused (its list is full; the
//! memtable opens the next).
//!
//! This module allows `unsafe` (docs/design.md#unsafe-code): it hands out
//! raw memory. Every chunk lives until the arena is dropped (`&mut self`),
//! and each byte range is handed out once.
#![allow(unsafe_code)]

use super::spare;
use parking_lot::Mutex;
use std::alloc::Layout;
use std::mem::size_of;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Who may insert into a memtable while a caller does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserters {
    /// Other writers may be inserting too: each step another could race
    /// (carving the entry's memory, linking it, counting it) is an atomic
    /// read-modify-write.
    Many,
    /// The caller is the only one, and stays so until its insert returns
    /// (a single writer's commit, under the commit lock with every writer
    /// before it published): those steps are plain loads and stores.
    /// Readers may still read meanwhile.
    One,
}

/// Alignment of every allocation (an entry's header and links).
pub(super) const ALIGN: usize = 8;
/// Bytes of the first chunk, its head included.
const FIRST_BLOCK: usize = 4 << 10;
/// The least limit of an arena whose first chunk is a huge one. Below it
/// the chunks ramp up from [`FIRST_BLOCK`], so that a list of a small
/// memtable (the crash tests' are of a few KiB) holds little it does not use.
const HUGE_FROM_THE_START: usize = 2 * MAX_BLOCK;
/// Bytes of the largest chunk, its head included: one huge page.
const MAX_BLOCK: usize = spare::HUGE;

/// The head of a chunk; its usable bytes follow it.
#[repr(C)]
struct Chunk {
    /// Bytes handed out (or claimed past the end by writers that then
    /// found the chunk full).
    used: AtomicUsize,
    /// Usable bytes after the head.
    cap: usize,
}

const CHUNK_HEAD: usize = size_of::<Chunk>();

/// See the module doc.
pub(super) struct Arena {
    /// The chunk allocations come from (null before the first).
    current: AtomicPtr<Chunk>,
    /// Every allocation made, with its layout, to free at the end.
    blocks: Mutex<Vec<(NonNull<u8>, Layout)>>,
    /// Bytes of every block in `blocks`: what the arena holds. Raised under
    /// the `blocks` lock.
    reserved: AtomicUsize,
    /// The most `reserved` may reach (see [`Arena::alloc`]).
    limit: usize,
}

/// What [`Arena::grow`] did.
enum Grown {
    /// Another chunk is current: try it.
    Chunk,
    /// An allocation of its own, for one large request.
    Own(NonNull<u8>),
    /// The limit leaves no room.
    Full,
}

// SAFETY: the arena's own state is atomics and a mutex; the memory it hands
// out belongs to whoever asked for it.
unsafe impl Send for Arena {}
// SAFETY: as for `Send`.
unsafe impl Sync for Arena {}

impl Arena {
    /// Whether an arena of `limit` bytes takes huge chunks from the first
    /// (see the module doc).
    pub(super) fn starts_huge(limit: usize) -> bool {
        limit >= HUGE_FROM_THE_START
    }

    /// An empty arena that reserves at most `limit` bytes (`usize::MAX`:
    /// no limit), beyond the exceptions [`Arena::alloc`] names.
    pub(super) fn new(limit: usize) -> Arena {
        Arena {
            current: AtomicPtr::new(ptr::null_mut()),
            blocks: Mutex::new(Vec::new()),
            reserved: AtomicUsize::new(0),
            limit,
        }
    }

    /// Bytes of memory the arena holds: its chunks whole, used or not.
    pub(super) fn reserved(&self) -> usize {
        self.reserved.load(Ordering::Relaxed)
    }

    /// Bytes of memory the arena is charged for: what it reserved, less
    /// the part of its current chunk not handed out yet if that chunk is
    /// of small pages (not written, so not resident). A huge chunk is
    /// resident whole from its first byte written, and counts whole.
    pub(super) fn charged(&self) -> usize {
        let current = self.current.load(Ordering::Acquire);
        let reserved = self.reserved.load(Ordering::Relaxed);
        let Some(chunk) = NonNull::new(current) else {
            return reserved;
        };
        // SAFETY: as in `alloc`.
        let head = unsafe { chunk.as_ref() };
        if CHUNK_HEAD + head.cap >= MAX_BLOCK {
            return reserved;
        }
        let unused = head.cap.saturating_sub(head.used.load(Ordering::Relaxed));
        reserved.saturating_sub(unused)
    }

    /// `size` bytes aligned to [`ALIGN`], not handed out before, valid
    /// until the arena is dropped. Safe to call from several threads
    /// (`who` says whether another may be allocating at the same time).
    /// `None` when the current chunk has no room and a new one would take
    /// the arena past its limit — unless `past_limit`: then a chunk just
    /// large enough is made whatever the limit (for a list's first entries,
    /// which must go somewhere).
    pub(super) fn alloc(
        &self,
        size: usize,
        past_limit: bool,
        who: Inserters,
    ) -> Option<NonNull<u8>> {
        let size = size.max(1).next_multiple_of(ALIGN);
        loop {
            let seen = self.current.load(Ordering::Acquire);
            if let Some(chunk) = NonNull::new(seen) {
                // SAFETY: a chunk lives until the arena drops; its head was
                // written before the `Release` store that made it current.
                let head = unsafe { chunk.as_ref() };
                let at = match who {
                    Inserters::Many => head.used.fetch_add(size, Ordering::Relaxed),
                    Inserters::One => {
                        let at = head.used.load(Ordering::Relaxed);
                        head.used.store(at.saturating_add(size), Ordering::Relaxed);
                        at
                    }
                };
                if at.checked_add(size).is_some_and(|end| end <= head.cap) {
                    // SAFETY: `at + size <= cap`: inside the chunk's usable
                    // bytes, which follow its head.
                    return Some(unsafe { chunk.cast::<u8>().add(CHUNK_HEAD + at) });
                }
            }
            match self.grow(seen, size, past_limit) {
                Grown::Chunk => {}
                Grown::Own(own) => return Some(own),
                Grown::Full => return None,
            }
        }
    }

    /// Called when `seen` (the current chunk, or null) had no room for
    /// `size` bytes: makes the next chunk current, unless another writer
    /// did meanwhile; or, for an allocation too large for chunks, returns
    /// one of its own; or finds no room under the limit.
    fn grow(&self, seen: *mut Chunk, size: usize, past_limit: bool) -> Grown {
        let mut blocks = self.blocks.lock();
        if self.current.load(Ordering::Acquire) != seen {
            return Grown::Chunk;
        }
        let reserved = self.reserved.load(Ordering::Relaxed);
        let room = self.limit.saturating_sub(reserved);
        // SAFETY: as in `alloc`.
        let last = NonNull::new(seen).map_or(0, |c| CHUNK_HEAD + unsafe { c.as_ref() }.cap);
        let first = if Arena::starts_huge(self.limit) {
            MAX_BLOCK
        } else {
            FIRST_BLOCK
        };
        let next = last.saturating_mul(2).clamp(first, MAX_BLOCK);
        let own = size > next / 4;
        let block = match own {
            true => size,
            false => next
                .min(room)
                .max(if past_limit { CHUNK_HEAD + size } else { 0 }),
        };
        let needed = if own { size } else { CHUNK_HEAD + size };
        if block < needed || (block > room && !past_limit) {
            return Grown::Full;
        }
        let (raw, layout) = allocate(block);
        blocks.push((raw, layout));
        self.reserved
            .store(reserved + layout.size(), Ordering::Relaxed);
        if own {
            return Grown::Own(raw);
        }
        let chunk = raw.cast::<Chunk>();
        // SAFETY: `raw` holds `layout.size() >= CHUNK_HEAD + size` bytes
        // aligned to ALIGN (enough for `Chunk`), and no one else has it yet.
        unsafe {
            chunk.as_ptr().write(Chunk {
                used: AtomicUsize::new(0),
                cap: layout.size() - CHUNK_HEAD,
            });
        }
        self.current.store(chunk.as_ptr(), Ordering::Release);
        Grown::Chunk
    }
}

/// A new block of `size` bytes aligned to [`ALIGN`]; a block of
/// [`MAX_BLOCK`] bytes is aligned to its size and backed by a huge page:
/// one made ready ahead ([`spare`]) if one is waiting.
fn allocate(size: usize) -> (NonNull<u8>, Layout) {
    if size == MAX_BLOCK {
        return (spare::take(), spare::layout());
    }
    let Ok(layout) = Layout::from_size_align(size, ALIGN) else {
        panic!("memtable allocation of {size} bytes");
    };
    // SAFETY: the layout's size is never zero (at least a chunk's head or
    // one aligned entry).
    let raw = unsafe { std::alloc::alloc(layout) };
    let Some(p) = NonNull::new(raw) else {
        std::alloc::handle_alloc_error(layout)
    };
    (p, layout)
}

// A chunk's head sits at the start of a block aligned to ALIGN.
const _: () = assert!(std::mem::align_of::<Chunk>() <= ALIGN);

impl Drop for Arena {
    fn drop(&mut self) {
        for (p, layout) in self.blocks.get_mut().drain(..) {
            // SAFETY: `&mut self`: nothing handed out is used any more; each
            // block is freed (or a huge chunk handed back) once, with the
            // layout it was made with.
            unsafe {
                if layout == spare::layout() {
                    spare::give_back(p);
                } else {
                    std::alloc::dealloc(p.as_ptr(), layout);
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Writes `fill` over `n` bytes at `p` and checks them back later.
    fn claim(arena: &Arena, n: usize, fill: u8) -> (usize, usize, u8) {
        let p = arena.alloc(n, false, Inserters::Many).unwrap();
        assert_eq!(p.as_ptr() as usize % ALIGN, 0, "aligned");
        // SAFETY: `n` bytes were just handed out to this caller alone.
        unsafe { ptr::write_bytes(p.as_ptr(), fill, n) };
        (p.as_ptr() as usize, n, fill)
    }

    fn intact(claims: &[(usize, usize, u8)]) {
        let mut sorted = claims.to_vec();
        sorted.sort_unstable();
        for w in sorted.windows(2) {
            assert!(
                w[0].0 + w[0].1 <= w[1].0,
                "ranges overlap: {:?} {:?}",
                w[0],
                w[1]
            );
        }
        for &(at, n, fill) in claims {
            // SAFETY: the arena is alive and the range was claimed above.
            let bytes = unsafe { std::slice::from_raw_parts(at as *const u8, n) };
            assert!(bytes.iter().all(|&b| b == fill), "a range was overwritten");
        }
    }

    #[test]
    fn allocations_are_aligned_apart_and_kept_across_chunks() {
        // Small chunks, ramping up.
        let arena = Arena::new(HUGE_FROM_THE_START - 1);
        let claims: Vec<_> = (0..5_000usize)
            .map(|i| claim(&arena, 1 + (i * 37) % 300, i as u8))
            .collect();
        // Past a quarter of the largest chunk: an allocation of its own.
        let big = claim(&arena, MAX_BLOCK, 0xAB);
        let mut all = claims;
        all.push(big);
        all.push(claim(&arena, 24, 0xCD));
        intact(&all);
        assert!(arena.blocks.lock().len() > 3, "several chunks were made");
    }

    #[test]
    fn concurrent_writers_never_share_bytes() {
        let arena = Arc::new(Arena::new(usize::MAX));
        let threads: Vec<_> = (0..8u8)
            .map(|t| {
                let arena = Arc::clone(&arena);
                std::thread::spawn(move || {
                    (0..4_000usize)
                        .map(|i| claim(&arena, 16 + (i * 13 + t as usize) % 200, t))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let all: Vec<_> = threads
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        intact(&all);
    }

    #[test]
    fn an_arena_stops_at_its_limit_except_for_what_must_go_somewhere() {
        let limit = 40 << 10;
        let arena = Arena::new(limit);
        let mut claims = Vec::new();
        let mut refused = 0;
        for i in 0..2_000usize {
            let n = 100 + i % 50;
            match arena.alloc(n, false, Inserters::Many) {
                Some(p) => {
                    // SAFETY: `n` bytes were just handed out to this caller alone.
                    unsafe { ptr::write_bytes(p.as_ptr(), i as u8, n) };
                    claims.push((p.as_ptr() as usize, n, i as u8));
                }
                None => refused += 1,
            }
            assert!(arena.reserved() <= limit, "{} reserved", arena.reserved());
        }
        assert!(refused > 0, "the limit was reached");
        // Carved to the byte: what is left is less than one more request.
        assert!(limit - arena.reserved() < CHUNK_HEAD + 150);
        // Past the limit only when asked, and then no more than needed.
        let before = arena.reserved();
        let p = arena.alloc(1000, true, Inserters::Many).unwrap();
        // SAFETY: as above.
        unsafe { ptr::write_bytes(p.as_ptr(), 0xEE, 1000) };
        claims.push((p.as_ptr() as usize, 1000, 0xEE));
        let grew = arena.reserved() - before;
        assert!((1000..=CHUNK_HEAD + 1000).contains(&grew), "grew by {grew}");
        assert!(arena.alloc(1000, false, Inserters::Many).is_none());
        intact(&claims);
    }

    #[test]
    fn small_chunks_are_charged_as_far_as_they_are_handed_out() {
        let arena = Arena::new(HUGE_FROM_THE_START - 1);
        let mut claims = Vec::new();
        while arena.blocks.lock().len() < 6 {
            let small = arena.reserved() - arena.charged();
            let current = arena.current.load(Ordering::Acquire);
            if let Some(c) = NonNull::new(current) {
                // SAFETY: the chunk lives as long as the arena.
                let c = unsafe { c.as_ref() };
                assert_eq!(small, c.cap.saturating_sub(c.used.load(Ordering::Relaxed)));
            }
            claims.push(claim(&arena, 200, 7));
        }
        let blocks = arena.blocks.lock();
        assert!(
            blocks.iter().all(|(_, l)| l.size() < MAX_BLOCK),
            "no huge chunk"
        );
        assert_eq!(blocks.first().map(|(_, l)| l.size()), Some(FIRST_BLOCK));
        drop(blocks);
        assert!(
            arena.charged() < arena.reserved(),
            "the current chunk's rest is not charged"
        );
        intact(&claims);
    }

    #[test]
    fn a_large_arena_starts_with_huge_chunks_counted_whole() {
        for limit in [HUGE_FROM_THE_START, usize::MAX] {
            let arena = Arena::new(limit);
            let mut claims = vec![claim(&arena, 200, 7)];
            while arena.blocks.lock().len() < 2 {
                claims.push(claim(&arena, 64 << 10, 9));
            }
            let blocks = arena.blocks.lock();
            for (p, l) in blocks.iter() {
                assert_eq!(l.size(), MAX_BLOCK, "limit {limit}");
                assert_eq!(p.as_ptr() as usize % MAX_BLOCK, 0, "aligned to a huge page");
            }
            drop(blocks);
            assert_eq!(arena.reserved(), 2 * MAX_BLOCK);
            assert_eq!(
                arena.charged(),
                2 * MAX_BLOCK,
                "a huge chunk is charged whole"
            );
            intact(&claims);
        }
    }
}
