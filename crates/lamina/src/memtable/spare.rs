//! Huge chunks for the memtables' arenas, made ready ahead of the writers.
//!
//! The first write to a huge page makes the kernel find 2 MiB of memory
//! and zero it, in the writer's page fault: a tenth of a sequential fill's
//! time from Python, and on a virtual machine whose memory the host has not
//! backed yet, a quarter or more. A helper thread does that work instead:
//! it allocates each chunk, advises it `MADV_HUGEPAGE` and writes a byte of
//! every page, and keeps up to [`READY`] chunks waiting; an arena that needs
//! a huge chunk takes one. A chunk that a dropped arena lets go of comes
//! back while fewer than [`READY`] are waiting: it needs no zeroing, since
//! an arena writes every byte it hands out before anything reads it.
//!
//! One pool serves the process: at most [`READY`] chunks (4 MiB) are held
//! outside every memtable, and no database's memory budget is charged for
//! them. A forked child does not use the pool (its helper thread is not
//! there, and its lock may have been held at the fork): its arenas make
//! their chunks themselves.
//!
//! This module allows `unsafe` (docs/design.md#unsafe-code): it allocates,
//! writes and frees raw memory. A chunk is owned by one party at a time:
//! the pool, or the arena that took it.
#![allow(unsafe_code)]

use parking_lot::{Condvar, Mutex};
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Bytes of a huge chunk, and its alignment: one huge page.
pub(super) const HUGE: usize = 2 << 20;
/// Chunks kept waiting.
const READY: usize = 2;
/// Bytes between the writes that make every small page resident where the
/// kernel gives no huge page.
const PAGE: usize = 4 << 10;

/// A chunk of [`HUGE`] bytes aligned to [`HUGE`], owned by whoever holds it.
struct Chunk(NonNull<u8>);

// SAFETY: a chunk is plain memory owned by one holder at a time.
unsafe impl Send for Chunk {}

struct Pool {
    ready: Mutex<Vec<Chunk>>,
    /// Wakes the helper when a chunk was taken.
    taken: Condvar,
    /// The process generation the pool and its helper belong to.
    generation: u64,
}

static POOL: OnceLock<Pool> = OnceLock::new();
/// The generation [`POOL`] was made in, readable without its lock
/// (`u64::MAX` before, or when its helper could not start).
static OWNER: AtomicU64 = AtomicU64::new(u64::MAX);

/// The layout of every huge chunk.
pub(super) fn layout() -> Layout {
    match Layout::from_size_align(HUGE, HUGE) {
        Ok(l) => l,
        Err(_) => unreachable!("a power of two is a valid alignment"),
    }
}

/// The pool of this process, made (and its helper started) on first use;
/// `None` in a forked child, or if no thread could be started.
fn pool() -> Option<&'static Pool> {
    let generation = crate::process::generation();
    if let Some(p) = POOL.get() {
        return (OWNER.load(Ordering::Acquire) == generation).then_some(p);
    }
    let mut started = false;
    let pool = POOL.get_or_init(|| {
        started = true;
        OWNER.store(generation, Ordering::Release);
        Pool {
            ready: Mutex::new(Vec::with_capacity(READY + 1)),
            taken: Condvar::new(),
            generation,
        }
    });
    if started {
        let spawned = std::thread::Builder::new()
            .name("lamina-spare".into())
            .spawn(move || helper(pool));
        if spawned.is_err() {
            // No helper: nothing is ever made ready, and arenas allocate.
            OWNER.store(u64::MAX, Ordering::Release);
            return None;
        }
    }
    (pool.generation == generation && OWNER.load(Ordering::Acquire) == generation).then_some(pool)
}

/// Starts the helper, if it is not running, so that chunks are ready by
/// the time a memtable's arena needs its first huge one.
pub(super) fn warm() {
    let _ = pool();
}

/// A huge chunk ready to be written, if one is waiting (never blocks).
/// The caller owns it, and gives it to [`give_back`] or frees it with
/// [`layout`].
pub(super) fn take() -> Option<NonNull<u8>> {
    let pool = pool()?;
    let chunk = pool.ready.try_lock()?.pop();
    if chunk.is_some() {
        pool.taken.notify_one();
    }
    chunk.map(|c| c.0)
}

/// Hands back a huge chunk an arena no longer uses (made with [`layout`]);
/// frees it if enough are waiting.
///
/// # Safety
/// `p` is a chunk of [`layout`] owned by the caller, and nothing uses it
/// after this call.
pub(super) unsafe fn give_back(p: NonNull<u8>) {
    if let Some(pool) = pool() {
        if let Some(mut ready) = pool.ready.try_lock() {
            if ready.len() < READY {
                ready.push(Chunk(p));
                return;
            }
        }
    }
    // SAFETY: the caller owns the chunk, made with this layout.
    unsafe { std::alloc::dealloc(p.as_ptr(), layout()) };
}

/// The helper's loop: keeps [`READY`] chunks waiting.
fn helper(pool: &'static Pool) {
    loop {
        {
            let mut ready = pool.ready.lock();
            while ready.len() >= READY {
                pool.taken.wait(&mut ready);
            }
        }
        let Some(chunk) = make() else {
            return;
        };
        let mut ready = pool.ready.lock();
        if ready.len() < READY {
            ready.push(chunk);
        } else {
            drop(ready);
            // SAFETY: made with this layout just now, used by nobody.
            unsafe { std::alloc::dealloc(chunk.0.as_ptr(), layout()) };
        }
    }
}

/// A new huge chunk, resident: advised `MADV_HUGEPAGE` and a byte of each
/// page written. `None` if the allocator has no memory.
fn make() -> Option<Chunk> {
    // SAFETY: the layout's size is not zero.
    let p = NonNull::new(unsafe { std::alloc::alloc(layout()) })?;
    #[cfg(target_os = "linux")]
    // SAFETY: advice on memory this function owns; a failure changes nothing.
    unsafe {
        libc::madvise(p.as_ptr().cast(), HUGE, libc::MADV_HUGEPAGE)
    };
    for at in (0..HUGE).step_by(PAGE) {
        // SAFETY: `at < HUGE`, inside the chunk just allocated.
        unsafe { p.as_ptr().add(at).write_volatile(0) };
    }
    Some(Chunk(p))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn the_helper_makes_aligned_chunks_ready_and_keeps_what_comes_back() {
        warm();
        let deadline = Instant::now() + Duration::from_secs(10);
        let p = loop {
            if let Some(p) = take() {
                break p;
            }
            assert!(Instant::now() < deadline, "no chunk was made ready");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(p.as_ptr() as usize % HUGE, 0, "aligned to a huge page");
        // Writable end to end.
        // SAFETY: the chunk is ours, HUGE bytes long.
        unsafe {
            std::ptr::write_bytes(p.as_ptr(), 0x5A, HUGE);
            assert_eq!(*p.as_ptr().add(HUGE - 1), 0x5A);
        }
        // SAFETY: ours, made with `layout`, not used after.
        unsafe { give_back(p) };
        let ready = POOL.get().unwrap().ready.lock().len();
        assert!((1..=READY).contains(&ready), "{ready} chunks waiting");
    }
}
