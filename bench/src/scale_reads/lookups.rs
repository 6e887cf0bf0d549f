//! The timed lookups of one mode and one stream of keys on one engine:
//! keys drawn uniformly at random by index (each thread from a generator
//! of its own, seeded by mode, stream and thread, so every engine is asked
//! for the same keys in the same order), every answer checked, the
//! latency of every call recorded (the check is outside the timing), and
//! the device's reads and the process's bytes read counted around the
//! whole mode.

use super::data::{DataSet, KeyBuf, Stream};
use super::device::{self, BlockDevice};
use super::{Engine, Measured, Mode, Reader};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// How the modes run.
pub struct Plan<'a> {
    /// The data set the keys come from.
    pub set: &'a DataSet,
    /// How long each mode runs.
    pub duration: Duration,
    /// Threads of [`Mode::Threads`].
    pub threads: usize,
    /// Keys per call of [`Mode::Batch`].
    pub batch: usize,
    /// The device the database is on, if its reads can be counted.
    pub device: Option<&'a BlockDevice>,
}

/// Runs `mode` with keys of `stream` on `engine` for the plan's duration.
pub fn run(
    engine: &dyn Engine,
    mode: Mode,
    stream: Stream,
    plan: &Plan,
) -> Result<Measured, String> {
    let reads_before = plan.device.and_then(BlockDevice::reads);
    let bytes_before = device::read_bytes();
    let start = Instant::now();
    let deadline = start + plan.duration;
    let tally = match mode {
        Mode::Single => singles(engine, stream, plan, deadline, seed(mode, stream, 0))?,
        Mode::Threads => {
            let results: Vec<Result<Tally, String>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..plan.threads)
                    .map(|t| {
                        let seed = seed(mode, stream, t as u64);
                        s.spawn(move || singles(engine, stream, plan, deadline, seed))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err("a lookup thread panicked".to_string()))
                    })
                    .collect()
            });
            let mut all = Tally::new()?;
            for r in results {
                all.add(r?)?;
            }
            all
        }
        Mode::Batch => batches(engine, stream, plan, deadline, seed(mode, stream, 0))?,
    };
    let secs = start.elapsed().as_secs_f64();
    let reads_after = plan.device.and_then(BlockDevice::reads);
    let bytes_after = device::read_bytes();
    Ok(Measured {
        mode,
        stream,
        lookups: tally.lookups,
        secs,
        device_reads: reads_before
            .zip(reads_after)
            .map(|(a, b)| b.saturating_sub(a)),
        read_bytes: bytes_before
            .zip(bytes_after)
            .map(|(a, b)| b.saturating_sub(a)),
        p50_ns: tally.latency.value_at_quantile(0.5),
        p99_ns: tally.latency.value_at_quantile(0.99),
        wrong: tally.wrong,
    })
}

/// The seed of thread `thread`'s keys in `mode` with `stream`.
fn seed(mode: Mode, stream: Stream, thread: u64) -> u64 {
    let m = match mode {
        Mode::Single => 1,
        Mode::Threads => 2,
        Mode::Batch => 3,
    };
    let s = match stream {
        Stream::Found => 1,
        Stream::Absent => 2,
    };
    (m << 48) | (s << 40) | thread
}

/// What a thread counted.
struct Tally {
    lookups: u64,
    wrong: u64,
    /// Latency of each call, nanoseconds.
    latency: Histogram<u64>,
}

impl Tally {
    fn new() -> Result<Tally, String> {
        // From a nanosecond to 100 s (longer calls count as 100 s), three
        // significant digits: about 200 KiB a thread.
        let latency = Histogram::new_with_bounds(1, 100_000_000_000, 3)
            .map_err(|e| format!("latency histogram: {e}"))?;
        Ok(Tally {
            lookups: 0,
            wrong: 0,
            latency,
        })
    }

    fn record(&mut self, call: Duration) {
        let ns = u64::try_from(call.as_nanos()).unwrap_or(u64::MAX);
        self.latency.saturating_record(ns.max(1));
    }

    fn add(&mut self, other: Tally) -> Result<(), String> {
        self.lookups += other.lookups;
        self.wrong += other.wrong;
        self.latency
            .add(&other.latency)
            .map_err(|e| format!("latency histogram: {e:?}"))
    }
}

/// A value seen by a reader, copied out of the engine's buffers so that it
/// is checked after the call's timing.
#[derive(Default)]
struct Answer {
    found: bool,
    value: Vec<u8>,
}

impl Answer {
    fn take(&mut self, value: Option<&[u8]>) {
        self.value.clear();
        self.found = value.is_some();
        if let Some(v) = value {
            self.value.extend_from_slice(v);
        }
    }

    /// Whether it is the right answer for key `i` of `stream`.
    fn right(&self, set: &DataSet, stream: Stream, i: u64) -> bool {
        match stream {
            Stream::Found => self.found && set.check(i, &self.value),
            Stream::Absent => !self.found,
        }
    }
}

/// One key per call, until `deadline`.
fn singles(
    engine: &dyn Engine,
    stream: Stream,
    plan: &Plan,
    deadline: Instant,
    seed: u64,
) -> Result<Tally, String> {
    let mut reader: Box<dyn Reader + '_> = engine.reader()?;
    let mut tally = Tally::new()?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut buf = KeyBuf::default();
    let mut answer = Answer::default();
    let n = plan.set.keys();
    loop {
        let i = rng.u64(0..n);
        let key = plan.set.key(stream, i, &mut buf);
        let t0 = Instant::now();
        reader.get(key, &mut |v| answer.take(v))?;
        let t1 = Instant::now();
        tally.record(t1 - t0);
        tally.lookups += 1;
        if !answer.right(plan.set, stream, i) {
            tally.wrong += 1;
        }
        if t1 >= deadline {
            return Ok(tally);
        }
    }
}

/// `plan.batch` keys per call, until `deadline`.
fn batches(
    engine: &dyn Engine,
    stream: Stream,
    plan: &Plan,
    deadline: Instant,
    seed: u64,
) -> Result<Tally, String> {
    let mut reader: Box<dyn Reader + '_> = engine.reader()?;
    let mut tally = Tally::new()?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let n = plan.set.keys();
    let mut indexes = vec![0u64; plan.batch];
    let mut bufs = vec![KeyBuf::default(); plan.batch];
    let mut answers: Vec<Answer> = (0..plan.batch).map(|_| Answer::default()).collect();
    loop {
        indexes.iter_mut().for_each(|i| *i = rng.u64(0..n));
        let keys: Vec<&[u8]> = bufs
            .iter_mut()
            .zip(&indexes)
            .map(|(b, &i)| plan.set.key(stream, i, b))
            .collect();
        answers.iter_mut().for_each(|a| a.take(None));
        let t0 = Instant::now();
        reader.get_many(&keys, &mut |j, v| {
            if let Some(a) = answers.get_mut(j) {
                a.take(v);
            }
        })?;
        let t1 = Instant::now();
        tally.record(t1 - t0);
        tally.lookups += keys.len() as u64;
        for (a, &i) in answers.iter().zip(&indexes) {
            if !a.right(plan.set, stream, i) {
                tally.wrong += 1;
            }
        }
        if t1 >= deadline {
            return Ok(tally);
        }
    }
}
