//! Huge chunks for the memtables' arenas: made resident ahead of the
//! writers, and kept from one memtable for the next.
//!
//! The first write to a huge page makes the kernel find 2 MiB of memory
//! and zero it, in the writer's page fault: a tenth of a sequential fill's
//! time from Python, and on a virtual machine whose host takes back the
//! memory a guest frees, a quarter or more. So the chunks an arena lets go
//! of when its memtable is dropped are kept here, and the next memtable's
//! arenas take them (an arena writes every byte it hands out before
//! anything reads it: a kept chunk needs no zeroing); and a helper thread
//! keeps [`READY`] chunks resident besides, allocating each, advising it
//! `MADV_HUGEPAGE` and writing a byte of every page, so that a writer that
//! finds none kept still faults in nothing.
//!
//! One pool serves the process. Each open database whose memtables take
//! huge chunks [`register`]s its memtable size; the pool keeps at most two
//! memtables' worth of each ([`limit`]), and each database is charged its
//! share of what is kept, with its memtables ([`Registration::charge`]):
//! the memory budget still counts every byte. Once no chunk was taken for
//! [`IDLE`] (the writes stopped, or the database closed and no other was
//! opened in the process), the helper frees all but [`READY`] (all, with
//! no database open).
//!
//! A forked child does not use the pool (its helper thread is not there,
//! and its lock may have been held at the fork): its arenas allocate and
//! free their chunks themselves.
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
use std::time::{Duration, Instant};

/// Bytes of a huge chunk, and its alignment: one huge page.
pub(super) const HUGE: usize = 2 << 20;
/// Chunks the helper keeps resident while a registered database is open.
const READY: usize = 2;
/// Chunks kept past [`READY`] are freed once none was taken for this long:
/// the writes stopped, or the database that kept them closed and no other
/// came.
const IDLE: Duration = Duration::from_secs(5);
/// Bytes between the writes that make every small page resident where the
/// kernel gives no huge page.
const PAGE: usize = 4 << 10;

/// A chunk of [`HUGE`] bytes aligned to [`HUGE`], owned by whoever holds it.
struct Chunk(NonNull<u8>);

// SAFETY: a chunk is plain memory owned by one holder at a time.
unsafe impl Send for Chunk {}

impl Chunk {
    /// Frees the chunk. REQUIRES: made with [`layout`] (every chunk is).
    fn free(self) {
        // SAFETY: the holder owns the chunk, made with this layout.
        unsafe { std::alloc::dealloc(self.0.as_ptr(), layout()) };
    }
}

struct Pool {
    state: Mutex<State>,
    /// Wakes the helper: a chunk was taken, or a database closed.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// Chunks waiting for an arena, kept or made ready.
    chunks: Vec<Chunk>,
    /// Bytes the open databases registered (see [`limit`]).
    registered: usize,
    /// When an arena last took a chunk.
    last_take: Option<Instant>,
}

static POOL: OnceLock<Pool> = OnceLock::new();
/// The generation [`POOL`] was made in, readable without its lock
/// (`u64::MAX` before, or when its helper could not start).
static OWNER: AtomicU64 = AtomicU64::new(u64::MAX);
/// Bytes of the chunks waiting, and bytes registered: what the charges
/// read without the lock (written under it).
static KEPT: AtomicU64 = AtomicU64::new(0);
static REGISTERED: AtomicU64 = AtomicU64::new(0);
/// Bytes of the huge chunks arenas hold.
static IN_USE: AtomicU64 = AtomicU64::new(0);

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
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    });
    if started {
        let spawned = std::thread::Builder::new()
            .name("lamina-spare".into())
            .spawn(move || helper(pool));
        if spawned.is_err() {
            // No helper: the pool is not used, and arenas allocate.
            OWNER.store(u64::MAX, Ordering::Release);
        }
    }
    (OWNER.load(Ordering::Acquire) == generation).then_some(pool)
}

/// An open database's claim on the pool: while it lives, the pool may keep
/// chunks arenas let go of for its memtables of `bytes` (see [`limit`]),
/// and charges it its share of them.
pub struct Registration {
    bytes: usize,
    /// Registered in the pool and not released (never in a forked child,
    /// nor without a helper).
    counted: std::sync::atomic::AtomicBool,
}

/// Registers a database whose memtables take huge chunks and are of
/// `bytes` bytes.
pub fn register(bytes: usize) -> Registration {
    let counted = match pool() {
        Some(pool) => {
            let mut s = pool.state.lock();
            s.registered += bytes;
            publish(&s);
            drop(s);
            pool.changed.notify_one();
            true
        }
        None => false,
    };
    Registration {
        bytes,
        counted: counted.into(),
    }
}

impl Registration {
    /// Bytes of the chunks kept that this database is charged: its share
    /// of them by the sizes registered, at most what is kept for it alone.
    pub fn charge(&self) -> u64 {
        if !self.counted.load(Ordering::Relaxed) {
            return 0;
        }
        share(
            KEPT.load(Ordering::Relaxed),
            REGISTERED.load(Ordering::Relaxed),
            self.bytes,
        )
    }

    /// Gives up the claim (the database's handle is gone, after its
    /// memtables: the chunks they let go of were kept); what it kept waits
    /// [`IDLE`] for the next database. Idempotent.
    fn release(&self) {
        if !self.counted.swap(false, Ordering::AcqRel) {
            return;
        }
        if let Some(pool) = pool() {
            let mut s = pool.state.lock();
            s.registered = s.registered.saturating_sub(self.bytes);
            publish(&s);
            drop(s);
            pool.changed.notify_one();
        }
    }
}

/// The charge of a database that registered `bytes` of the `registered`,
/// when `kept` bytes of chunks wait: its share, at most what [`limit`]
/// keeps for it alone.
fn share(kept: u64, registered: u64, bytes: usize) -> u64 {
    let share = u128::from(kept) * bytes as u128 / u128::from(registered.max(1));
    u64::try_from(share.min(limit(bytes) as u128)).unwrap_or(u64::MAX)
}

/// The most bytes of huge chunks arenas may hold and the pool keep
/// together while `registered` bytes are: what the memory budget lets each
/// open database's memtables hold (the active one and two waiting for
/// flush: `budget`'s memtable share), and at least [`READY`] chunks while
/// any is open. A chunk handed back past it is freed.
fn limit(registered: usize) -> usize {
    if registered > 0 {
        registered.saturating_mul(3).max(READY * HUGE)
    } else {
        0
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.release();
    }
}

/// Makes the state's sizes readable without the lock.
fn publish(s: &State) {
    KEPT.store((s.chunks.len() * HUGE) as u64, Ordering::Relaxed);
    REGISTERED.store(s.registered as u64, Ordering::Relaxed);
}

/// A huge chunk for an arena, of [`layout`]: one kept or made ready if one
/// is waiting, else a new one (whose pages the writer's copies fault in).
/// The arena owns it until it hands it to [`give_back`].
pub(super) fn take() -> NonNull<u8> {
    IN_USE.fetch_add(HUGE as u64, Ordering::Relaxed);
    match waiting() {
        Some(p) => p,
        None => allocate(),
    }
}

/// A chunk from the pool, if one is waiting (never blocks).
fn waiting() -> Option<NonNull<u8>> {
    let pool = pool()?;
    let mut s = pool.state.try_lock()?;
    let chunk = s.chunks.pop()?;
    s.last_take = Some(Instant::now());
    publish(&s);
    let low = s.chunks.len() < READY;
    drop(s);
    if low {
        pool.changed.notify_one();
    }
    Some(chunk.0)
}

/// A new huge chunk, advised `MADV_HUGEPAGE`.
fn allocate() -> NonNull<u8> {
    new_chunk().unwrap_or_else(|| std::alloc::handle_alloc_error(layout()))
}

/// A new huge chunk, advised `MADV_HUGEPAGE`; `None` if the allocator has
/// no memory.
fn new_chunk() -> Option<NonNull<u8>> {
    // SAFETY: the layout's size is not zero.
    let p = NonNull::new(unsafe { std::alloc::alloc(layout()) })?;
    #[cfg(target_os = "linux")]
    // SAFETY: advice on memory this function owns; a failure changes nothing.
    unsafe {
        libc::madvise(p.as_ptr().cast(), HUGE, libc::MADV_HUGEPAGE)
    };
    Some(p)
}

/// Hands back a huge chunk of [`take`] that an arena no longer uses: kept
/// for the next memtable while the huge chunks arenas hold and the pool
/// keeps stay within [`limit`], freed otherwise.
///
/// # Safety
/// `p` is a chunk of [`take`] owned by the caller, and nothing uses it
/// after this call.
pub(super) unsafe fn give_back(p: NonNull<u8>) {
    let chunk = Chunk(p);
    let in_use = (IN_USE.fetch_sub(HUGE as u64, Ordering::Relaxed) as usize).saturating_sub(HUGE);
    if let Some(pool) = pool() {
        if let Some(mut s) = pool.state.try_lock() {
            if in_use + (s.chunks.len() + 1) * HUGE <= limit(s.registered) {
                s.chunks.push(chunk);
                publish(&s);
                return;
            }
        }
    }
    chunk.free();
}

/// The helper's loop: keeps [`READY`] chunks resident while a database is
/// registered, and frees the chunks kept past those once none was taken
/// for [`IDLE`].
fn helper(pool: &'static Pool) {
    let mut s = pool.state.lock();
    loop {
        let floor = if s.registered > 0 { READY } else { 0 };
        if s.chunks.len() > floor {
            let since = s.last_take.map_or(IDLE, |t| t.elapsed());
            if since >= IDLE {
                let excess: Vec<Chunk> = s.chunks.drain(floor..).collect();
                publish(&s);
                drop(s);
                excess.into_iter().for_each(Chunk::free);
                s = pool.state.lock();
                continue;
            }
            // Enough are ready: wait for a take, or until they are idle.
            pool.changed.wait_for(&mut s, IDLE - since);
            continue;
        }
        if s.registered == 0 || s.chunks.len() >= READY {
            pool.changed.wait(&mut s);
            continue;
        }
        drop(s);
        let made = make();
        s = pool.state.lock();
        match made {
            Some(chunk) => {
                s.chunks.push(chunk);
                publish(&s);
            }
            // The allocator has no memory: wait for a change before trying again.
            None => pool.changed.wait(&mut s),
        }
    }
}

/// A new huge chunk, resident: advised `MADV_HUGEPAGE` and a byte of each
/// page written. `None` if the allocator has no memory.
fn make() -> Option<Chunk> {
    let p = new_chunk()?;
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
    use std::time::Instant;

    #[test]
    fn a_registered_database_gets_resident_aligned_chunks() {
        let _r = register(64 << 20);
        let deadline = Instant::now() + Duration::from_secs(10);
        while KEPT.load(Ordering::Relaxed) == 0 {
            assert!(Instant::now() < deadline, "no chunk was made ready");
            std::thread::sleep(Duration::from_millis(1));
        }
        let p = take();
        assert_eq!(p.as_ptr() as usize % HUGE, 0, "aligned to a huge page");
        // SAFETY: the chunk is ours, HUGE bytes long.
        unsafe {
            std::ptr::write_bytes(p.as_ptr(), 0x5A, HUGE);
            assert_eq!(*p.as_ptr().add(HUGE - 1), 0x5A);
        }
        // SAFETY: ours, of `take`, not used after.
        unsafe { give_back(p) };
    }

    #[test]
    fn what_is_kept_is_bounded_by_the_open_databases_and_charged_to_them() {
        const M: usize = 1 << 20;
        // Nothing is kept with no database open; at least READY chunks
        // with one; else what they registered.
        assert_eq!(limit(0), 0);
        assert_eq!(limit(M), READY * HUGE);
        assert_eq!(limit(64 * M), 192 * M);
        // Charges: shares by registered size, never past one's own size,
        // adding up to what is kept.
        let (a, b) = (64 * M, 32 * M);
        let registered = (a + b) as u64;
        for kept in [0, 6 * M as u64, 48 * M as u64, 288 * M as u64] {
            let (ca, cb) = (share(kept, registered, a), share(kept, registered, b));
            assert!(ca <= 3 * a as u64 && cb <= 3 * b as u64);
            assert!(
                (kept.saturating_sub(1)..=kept).contains(&(ca + cb)),
                "{ca} + {cb} of {kept}"
            );
        }
        // A closed database's share, kept until idle, is charged to the
        // others no further than their own size.
        assert_eq!(share(288 * M as u64, b as u64, b), 3 * b as u64);
    }
}
