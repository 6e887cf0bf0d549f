//! The transaction gate: ordinary transactions' commits pass it together,
//! an exclusive attempt of `transact` passes it alone, from its snapshot to
//! its commit.
//!
//! A gate of counts, not a lock with guards: an exclusive transaction holds
//! it across calls (in Python, across releases of the interpreter lock, on
//! whichever thread), and lets go when it commits or is dropped.

use parking_lot::{Condvar, Mutex};

#[derive(Default)]
struct State {
    /// Commits of ordinary transactions passing now.
    shared: usize,
    /// An exclusive transaction holds the gate.
    exclusive: bool,
    /// Exclusive transactions waiting: new shared entries wait behind them,
    /// so that a stream of commits cannot keep one out.
    waiting: usize,
}

/// See the module doc.
#[derive(Default)]
pub(crate) struct Gate {
    state: Mutex<State>,
    changed: Condvar,
}

impl Gate {
    /// Enters for an ordinary transaction's commit; waits while an
    /// exclusive transaction holds the gate or waits for it.
    pub fn enter_shared(&self) {
        let mut s = self.state.lock();
        while s.exclusive || s.waiting > 0 {
            self.changed.wait(&mut s);
        }
        s.shared += 1;
    }

    /// Leaves after [`Gate::enter_shared`].
    pub fn leave_shared(&self) {
        let mut s = self.state.lock();
        s.shared -= 1;
        if s.shared == 0 {
            self.changed.notify_all();
        }
    }

    /// Enters alone: waits until no commit passes and no other exclusive
    /// transaction holds the gate.
    pub fn enter_exclusive(&self) {
        let mut s = self.state.lock();
        s.waiting += 1;
        while s.exclusive || s.shared > 0 {
            self.changed.wait(&mut s);
        }
        s.waiting -= 1;
        s.exclusive = true;
    }

    /// Leaves after [`Gate::enter_exclusive`].
    pub fn leave_exclusive(&self) {
        self.state.lock().exclusive = false;
        self.changed.notify_all();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::Gate;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn an_exclusive_holder_keeps_commits_out_until_it_leaves() {
        let gate = Gate::default();
        let passed = AtomicBool::new(false);
        gate.enter_exclusive();
        std::thread::scope(|s| {
            s.spawn(|| {
                gate.enter_shared();
                passed.store(true, Ordering::SeqCst);
                gate.leave_shared();
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(
                !passed.load(Ordering::SeqCst),
                "a commit passed an exclusive holder"
            );
            gate.leave_exclusive();
        });
        assert!(passed.load(Ordering::SeqCst));
    }

    #[test]
    fn an_exclusive_entry_waits_for_commits_passing() {
        let gate = Gate::default();
        let entered = AtomicBool::new(false);
        gate.enter_shared();
        std::thread::scope(|s| {
            s.spawn(|| {
                gate.enter_exclusive();
                entered.store(true, Ordering::SeqCst);
                gate.leave_exclusive();
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(!entered.load(Ordering::SeqCst), "entered beside a commit");
            gate.leave_shared();
        });
        assert!(entered.load(Ordering::SeqCst));
    }
}
