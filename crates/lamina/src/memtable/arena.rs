//! The memory of one skip list's entries: carved in order from chunks (a
//! bump allocator shared by concurrent writers), and freed all at once when
//! the list is dropped.
//!
//! An entry was one `malloc` when inserted and one `free` when its memtable
//! was dropped, on whichever thread let go of it last, often a writer: in a
//! profile of ascending puts from Python the writer spent 8% of its time in
//! `malloc` and 7% in `free`. Here an allocation is one atomic add on the
//! chunk's cursor; a writer that finds the chunk full makes the next one
//! under a lock. Chunks grow from [`FIRST_CHUNK`] to [`MAX_CHUNK`], so a
//! small memtable holds little unused memory; an entry larger than a
//! quarter of the next chunk gets an allocation of its own.
//!
//! This module allows `unsafe` (docs/design.md#unsafe-code): it hands out
//! raw memory. Every chunk lives until the arena is dropped (`&mut self`),
//! and each byte range is handed out once.
#![allow(unsafe_code)]

use parking_lot::Mutex;
use std::alloc::Layout;
use std::mem::size_of;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Alignment of every allocation (an entry's header and links).
pub(super) const ALIGN: usize = 8;
/// Bytes of the first chunk.
const FIRST_CHUNK: usize = 4 << 10;
/// Bytes of the largest chunk.
const MAX_CHUNK: usize = 256 << 10;

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
}

// SAFETY: the arena's own state is atomics and a mutex; the memory it hands
// out belongs to whoever asked for it.
unsafe impl Send for Arena {}
// SAFETY: as for `Send`.
unsafe impl Sync for Arena {}

impl Arena {
    pub(super) fn new() -> Arena {
        Arena {
            current: AtomicPtr::new(ptr::null_mut()),
            blocks: Mutex::new(Vec::new()),
        }
    }

    /// `size` bytes aligned to [`ALIGN`], not handed out before, valid
    /// until the arena is dropped. Safe to call from several threads.
    pub(super) fn alloc(&self, size: usize) -> NonNull<u8> {
        let size = size.max(1).next_multiple_of(ALIGN);
        loop {
            let seen = self.current.load(Ordering::Acquire);
            if let Some(chunk) = NonNull::new(seen) {
                // SAFETY: a chunk lives until the arena drops; its head was
                // written before the `Release` store that made it current.
                let head = unsafe { chunk.as_ref() };
                let at = head.used.fetch_add(size, Ordering::Relaxed);
                if at.checked_add(size).is_some_and(|end| end <= head.cap) {
                    // SAFETY: `at + size <= cap`: inside the chunk's usable
                    // bytes, which follow its head.
                    return unsafe { chunk.cast::<u8>().add(CHUNK_HEAD + at) };
                }
            }
            if let Some(own) = self.grow(seen, size) {
                return own;
            }
        }
    }

    /// Called when `seen` (the current chunk, or null) had no room for
    /// `size` bytes: makes the next chunk current, unless another writer
    /// did meanwhile; or, for an allocation too large for chunks, returns
    /// one of its own.
    fn grow(&self, seen: *mut Chunk, size: usize) -> Option<NonNull<u8>> {
        let mut blocks = self.blocks.lock();
        if self.current.load(Ordering::Acquire) != seen {
            return None;
        }
        // SAFETY: as in `alloc`.
        let last = NonNull::new(seen).map_or(0, |c| unsafe { c.as_ref() }.cap);
        let next = last.saturating_mul(2).clamp(FIRST_CHUNK, MAX_CHUNK);
        if size > next / 4 {
            let own = allocate(size);
            blocks.push(own);
            return Some(own.0);
        }
        let (raw, layout) = allocate(CHUNK_HEAD + next);
        blocks.push((raw, layout));
        let chunk = raw.cast::<Chunk>();
        // SAFETY: `raw` holds `CHUNK_HEAD + next` bytes aligned to ALIGN
        // (enough for `Chunk`), and no one else has it yet.
        unsafe {
            chunk.as_ptr().write(Chunk {
                used: AtomicUsize::new(0),
                cap: next,
            });
        }
        self.current.store(chunk.as_ptr(), Ordering::Release);
        None
    }
}

/// A new block of `size` bytes aligned to [`ALIGN`].
fn allocate(size: usize) -> (NonNull<u8>, Layout) {
    let Ok(layout) = Layout::from_size_align(size, ALIGN) else {
        panic!("memtable allocation of {size} bytes");
    };
    // SAFETY: the layout's size is never zero (at least a chunk's head or
    // one aligned entry).
    let raw = unsafe { std::alloc::alloc(layout) };
    match NonNull::new(raw) {
        Some(p) => (p, layout),
        None => std::alloc::handle_alloc_error(layout),
    }
}

// A chunk's head sits at the start of a block aligned to ALIGN.
const _: () = assert!(std::mem::align_of::<Chunk>() <= ALIGN);

impl Drop for Arena {
    fn drop(&mut self) {
        for (p, layout) in self.blocks.get_mut().drain(..) {
            // SAFETY: `&mut self`: nothing handed out is used any more; each
            // block is freed once, with the layout it was made with.
            unsafe { std::alloc::dealloc(p.as_ptr(), layout) };
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
        let p = arena.alloc(n);
        assert_eq!(p.as_ptr() as usize % ALIGN, 0, "aligned");
        // SAFETY: `n` bytes were just handed out to this caller alone.
        unsafe { ptr::write_bytes(p.as_ptr(), fill, n) };
        (p.as_ptr() as usize, n, fill)
    }

    fn intact(claims: &[(usize, usize, u8)]) {
        let mut sorted = claims.to_vec();
        sorted.sort_unstable();
        for w in sorted.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "ranges overlap: {:?} {:?}", w[0], w[1]);
        }
        for &(at, n, fill) in claims {
            // SAFETY: the arena is alive and the range was claimed above.
            let bytes = unsafe { std::slice::from_raw_parts(at as *const u8, n) };
            assert!(bytes.iter().all(|&b| b == fill), "a range was overwritten");
        }
    }

    #[test]
    fn allocations_are_aligned_apart_and_kept_across_chunks() {
        let arena = Arena::new();
        let claims: Vec<_> = (0..5_000usize)
            .map(|i| claim(&arena, 1 + (i * 37) % 300, i as u8))
            .collect();
        // Past a quarter of the largest chunk: an allocation of its own.
        let big = claim(&arena, MAX_CHUNK, 0xAB);
        let mut all = claims;
        all.push(big);
        all.push(claim(&arena, 24, 0xCD));
        intact(&all);
        assert!(arena.blocks.lock().len() > 3, "several chunks were made");
    }

    #[test]
    fn concurrent_writers_never_share_bytes() {
        let arena = Arc::new(Arena::new());
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
}
