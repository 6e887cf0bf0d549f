//! The rows of `lamina-bench btree-rows` one by one, as the harness runs
//! them (the list and what each does: mod.rs): the operations of each,
//! what is timed, and the checks of what each read or removed.

use super::checks::{point_reads, range_reads, PopCheck};
use super::{
    median, rate_row, Engine, Measured, Selection, Sink, Sizes, Stream, BATCH_SIZE, EXTRACT_END,
    EXTRACT_START, KEY_SIZE, READ_ITERATIONS, THREADS, VALUE_SIZE,
};
use std::time::{Duration, Instant};

/// The run's state: the stream of pairs goes on from row to row.
pub(super) struct Rows<'a, 'o> {
    pub(super) sizes: Sizes,
    pub(super) sel: &'a Selection,
    pub(super) out: &'a mut Sink<'o>,
    pub(super) stream: Stream,
}

impl Rows<'_, '_> {
    pub(super) fn emit(&mut self, m: Measured) -> Result<(), String> {
        if self.sel.wants(m.id) {
            (self.out)(m)?;
        }
        Ok(())
    }

    /// `txns` write transactions of `per_txn` puts of the next pairs.
    fn put_txns(
        &mut self,
        db: &mut dyn Engine,
        txns: u64,
        per_txn: u64,
        durable: bool,
    ) -> Result<Duration, String> {
        let stream = &mut self.stream;
        let t0 = Instant::now();
        for _ in 0..txns {
            db.write(durable, &mut |w| {
                for _ in 0..per_txn {
                    stream.next_pair();
                    w.insert(&stream.key, &stream.value)?;
                }
                Ok(())
            })?;
        }
        Ok(t0.elapsed())
    }

    /// Rows 1 to 4.
    pub(super) fn writes(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let s = self.sizes;
        let d = self.put_txns(db, 1, s.bulk, true)?;
        self.emit(rate_row("bulk-load", s.bulk, d))?;
        if self.sel.done_after("bulk-load") {
            return Ok(());
        }
        let d = self.put_txns(db, s.individual, 1, true)?;
        self.emit(rate_row("individual-writes", s.individual, d))?;
        if self.sel.done_after("individual-writes") {
            return Ok(());
        }
        let d = self.put_txns(db, s.batches, BATCH_SIZE, true)?;
        self.emit(rate_row("batch-writes", s.batches * BATCH_SIZE, d))?;
        if self.sel.done_after("batch-writes") {
            return Ok(());
        }
        let d = self.put_txns(db, s.nosync, 1, false)?;
        self.emit(rate_row("nosync-writes", s.nosync, d))
    }

    /// Rows 5 to 7, in one read transaction.
    pub(super) fn reads(&mut self, db: &dyn Engine) -> Result<(), String> {
        let sel = self.sel;
        let (run_len, run_reads, run_ranges) = (
            sel.runs("len", false),
            sel.runs("random-reads", false),
            sel.runs("range-reads", false),
        );
        if !(run_len || run_reads || run_ranges) {
            return Ok(());
        }
        let elements = self.sizes.elements();
        let (reads, scans) = (self.sizes.reads, self.sizes.scans);
        let mut results = Vec::new();
        db.read(&mut |r| {
            if run_len {
                let t0 = Instant::now();
                let len = r.len()?;
                let d = t0.elapsed();
                if len != elements {
                    return Err(format!("len() counted {len} entries, expected {elements}"));
                }
                let mut m = rate_row("len", 1, d);
                m.check = len.to_string();
                results.push(m);
            }
            if run_reads {
                let mut times = Vec::new();
                for _ in 0..READ_ITERATIONS {
                    let t0 = Instant::now();
                    point_reads(r, Stream::new(), reads)?;
                    times.push(t0.elapsed());
                }
                results.push(rate_row("random-reads", reads, median(times)));
            }
            if run_ranges {
                let mut times = Vec::new();
                let mut seen = Vec::new();
                for _ in 0..READ_ITERATIONS {
                    let t0 = Instant::now();
                    let got = range_reads(r, scans)?;
                    times.push(t0.elapsed());
                    seen.push(got);
                }
                seen.dedup();
                let [(entries, sum)] = seen.as_slice() else {
                    return Err(format!(
                        "the runs of the range reads read differently: {seen:?}"
                    ));
                };
                if *sum == 0 {
                    return Err("the range reads read nothing".into());
                }
                let mut m = rate_row("range-reads", scans, median(times));
                m.check = format!("{entries} entries, first bytes summing to {sum}");
                results.push(m);
            }
            Ok(())
        })?;
        results.into_iter().try_for_each(|m| self.emit(m))
    }

    /// Rows 8: the reads at 4 to 32 threads.
    pub(super) fn thread_reads(&mut self, db: &dyn Engine) -> Result<(), String> {
        let elements = self.sizes.elements();
        for (threads, id) in THREADS.into_iter().zip([
            "reads-4-threads",
            "reads-8-threads",
            "reads-16-threads",
            "reads-32-threads",
        ]) {
            if !self.sel.runs(id, false) {
                continue;
            }
            let per = elements / threads as u64;
            // Each thread's place in the stream, found before the timing.
            let streams: Vec<Stream> = (0..threads as u64).map(|i| Stream::from(i * per)).collect();
            let barrier = std::sync::Barrier::new(threads);
            let t0 = Instant::now();
            let results: Vec<Result<(), String>> = std::thread::scope(|s| {
                let handles: Vec<_> = streams
                    .into_iter()
                    .map(|stream| {
                        let barrier = &barrier;
                        s.spawn(move || {
                            barrier.wait();
                            db.read(&mut |r| point_reads(r, stream.clone(), per))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err("a reader panicked".into())))
                    .collect()
            });
            let d = t0.elapsed();
            results.into_iter().collect::<Result<Vec<()>, String>>()?;
            self.emit(rate_row(id, elements, d))?;
        }
        Ok(())
    }

    /// Row 9.
    pub(super) fn removals(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let deletes = self.sizes.elements() / 2;
        let t0 = Instant::now();
        db.write(true, &mut |w| {
            let mut stream = Stream::new();
            for _ in 0..deletes {
                stream.next_pair();
                w.remove(&stream.key)?;
            }
            Ok(())
        })?;
        self.emit(rate_row("removals", deletes, t0.elapsed()))
    }

    /// Puts `n` new pairs of the stream in one write transaction (not
    /// timed).
    fn refill(&mut self, db: &mut dyn Engine, n: u64) -> Result<(), String> {
        self.put_txns(db, 1, n, true).map(|_| ())
    }

    /// The table's length between the rows (not timed).
    fn len_now(db: &dyn Engine) -> Result<u64, String> {
        let mut len = 0;
        db.read(&mut |r| {
            len = r.len()?;
            Ok(())
        })?;
        Ok(len)
    }

    /// Row 10.
    pub(super) fn retain(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let before = self.sizes.elements() - self.sizes.elements() / 2;
        let mut removed = 0;
        let t0 = Instant::now();
        db.write(true, &mut |w| {
            let mut counter = 0u64;
            removed = w.retain(&mut |_, _| {
                let keep = counter.is_multiple_of(2);
                counter += 1;
                keep
            })?;
            if counter != before {
                return Err(format!(
                    "retain visited {counter} entries, expected {before}"
                ));
            }
            Ok(())
        })?;
        let d = t0.elapsed();
        if removed != before / 2 {
            return Err(format!(
                "retain removed {removed} of {before} entries, expected {}",
                before / 2
            ));
        }
        let mut m = rate_row("retain", removed, d);
        m.check = removed.to_string();
        self.emit(m)?;
        self.refill(db, removed)
    }

    /// Row 11.
    pub(super) fn extract_if(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let mut extracted = 0;
        let mut visited = 0u64;
        let t0 = Instant::now();
        db.write(true, &mut |w| {
            let mut counter = 0u64;
            extracted = w.extract_if(&EXTRACT_START, &EXTRACT_END, &mut |_, _| {
                let extract = counter % 2 == 1;
                counter += 1;
                extract
            })?;
            visited = counter;
            Ok(())
        })?;
        let d = t0.elapsed();
        if extracted != visited / 2 || extracted == 0 {
            return Err(format!(
                "extract_if removed {extracted} of the {visited} entries it visited, expected {}",
                visited / 2
            ));
        }
        let mut m = rate_row("extract-if", extracted, d);
        m.check = format!("{extracted} of {visited}");
        self.emit(m)?;
        self.refill(db, extracted)
    }

    /// Row 12.
    pub(super) fn pop(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let (pops, sample, limit) = (
            self.sizes.pops,
            self.sizes.pop_sample,
            self.sizes.pop_sample_limit,
        );
        let len = Self::len_now(db)?;
        let expected_len = self.sizes.elements() - self.sizes.elements() / 2;
        if len != expected_len || len < pops {
            return Err(format!(
                "before pop the table holds {len} entries, expected {expected_len}"
            ));
        }
        // The smallest key, which the first pop must return (not timed).
        let mut smallest = Vec::new();
        db.read(&mut |r| {
            r.range_from(&[], 1, &mut |k, _| smallest = k.to_vec())
                .map(|_| ())
        })?;
        let mut check = PopCheck::default();
        let mut timed = 0u64;
        let mut duration = None;
        db.write(true, &mut |w| {
            let t0 = Instant::now();
            for i in 0..pops {
                let front = i.is_multiple_of(2);
                let got = if front {
                    w.pop_first(&mut |k| check.front(k))?
                } else {
                    w.pop_last(&mut |k| check.back(k))?
                };
                if !got {
                    return Err(format!("pop {i} found the table empty"));
                }
                timed += 1;
                // An engine slow at popping: estimate the whole from the
                // first 1%, as the harness does.
                if i + 1 == sample {
                    let d = t0.elapsed();
                    if d > limit {
                        duration = Some(
                            d.saturating_mul(u32::try_from(pops / sample).unwrap_or(u32::MAX)),
                        );
                        break;
                    }
                }
            }
            if duration.is_none() {
                duration = Some(t0.elapsed());
            }
            if timed < pops {
                // The remaining pops' removals, by retain (not timed).
                let front_left = pops.div_ceil(2) - timed.div_ceil(2);
                let back_left = pops / 2 - timed / 2;
                let remaining = len - timed;
                let mut index = 0u64;
                let removed = w.retain(&mut |_, _| {
                    let keep = index >= front_left && index < remaining - back_left;
                    index += 1;
                    keep
                })?;
                if index != remaining || removed != front_left + back_left {
                    return Err(format!(
                        "the retain after the sampled pops visited {index} and removed {removed}"
                    ));
                }
            }
            Ok(())
        })?;
        check.verify(&smallest, timed)?;
        let mut m = rate_row("pop", pops, duration.unwrap_or_default());
        m.estimated = timed < pops;
        m.check = check.to_string();
        self.emit(m)?;
        self.refill(db, pops)
    }

    /// Row 15.
    pub(super) fn sorted_inserts(&mut self, db: &mut dyn Engine) -> Result<(), String> {
        let n = self.sizes.sorted;
        let pairs: Vec<([u8; KEY_SIZE + 8], [u8; VALUE_SIZE])> = (0..n)
            .map(|i| {
                let mut key = [0xFF; KEY_SIZE + 8];
                if let Some(tail) = key.get_mut(KEY_SIZE..) {
                    tail.copy_from_slice(&i.to_be_bytes());
                }
                let mut value = [0; VALUE_SIZE];
                self.stream.rng.fill(&mut value);
                (key, value)
            })
            .collect();
        let t0 = Instant::now();
        db.write(true, &mut |w| {
            let mut it = pairs.iter().map(|(k, v)| (&k[..], &v[..]));
            w.insert_sorted(&mut it)
        })?;
        let d = t0.elapsed();
        // What the sorted inserts left past the random keys (not timed).
        let mut found = 0u64;
        db.read(&mut |r| {
            found = r.range_from(&[0xFF; KEY_SIZE], usize::MAX, &mut |_, _| {})? as u64;
            Ok(())
        })?;
        if found != n {
            return Err(format!(
                "after the sorted inserts {found} keys follow 24 x 0xFF, expected {n}"
            ));
        }
        let mut m = rate_row("sorted-inserts", n, d);
        m.check = found.to_string();
        self.emit(m)
    }
}
