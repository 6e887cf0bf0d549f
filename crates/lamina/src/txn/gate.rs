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
