//! Which process a handle belongs to.
//!
//! A forked child inherits its parent's open handles, but not their
//! background threads, and shares their files: a write from the child would
//! interleave with the parent's in the same WAL segment and destroy both.
//! Every handle remembers the *process generation* it was opened in; a
//! `pthread_atfork` child handler, registered once, bumps the generation in
//! every forked child, so a handle compares one atomic load to know it is in
//! another process — point operations pay no system call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// Bumped in the child after every `fork()`.
static GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();

/// Runs in a forked child before `fork()` returns there. It only does an
/// atomic add, which is async-signal-safe.
#[cfg(unix)]
extern "C" fn forked_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The generation of the calling process, registering the fork handler on
/// first use. Call it when a handle is opened and keep the result.
pub(crate) fn generation() -> u64 {
    REGISTER.call_once(|| {
        #[cfg(unix)]
        // SAFETY: `forked_child` is an `extern "C"` function that only
        // touches a static atomic; the prepare and parent handlers are none.
        unsafe {
            libc::pthread_atfork(None, None, Some(forked_child));
        }
    });
    GENERATION.load(Ordering::Acquire)
}

/// True if the calling process is the one that was at `opened` (the value
/// [`generation`] returned when the handle was opened): one atomic load.
#[inline]
pub(crate) fn is_current(opened: u64) -> bool {
    GENERATION.load(Ordering::Relaxed) == opened
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_forked_child_is_another_generation() {
        let g = generation();
        assert!(is_current(g));
        // SAFETY: the child only reads an atomic and calls `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = if is_current(g) { 1 } else { 0 };
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status));
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "the child saw the parent's generation"
        );
        assert!(is_current(g), "the parent keeps its generation");
    }
}
