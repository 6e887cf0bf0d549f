//! The write pacing policy: how long a write waits, given how far flushes
//! and compactions are behind. A pure function of the debt and its limits;
//! tested as data. The commit path (`commit/write.rs`, `make_room`) does the
//! waiting.
//!
//! Each kind of debt has a soft and a hard limit. Below every soft limit a
//! write does not wait. Between them a write of `n` bytes waits
//! `n × NANOS_PER_BYTE × p / (1 − p)`, where `p` is how far the worst debt has
//! gone from its soft limit to its hard limit (0 to 1): zero at the soft
//! limit, rising continuously and without bound towards the hard limit, so
//! writers settle at the rate the background threads keep up with instead of
//! running into a wall. At a hard limit the writer stops until a flush or
//! compaction finishes: a last resort, counted by cause.

use super::picker::{level_target, PickerOptions};
use crate::manifest::{Version, NUM_LEVELS};
use std::time::Duration;

/// Delay per byte written at `p = 0.5` (4 ms per MiB: writers slowed to
/// about 250 MiB/s), in nanoseconds.
const NANOS_PER_BYTE: f64 = 4_000_000.0 / (1u64 << 20) as f64;
/// Longest single delay; a writer still over its limits after it is paced again.
pub const MAX_DELAY: Duration = Duration::from_secs(1);

/// Why writers are slowed or stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Too many level-0 tables.
    Level0,
    /// Too many bytes above the level targets.
    PendingBytes,
    /// Too many memtables waiting for flush.
    Memtables,
}

/// How far the background work is behind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Debt {
    /// Tables in level 0.
    pub l0_tables: usize,
    /// Bytes compaction has to move down before every level is within its
    /// target (see [`pending_bytes`]).
    pub pending_bytes: u64,
    /// Memtables waiting for flush, plus the share of the active memtable
    /// already filled (so the debt grows continuously as writes arrive).
    pub memtables: f64,
}

/// Soft and hard limit of each kind of debt. REQUIRES: soft ≤ hard.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Level-0 tables: `l0_slowdown_trigger`, `l0_stop_trigger`.
    pub l0: (usize, usize),
    /// Pending compaction bytes.
    pub pending_bytes: (u64, u64),
    /// Memtables waiting (see [`Debt::memtables`]).
    pub memtables: (f64, f64),
}

impl Limits {
    /// The limits of a database: level 0 from its triggers; pending bytes
    /// from 4 and 16 times the level-1 target; memtables from the number
    /// that may wait for flush (`max_waiting`): slowed once the second to
    /// last is waiting and the active one is half full, stopped only when
    /// all of them wait and the active one is full.
    pub fn new(
        l0_slowdown: usize,
        l0_stop: usize,
        level_base_size: u64,
        max_waiting: usize,
    ) -> Self {
        let m = max_waiting.max(1) as f64;
        Limits {
            l0: (l0_slowdown, l0_stop.max(l0_slowdown)),
            pending_bytes: (
                level_base_size.saturating_mul(4),
                level_base_size.saturating_mul(16),
            ),
            memtables: (m - 0.5, m + 1.0),
        }
    }
}

/// What a write does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Goes ahead at once.
    Go,
    /// Goes ahead after waiting this long, because of this debt.
    Delay(Duration, Cause),
    /// Waits for a flush or compaction to finish, because of this debt.
    Stop(Cause),
}

/// How far `x` has gone from `soft` to `hard`: 0 at or below `soft`, 1 at or
/// above `hard`.
fn progress(x: f64, soft: f64, hard: f64) -> f64 {
    if x <= soft {
        0.0
    } else if x >= hard {
        1.0
    } else {
        (x - soft) / (hard - soft)
    }
}

/// The pace of a write of `bytes` bytes under `debt` (see the module doc).
pub fn pace(debt: &Debt, limits: &Limits, bytes: usize) -> Pace {
    let kinds = [
        (
            Cause::Level0,
            debt.l0_tables as f64,
            limits.l0.0 as f64,
            limits.l0.1 as f64,
        ),
        (
            Cause::PendingBytes,
            debt.pending_bytes as f64,
            limits.pending_bytes.0 as f64,
            limits.pending_bytes.1 as f64,
        ),
        (
            Cause::Memtables,
            debt.memtables,
            limits.memtables.0,
            limits.memtables.1,
        ),
    ];
    let mut worst = (Cause::Level0, 0.0f64);
    for (cause, x, soft, hard) in kinds {
        if x >= hard {
            return Pace::Stop(cause);
        }
        let p = progress(x, soft, hard);
        if p > worst.1 {
            worst = (cause, p);
        }
    }
    let (cause, p) = worst;
    if p <= 0.0 {
        return Pace::Go;
    }
    let nanos = bytes as f64 * NANOS_PER_BYTE * p / (1.0 - p);
    let delay = Duration::from_nanos(nanos.min(MAX_DELAY.as_nanos() as f64).round() as u64);
    Pace::Delay(delay, cause)
}

/// The sizes of the active memtable (of `memtable_size` bytes when full)
/// below which a write goes at once under `limits`, the other debts being
/// `l0_tables`, `pending_bytes` and `waiting` memtables: `Some(b)` when
/// [`pace`] says [`Pace::Go`] exactly while the active memtable holds fewer
/// than `b` bytes, `None` when it never does. (A full memtable is switched
/// first, so `b` is at most `memtable_size`.) For writers that keep the
/// answer until the debts change, instead of asking on every write.
pub fn go_below(
    limits: &Limits,
    l0_tables: usize,
    pending_bytes: u64,
    waiting: usize,
    memtable_size: u64,
) -> Option<u64> {
    if l0_tables > limits.l0.0 || pending_bytes > limits.pending_bytes.0 {
        return None;
    }
    // Go while `waiting + active / memtable_size <= soft`.
    let room = limits.memtables.0 - waiting as f64;
    if room < 0.0 {
        return None;
    }
    let most = (room * memtable_size as f64).floor();
    let below = if most >= memtable_size as f64 {
        memtable_size
    } else {
        most as u64 + 1
    };
    // The bound is exact in f64 only up to 2^53 bytes: checked, not assumed.
    let goes = |active: u64| {
        let memtables = waiting as f64 + (active as f64 / memtable_size.max(1) as f64).min(1.0);
        matches!(
            pace(
                &Debt {
                    l0_tables,
                    pending_bytes,
                    memtables
                },
                limits,
                0
            ),
            Pace::Go
        )
    };
    match below.checked_sub(1) {
        Some(last) if goes(last) => Some(below),
        Some(_) | None => None,
    }
}

/// Bytes compaction must move before every level is within its target: the
/// bytes of level 0 once it reaches its trigger, plus each deeper level's
/// bytes over its target.
pub fn pending_bytes(v: &Version, opts: &PickerOptions) -> u64 {
    let mut total = 0u64;
    if v.level(0).len() >= opts.l0_trigger {
        total = total.saturating_add(v.level_bytes(0));
    }
    for level in 1..NUM_LEVELS - 1 {
        let over = v
            .level_bytes(level)
            .saturating_sub(level_target(level, opts));
        total = total.saturating_add(over);
    }
    total
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    fn limits() -> Limits {
        Limits::new(20, 36, 256 << 20, 2)
    }

    fn debt(l0: usize, pending_mib: u64, memtables: f64) -> Debt {
        Debt {
            l0_tables: l0,
            pending_bytes: pending_mib << 20,
            memtables,
        }
    }

    fn micros(p: Pace) -> String {
        match p {
            Pace::Go => "go".into(),
            Pace::Delay(d, c) => format!("{} us {c:?}", d.as_micros()),
            Pace::Stop(c) => format!("stop {c:?}"),
        }
    }

    /// Level-0 tables, pending MiB, memtables waiting, bytes written.
    type Case = (usize, u64, f64, usize);

    #[test]
    fn go_below_is_where_pace_stops_saying_go() {
        let l = limits();
        let size = 64u64 << 20;
        // (l0 tables, pending MiB, memtables waiting) -> the bound.
        type Debts = (usize, u64, usize);
        let cases: &[(Debts, Option<u64>)] = &[
            ((0, 0, 0), Some(size)),
            ((0, 0, 1), Some(size / 2 + 1)),
            ((20, 1024, 1), Some(size / 2 + 1)),
            ((0, 0, 2), None),
            ((21, 0, 0), None),
            ((0, 1025, 0), None),
        ];
        for &((l0, pending, waiting), want) in cases {
            let got = go_below(&l, l0, pending << 20, waiting, size);
            assert_eq!(
                got, want,
                "l0 {l0}, pending {pending} MiB, {waiting} waiting"
            );
            // Exact: the last size below the bound goes, the bound does not
            // (or is a full memtable).
            let pace_at = |active: u64| {
                let m = waiting as f64 + (active as f64 / size as f64).min(1.0);
                pace(&debt(l0, pending, m), &l, 100)
            };
            if let Some(b) = got {
                assert_eq!(pace_at(b - 1), Pace::Go);
                assert!(b == size || pace_at(b) != Pace::Go, "bound {b}");
            } else {
                assert_ne!(pace_at(0), Pace::Go);
            }
        }
    }

    #[test]
    fn table_of_debts_and_delays() {
        // (l0 tables, pending MiB, memtables waiting, bytes written) -> pace.
        let cases: &[(Case, &str)] = &[
            ((0, 0, 0.0, MIB), "go"),
            ((20, 1024, 1.5, MIB), "go"),
            ((24, 0, 0.0, MIB), "1333 us Level0"),
            ((28, 0, 0.0, MIB), "4000 us Level0"),
            ((32, 0, 0.0, MIB), "12000 us Level0"),
            ((35, 0, 0.0, MIB), "60000 us Level0"),
            ((28, 0, 0.0, 64 << 10), "250 us Level0"),
            ((36, 0, 0.0, 100), "stop Level0"),
            ((0, 2048, 0.0, MIB), "2000 us PendingBytes"),
            ((0, 2560, 0.0, MIB), "4000 us PendingBytes"),
            ((0, 4096, 0.0, 100), "stop PendingBytes"),
            ((0, 0, 2.25, MIB), "4000 us Memtables"),
            ((0, 0, 3.0, 100), "stop Memtables"),
            // The worst debt decides.
            ((28, 2048, 1.5, MIB), "4000 us Level0"),
            ((22, 2560, 1.5, MIB), "4000 us PendingBytes"),
            // Very close to the hard limit the delay is capped.
            ((0, 0, 2.99999, 64 * MIB), "1000000 us Memtables"),
        ];
        for &((l0, pending, mem, bytes), want) in cases {
            let got = micros(pace(&debt(l0, pending, mem), &limits(), bytes));
            assert_eq!(got, want, "l0 {l0}, pending {pending} MiB, memtables {mem}");
        }
    }

    fn delay_nanos(p: Pace) -> u128 {
        match p {
            Pace::Go => 0,
            Pace::Delay(d, _) => d.as_nanos(),
            Pace::Stop(_) => u128::MAX,
        }
    }

    #[test]
    fn delay_rises_monotonically_to_the_stop() {
        let l = limits();
        let mut last = 0u128;
        for step in 0..=3000 {
            let mem = f64::from(step) / 1000.0;
            let d = delay_nanos(pace(&debt(0, 0, mem), &l, MIB));
            assert!(d >= last, "memtables {mem}: {d} < {last}");
            last = d;
        }
        assert_eq!(last, u128::MAX, "a full queue stops");
        let mut last = 0u128;
        for pending in (0..=4096).step_by(16) {
            let d = delay_nanos(pace(&debt(0, pending, 0.0), &l, MIB));
            assert!(d >= last, "pending {pending} MiB: {d} < {last}");
            last = d;
        }
        let mut last = 0u128;
        for bytes in (0..10 * MIB).step_by(MIB / 4) {
            let d = delay_nanos(pace(&debt(30, 0, 0.0), &l, bytes));
            assert!(d >= last, "{bytes} bytes: {d} < {last}");
            last = d;
        }
    }

    #[test]
    fn continuous_at_the_soft_limit() {
        let l = limits();
        assert_eq!(pace(&debt(0, 0, 1.5), &l, MIB), Pace::Go);
        for eps in [1e-3, 1e-6, 1e-9] {
            let d = delay_nanos(pace(&debt(0, 0, 1.5 + eps), &l, MIB));
            // p = eps / 1.5; the delay is about 4 ms × p: it vanishes with eps.
            let bound = (4e6 * eps / 1.5 * 1.01).ceil() as u128 + 1;
            assert!(d <= bound, "eps {eps}: {d} ns > {bound} ns");
        }
        let at = delay_nanos(pace(&debt(0, 1024, 0.0), &l, MIB));
        let above = delay_nanos(pace(&debt(0, 1025, 0.0), &l, MIB));
        assert_eq!(at, 0);
        assert!(above > 0 && above < 2_000, "{above} ns");
    }

    #[test]
    fn pending_bytes_counts_what_is_over_target() {
        use crate::key::{internal_key, tree_key};
        use crate::manifest::{FileMeta, VersionEdit};
        use std::sync::Arc;
        let meta = |number: u64, size: u64| {
            Arc::new(FileMeta {
                number,
                size,
                smallest: internal_key(&tree_key(0, b"a"), number, 1),
                largest: internal_key(&tree_key(0, b"z"), number, 1),
                smallest_seqno: number,
                largest_seqno: number,
                entries: 1,
            })
        };
        let opts = PickerOptions {
            l0_trigger: 2,
            level_base_size: 1000,
            level_multiplier: 10,
        };
        let edit = |files: Vec<(usize, Arc<FileMeta>)>| VersionEdit {
            new_files: files,
            ..Default::default()
        };
        let v = Version::default()
            .apply(&edit(vec![
                (0, meta(1, 50)),
                (1, meta(2, 1500)),
                (2, meta(3, 9000)),
            ]))
            .unwrap();
        assert_eq!(
            pending_bytes(&v, &opts),
            500,
            "one level-0 table is below the trigger"
        );
        let v = v.apply(&edit(vec![(0, meta(4, 70))])).unwrap();
        assert_eq!(pending_bytes(&v, &opts), 500 + 120);
        assert_eq!(pending_bytes(&Version::default(), &opts), 0);
    }
}
