//! How a writer waits for the sync that makes its record durable: asleep on
//! the pipeline's futex word from the start, or first yielding the CPU in a
//! loop for about as long as two syncs take, and asleep after that.
//!
//! A writer that yields needs no wake-up: it sees the epoch move on its next
//! turn. On a 2-vCPU host, forced either way, sixteen threads of `Sync`
//! commits ran about a quarter faster yielding (waking fifteen writers and
//! switching each of them in, and the idle CPUs' own wake-ups, came off
//! every sync's cycle; `lamina-bench commit --threads 16`), and the process
//! used several times the CPU time.
//! Whether it pays depends on the writers, the CPUs and the device, so it
//! is measured, not assumed.
//!
//! Policy only ([`CommitWait`]): the pipeline reports each sync's end and
//! the records it covered, and asks how its waiters wait. Syncs are counted
//! in windows of [`WINDOW_SYNCS`]; a round of [`ROUND`] windows starts with
//! one window asleep and one yielding, back to back so that the device's
//! drift touches both alike, and waiters yield for the rest of the round
//! only if yielding committed at least [`YIELD_GAIN`] times as many records
//! a second (each gap between syncs counted up to [`STALL`]), as a moving
//! average over the rounds of that ratio: two windows of 256 syncs on a
//! 2-vCPU virtual machine differ by up to 15 % whatever they do (`lamina
//! bench commit --threads 2`), and a gain under 15 % is not worth the CPU
//! time. The average starts again when the records a sync
//! covers change [`NEW_LOAD`]-fold between rounds (one writer, then sixteen):
//! rounds of another load say nothing of this one. When yielding does not pay, one window in [`ROUND`]
//! still yields, to notice when it starts to. Syncs slower than
//! [`YIELD_WHILE_SYNCS_UNDER`] (a disk, not a fast SSD) are waited for
//! asleep: yielding through them would burn a CPU for most of each wait.
//! So are all syncs of a process that may not use every CPU the machine
//! has (`cpus::all_online_usable`): under a CPU quota, the time spent
//! yielding would be taken from the quota, and the kernel would stop the
//! whole process for the rest of its period, which a window's rate, its
//! gaps counted up to [`STALL`], would not show.

use std::time::{Duration, Instant};

/// Syncs counted in one window.
pub(crate) const WINDOW_SYNCS: u32 = 256;

/// Windows in a round: the two measured, then the choice they made.
pub(crate) const ROUND: u32 = 16;

/// How much faster the yielding window must commit for waiters to yield.
pub(crate) const YIELD_GAIN: f64 = 1.15;

/// Waiters sleep at once while a sync takes longer than this on average.
pub(crate) const YIELD_WHILE_SYNCS_UNDER: Duration = Duration::from_micros(250);

/// A round whose records a sync covers differ from the last round's by this
/// factor, either way, starts the moving average again.
const NEW_LOAD: f64 = 2.0;

/// The most one gap between syncs counts for in a window: a device that
/// stalls for milliseconds now and then (virtual disks do) would
/// otherwise decide the comparison of two windows by itself.
const STALL: Duration = Duration::from_millis(1);

/// How waiters wait now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Asleep on the futex word until woken.
    Sleep,
    /// Yielding the CPU in a loop first, for up to [`CommitWait::yield_for`].
    Yield,
}

/// The measurements and the current choice (see the module doc).
#[derive(Debug)]
pub(crate) struct CommitWait {
    /// False: waiters always sleep (see the module doc).
    may_yield: bool,
    /// The current window's number in its round (0: asleep, 1: yielding,
    /// then as `log_gain` says).
    window: u32,
    /// When the last sync ended.
    last: Option<Instant>,
    /// The current window's time: from one sync's end to the next, each
    /// gap counted up to [`STALL`].
    elapsed: Duration,
    /// Syncs that ended in the current window.
    syncs: u32,
    /// Records they covered.
    commits: u64,
    /// Records a second of this round's window asleep.
    asleep_rate: f64,
    /// The moving average of the logarithm of the ratio of the yielding
    /// window's rate to the sleeping one's, over the rounds so far
    /// (`None` before the first): waiters yield for the rest of a round if
    /// it is at least the logarithm of [`YIELD_GAIN`].
    log_gain: Option<f64>,
    /// Records a sync covered in the last round's window yielding (0
    /// before the first).
    load: f64,
}

impl Default for CommitWait {
    /// Yielding allowed only if the process may use every CPU online.
    fn default() -> CommitWait {
        CommitWait::new(crate::cpus::all_online_usable())
    }
}

impl CommitWait {
    /// A policy that measures and may choose to yield if `may_yield`, and
    /// that always sleeps otherwise.
    pub(crate) fn new(may_yield: bool) -> CommitWait {
        CommitWait {
            may_yield,
            window: 0,
            last: None,
            elapsed: Duration::ZERO,
            syncs: 0,
            commits: 0,
            asleep_rate: 0.0,
            log_gain: None,
            load: 0.0,
        }
    }

    #[cfg(test)]
    /// A choice to yield for a whole round (tests of the mechanism).
    pub(crate) fn yielding() -> CommitWait {
        CommitWait {
            window: 2,
            log_gain: Some(1.0),
            ..CommitWait::new(true)
        }
    }

    /// How a waiter waits now, syncs taking `sync_nanos` on average.
    pub(crate) fn wait(&self, sync_nanos: u64) -> Wait {
        if !self.may_yield
            || sync_nanos == 0
            || sync_nanos > YIELD_WHILE_SYNCS_UNDER.as_nanos() as u64
        {
            return Wait::Sleep;
        }
        match self.window {
            0 => Wait::Sleep,
            1 => Wait::Yield,
            _ if self.log_gain.is_some_and(|g| g >= YIELD_GAIN.ln()) => Wait::Yield,
            _ => Wait::Sleep,
        }
    }

    /// How long a waiter yields before it sleeps: twice the average sync
    /// (a sync under way and the next; at most 500 µs), when it yields.
    pub(crate) fn yield_for(&self, sync_nanos: u64) -> Duration {
        match self.wait(sync_nanos) {
            Wait::Sleep => Duration::ZERO,
            Wait::Yield => Duration::from_nanos(sync_nanos.saturating_mul(2)),
        }
    }

    /// A sync ended at `now`, covering `commits` records.
    pub(crate) fn synced(&mut self, commits: u64, now: Instant) {
        let Some(last) = self.last.replace(now) else {
            return;
        };
        self.elapsed += now.saturating_duration_since(last).min(STALL);
        self.syncs += 1;
        self.commits += commits;
        if self.syncs < WINDOW_SYNCS {
            return;
        }
        let seconds = self.elapsed.as_secs_f64();
        let rate = if seconds > 0.0 {
            self.commits as f64 / seconds
        } else {
            0.0
        };
        match self.window {
            0 => self.asleep_rate = rate,
            1 => {
                let gain = if rate > 0.0 && self.asleep_rate > 0.0 {
                    (rate / self.asleep_rate).ln()
                } else {
                    0.0
                };
                let load = self.commits as f64 / f64::from(self.syncs.max(1));
                if self.load > 0.0 && (load / self.load).max(self.load / load) >= NEW_LOAD {
                    self.log_gain = None;
                }
                self.load = load;
                self.log_gain = Some(self.log_gain.map_or(gain, |g| (g + gain) / 2.0));
            }
            _ => {}
        }
        self.window = (self.window + 1) % ROUND;
        self.elapsed = Duration::ZERO;
        self.syncs = 0;
        self.commits = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST_SYNC: u64 = 90_000;

    /// Runs one window of syncs, each `cycle` long and covering `commits`
    /// records, from `at`; returns where it ended.
    fn window(w: &mut CommitWait, at: Instant, cycle: Duration, commits: u64) -> Instant {
        let mut now = at;
        for _ in 0..WINDOW_SYNCS {
            now += cycle;
            w.synced(commits, now);
        }
        now
    }

    /// A policy that has seen its first sync end at the returned instant.
    fn started() -> (CommitWait, Instant) {
        let mut w = CommitWait::new(true);
        let at = Instant::now();
        w.synced(16, at);
        (w, at)
    }

    #[test]
    fn waiters_yield_for_the_round_when_the_yielding_window_commits_enough_faster() {
        let (mut w, at) = started();
        assert_eq!(
            w.wait(FAST_SYNC),
            Wait::Sleep,
            "the round's first window sleeps"
        );
        let at = window(&mut w, at, Duration::from_micros(190), 16);
        assert_eq!(w.wait(FAST_SYNC), Wait::Yield, "its second yields");
        let mut at = window(&mut w, at, Duration::from_micros(150), 16);
        for _ in 2..ROUND {
            assert_eq!(w.wait(FAST_SYNC), Wait::Yield);
            assert_eq!(w.yield_for(FAST_SYNC), Duration::from_nanos(2 * FAST_SYNC));
            at = window(&mut w, at, Duration::from_micros(150), 16);
        }
        assert_eq!(
            w.wait(FAST_SYNC),
            Wait::Sleep,
            "the next round measures again"
        );
    }

    #[test]
    fn waiters_sleep_for_the_round_when_yielding_gains_too_little() {
        let (mut w, at) = started();
        let at = window(&mut w, at, Duration::from_micros(190), 16);
        // 5 % more records a second: below the gain asked for.
        let at = window(&mut w, at, Duration::from_micros(181), 16);
        assert_eq!(w.wait(FAST_SYNC), Wait::Sleep);
        assert_eq!(w.yield_for(FAST_SYNC), Duration::ZERO);
        let at = window(&mut w, at, Duration::from_micros(100), 16);
        assert_eq!(
            w.wait(FAST_SYNC),
            Wait::Sleep,
            "only the probe windows count"
        );
        // More records a sync count as much as shorter cycles.
        let mut w = CommitWait::new(true);
        w.synced(8, at);
        let at = window(&mut w, at, Duration::from_micros(150), 8);
        window(&mut w, at, Duration::from_micros(150), 16);
        assert_eq!(w.wait(FAST_SYNC), Wait::Yield);
    }

    /// Runs a whole round from `at`, each sync covering 16 records: its
    /// window asleep with syncs every `asleep` µs, its window yielding with
    /// syncs every `yielding` µs, the rest every 150 µs; returns the choice
    /// made for the round, and its end.
    fn round(w: &mut CommitWait, at: Instant, asleep: u64, yielding: u64) -> (Wait, Instant) {
        round_of(w, at, 16, [asleep, yielding, 150])
    }

    /// [`round`] with syncs covering `records` each, and the windows' syncs
    /// every `micros[0]` (asleep), `[1]` (yielding) and `[2]` (the rest) µs.
    fn round_of(
        w: &mut CommitWait,
        at: Instant,
        records: u64,
        micros: [u64; 3],
    ) -> (Wait, Instant) {
        let at = window(w, at, Duration::from_micros(micros[0]), records);
        let mut at = window(w, at, Duration::from_micros(micros[1]), records);
        let choice = w.wait(FAST_SYNC);
        for _ in 2..ROUND {
            at = window(w, at, Duration::from_micros(micros[2]), records);
        }
        (choice, at)
    }

    #[test]
    fn one_round_does_not_overturn_the_rounds_before_it() {
        let (mut w, at) = started();
        // 1.3 times as fast; then 1.05, too little alone but enough after a
        // round of 1.3; then rounds of no gain bring the average down.
        assert_eq!(
            choices(
                &mut w,
                at,
                &[(195, 150), (157, 150), (150, 150), (150, 150)]
            ),
            [Wait::Yield, Wait::Yield, Wait::Sleep, Wait::Sleep]
        );
    }

    /// The choices made for rounds of syncs of 16 records, each round's
    /// windows asleep and yielding with syncs every `(asleep, yielding)` µs.
    fn choices(w: &mut CommitWait, mut at: Instant, rounds: &[(u64, u64)]) -> Vec<Wait> {
        rounds
            .iter()
            .map(|&(asleep, yielding)| {
                let (choice, end) = round(w, at, asleep, yielding);
                at = end;
                choice
            })
            .collect()
    }

    #[test]
    fn a_new_load_is_measured_afresh() {
        // Rounds of one record a sync: yielding gains nothing.
        let (mut w, mut at) = started();
        for _ in 0..3 {
            let (choice, end) = round_of(&mut w, at, 1, [90, 90, 90]);
            assert_eq!(choice, Wait::Sleep);
            at = end;
        }
        // Sixteen a sync, yielding 1.25 times as fast: chosen at once, as
        // the average of this round and the earlier ones would not be. The
        // same load again keeps the average: 1.1 times as fast, too little
        // alone, is enough after a round of 1.25.
        assert_eq!(
            choices(&mut w, at, &[(190, 152), (165, 150)]),
            [Wait::Yield, Wait::Yield]
        );
    }

    #[test]
    fn a_stall_counts_for_no_more_than_a_millisecond() {
        let (mut w, at) = started();
        let at = window(&mut w, at, Duration::from_micros(190), 16);
        // The window yielding: its first sync ends a stall of 20 ms (20 ms
        // would halve its rate), the rest come every 150 µs.
        let at = at + Duration::from_millis(20);
        w.synced(0, at);
        let mut now = at;
        for _ in 1..WINDOW_SYNCS {
            now += Duration::from_micros(150);
            w.synced(16, now);
        }
        assert_eq!(w.wait(FAST_SYNC), Wait::Yield, "the stall did not decide");
    }

    #[test]
    fn a_process_that_may_not_yield_always_sleeps() {
        // Rounds in which yielding commits twice as fast: chosen when the
        // process may yield, never when it may not.
        let at = Instant::now();
        let mut may = CommitWait::new(true);
        may.synced(16, at);
        assert_eq!(round(&mut may, at, 300, 150).0, Wait::Yield);
        let mut w = CommitWait::new(false);
        w.synced(16, at);
        assert_eq!(w.wait(FAST_SYNC), Wait::Sleep);
        let at = window(&mut w, at, Duration::from_micros(300), 16);
        assert_eq!(w.wait(FAST_SYNC), Wait::Sleep, "not even the probe window");
        let (choice, _) = round(&mut w, at, 300, 150);
        assert_eq!(choice, Wait::Sleep);
        assert_eq!(w.yield_for(FAST_SYNC), Duration::ZERO);
    }

    #[test]
    fn slow_or_unmeasured_syncs_are_waited_for_asleep() {
        let (mut w, at) = started();
        let at = window(&mut w, at, Duration::from_millis(2), 16);
        assert_eq!(w.wait(FAST_SYNC), Wait::Yield, "the probe window");
        assert_eq!(w.wait(0), Wait::Sleep);
        let slow = YIELD_WHILE_SYNCS_UNDER.as_nanos() as u64 + 1;
        assert_eq!(w.wait(slow), Wait::Sleep);
        assert_eq!(w.yield_for(slow), Duration::ZERO);
        window(&mut w, at, Duration::from_micros(100), 16);
        assert_eq!(w.wait(slow), Wait::Sleep);
        assert_eq!(w.yield_for(240_000), Duration::from_micros(480));
    }
}
