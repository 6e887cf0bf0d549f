//! Progress of long commands: records, bytes, rate, elapsed time, and an ETA
//! when the total is known.
//!
//! On a terminal (stderr) it is an `indicatif` bar redrawn ten times a
//! second; otherwise a plain line every `interval` and a summary at the end,
//! so that logs of piped runs show the rate over time. Counting is cheap:
//! [`Progress::add`] reads the clock once per 1024 calls.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// The program named at the start of every line: `lamina`, unless
/// [`set_program`] said otherwise (`lamina-bench` does).
static PROGRAM: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Names the program at the start of progress lines; the first call wins.
pub fn set_program(name: &'static str) {
    let _ = PROGRAM.set(name);
}

fn program() -> &'static str {
    PROGRAM.get().copied().unwrap_or("lamina")
}

/// What the total of a task is, when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Total {
    /// Unknown: no ETA.
    Unknown,
    /// This many records.
    Records(u64),
    /// This many bytes of input.
    Bytes(u64),
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Not at all.
    Off,
    /// A bar on the terminal.
    Bar,
    /// A line every `interval`.
    Lines,
}

/// Settings shared by every command (from the global options).
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Show nothing.
    pub quiet: bool,
    /// Time between plain lines.
    pub interval: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            quiet: false,
            interval: Duration::from_secs(5),
        }
    }
}

impl Settings {
    /// The mode for a task that wants progress (`wanted`).
    pub fn mode(&self, wanted: bool) -> Mode {
        if self.quiet || !wanted {
            Mode::Off
        } else if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        }
    }
}

/// Counts a task's progress and shows it.
pub struct Progress {
    what: String,
    total: Total,
    mode: Mode,
    interval: Duration,
    start: Instant,
    last_draw: Instant,
    calls: u32,
    records: u64,
    bytes: u64,
    bar: Option<ProgressBar>,
}

fn per_second(n: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in binary units: `1.5 KiB`, `20.6 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = "KiB";
    for u in UNITS.iter().skip(1) {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

/// A duration as `h:mm:ss` or `m:ss.s`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:04.1}", s / 60, d.as_secs_f64() % 60.0)
    }
}

impl Progress {
    /// Starts counting a task called `what` (e.g. `load`).
    pub fn new(what: impl Into<String>, total: Total, mode: Mode, settings: &Settings) -> Progress {
        let now = Instant::now();
        let bar = (mode == Mode::Bar).then(|| {
            let len = match total {
                Total::Unknown => None,
                Total::Records(n) | Total::Bytes(n) => Some(n),
            };
            let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr_with_hz(10));
            let template = if len.is_some() {
                "{prefix} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg} ETA {eta}"
            } else {
                "{spinner} {prefix} [{elapsed_precise}] {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        let p = Progress {
            what: what.into(),
            total,
            mode,
            interval: settings.interval,
            start: now,
            last_draw: now,
            calls: 0,
            records: 0,
            bytes: 0,
            bar,
        };
        if let Some(bar) = &p.bar {
            bar.set_prefix(p.what.clone());
        }
        p
    }

    /// Adds records and bytes done.
    #[inline]
    pub fn add(&mut self, records: u64, bytes: u64) {
        self.records += records;
        self.bytes += bytes;
        self.calls += 1;
        if self.calls >= 1024 {
            self.calls = 0;
            self.tick();
        }
    }

    /// Sets the counts (for tasks sampled from elsewhere).
    pub fn set(&mut self, records: u64, bytes: u64) {
        self.records = records;
        self.bytes = bytes;
        self.tick();
    }

    /// Counts so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    fn tick(&mut self) {
        if self.mode == Mode::Off {
            return;
        }
        let now = Instant::now();
        let every = if self.mode == Mode::Bar {
            Duration::from_millis(100)
        } else {
            self.interval
        };
        if now.duration_since(self.last_draw) < every {
            return;
        }
        self.last_draw = now;
        self.draw(now);
    }

    fn done_fraction(&self) -> Option<f64> {
        match self.total {
            Total::Unknown => None,
            Total::Records(0) | Total::Bytes(0) => Some(1.0),
            Total::Records(n) => Some(self.records as f64 / n as f64),
            Total::Bytes(n) => Some(self.bytes as f64 / n as f64),
        }
    }

    fn rates(&self, elapsed: Duration) -> String {
        format!(
            "{} records, {}, {} records/s, {}/s",
            thousands(self.records),
            bytes(self.bytes),
            thousands(per_second(self.records, elapsed) as u64),
            bytes(per_second(self.bytes, elapsed) as u64)
        )
    }

    fn draw(&mut self, now: Instant) {
        let elapsed = now.duration_since(self.start);
        if let Some(bar) = &self.bar {
            if let Total::Records(_) = self.total {
                bar.set_position(self.records);
            } else if let Total::Bytes(_) = self.total {
                bar.set_position(self.bytes);
            }
            bar.set_message(self.rates(elapsed));
            return;
        }
        let mut line = format!(
            "{} {}: {}, elapsed {}",
            program(),
            self.what,
            self.rates(elapsed),
            clock(elapsed)
        );
        if let Some(f) = self.done_fraction().filter(|f| *f > 0.0) {
            let left = elapsed.as_secs_f64() * (1.0 - f.min(1.0)) / f;
            line.push_str(&format!(
                ", {:.0}%, ETA {}",
                f * 100.0,
                clock(Duration::from_secs_f64(left))
            ));
        }
        let _ = writeln!(std::io::stderr(), "{line}");
    }

    /// Prints one more line about the task (unless off).
    pub fn note(&self, line: &str) {
        if self.mode != Mode::Off {
            if let Some(bar) = &self.bar {
                bar.suspend(|| eprintln!("{} {}: {line}", program(), self.what));
            } else {
                eprintln!("{} {}: {line}", program(), self.what);
            }
        }
    }

    /// Runs `f` (which prints on standard output) with the bar hidden, then
    /// flushes standard output, so that table rows and the bar do not mix.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        let r = match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        };
        let _ = std::io::stdout().flush();
        r
    }

    /// Ends a task that failed: clears the bar and prints no summary (the
    /// error says what was done).
    pub fn abandon(mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Ends the task and prints its summary line (unless off or nothing was counted).
    pub fn finish(mut self) {
        let elapsed = self.start.elapsed();
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if self.mode != Mode::Off && (self.records > 0 || self.bytes > 0) {
            let _ = writeln!(
                std::io::stderr(),
                "{} {}: done: {} in {}",
                program(),
                self.what,
                self.rates(elapsed),
                clock(elapsed)
            );
        }
    }
}

/// Runs `work` (a blocking engine call) while a thread samples `sample`
/// (records, bytes) into a progress display, which prints its `done` line
/// only if `work` succeeded.
pub fn while_running<T: Send, E: Send>(
    mut progress: Progress,
    sample: impl Fn() -> (u64, u64) + Sync,
    work: impl FnOnce() -> Result<T, E> + Send,
) -> Result<T, E> {
    let done = std::sync::atomic::AtomicBool::new(false);
    let (result, progress) = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(50));
                let (r, b) = sample();
                progress.set(r, b);
            }
            let (r, b) = sample();
            progress.set(r, b);
            progress
        });
        let result = work();
        done.store(true, std::sync::atomic::Ordering::Release);
        (result, watcher.join())
    });
    if let Ok(p) = progress {
        if result.is_ok() {
            p.finish();
        } else {
            p.abandon();
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(125_000_000), "125,000,000");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(22_154_166_272), "20.6 GiB");
        assert_eq!(clock(Duration::from_millis(61_500)), "1:01.5");
        assert_eq!(clock(Duration::from_secs(78_192)), "21:43:12");
    }
}
