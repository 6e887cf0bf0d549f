//! The periodic report of `update` and `multi`: the rate measured every
//! `report` operations (one CSV row each: ops, seconds, interval rate,
//! overall rate), a line printed every `every` operations (ops, seconds and
//! rate since the previous line, overall rate, as TokuDB's C examples print
//! them), and a `total` line at the end.

use crate::progress::Progress;
use crate::{rate, Csv};
use std::time::Instant;

/// Measures a run of operations.
pub struct Meter {
    start: Instant,
    last_report: (Instant, u64),
    last_line: (Instant, u64),
    report: u64,
    every: u64,
    max_seconds: Option<f64>,
    note: String,
}

impl Meter {
    /// Starts measuring now.
    pub fn new(report: u64, every: u64, max_seconds: Option<f64>, note: &str) -> Meter {
        let start = Instant::now();
        Meter {
            start,
            last_report: (start, 0),
            last_line: (start, 0),
            report: report.max(1),
            every: every.max(1),
            max_seconds,
            note: note.to_string(),
        }
    }

    /// Call after operation `n` (counted from 1). True when `--max-seconds`
    /// has passed at a measurement: the run stops there.
    #[inline]
    pub fn tick(&mut self, n: u64, csv: &mut Csv, progress: &Progress) -> Result<bool, String> {
        let at_report = n.is_multiple_of(self.report);
        let at_line = n.is_multiple_of(self.every);
        if !at_report && !at_line {
            return Ok(false);
        }
        let now = Instant::now();
        let total = now.duration_since(self.start).as_secs_f64();
        if at_report {
            let (t, m) = self.last_report;
            let secs = now.duration_since(t).as_secs_f64();
            csv.row(&[
                "lamina".into(),
                n.to_string(),
                format!("{secs:.3}"),
                format!("{:.0}", rate(n - m, secs)),
                format!("{:.0}", rate(n, total)),
                self.note.clone(),
            ])?;
            self.last_report = (now, n);
        }
        if at_line {
            let (t, m) = self.last_line;
            let secs = now.duration_since(t).as_secs_f64();
            progress.suspend(|| {
                println!(
                    "{n} {secs:.3} {:.0}/s {:.0}/s",
                    rate(n - m, secs),
                    rate(n, total)
                )
            });
            self.last_line = (now, n);
        }
        let stop = at_report && self.max_seconds.is_some_and(|m| total > m);
        if stop {
            progress.suspend(|| println!("stopped after {total:.0} s (--max-seconds)"));
        }
        Ok(stop)
    }

    /// Prints the `total` line (and its CSV row) for `done` operations.
    pub fn finish(&self, done: u64, csv: &mut Csv) -> Result<(), String> {
        let secs = self.start.elapsed().as_secs_f64();
        println!("total {done} {secs:.3} {:.0}/s", rate(done, secs));
        csv.row(&[
            "lamina".into(),
            format!("total {done}"),
            format!("{secs:.3}"),
            String::new(),
            format!("{:.0}", rate(done, secs)),
            self.note.clone(),
        ])
    }
}
