//! A db_bench-style driver: `fillrandom`, `fillseq`, `readrandom`, `overwrite`,
//! `readseq`, `readreverse`, `flush`, `compact`
//! with RocksDB's key and value sizes, printing RocksDB's report format
//! (micros/op, ops/sec, MB/s) so the two can be compared line by line.
//!
//! cargo run --release --example dbbench -- --num 10000000 --benchmarks fillrandom,readrandom --db /tmp/x
//!
//! `--memory_budget BYTES` opens the database with that `Options::memory_budget`
//! (default: lamina's default budget); `--blob_threshold BYTES`,
//! `--level_base_size BYTES` and `--level_multiplier N` force those options
//! (default: lamina's own choice).

use lamina::{Batch, Db, Durability, Options};
use std::time::Instant;

struct Args {
    num: u64,
    reads: u64,
    key_size: usize,
    value_size: usize,
    benchmarks: Vec<String>,
    db: String,
    sync: bool,
    memory_budget: Option<usize>,
    blob_threshold: Option<usize>,
    level_base_size: Option<u64>,
    level_multiplier: Option<u64>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        num: 1_000_000,
        reads: 0,
        key_size: 16,
        value_size: 100,
        benchmarks: vec!["fillrandom".into(), "readrandom".into()],
        db: "/tmp/lamina-dbbench".into(),
        sync: false,
        memory_budget: None,
        blob_threshold: None,
        level_base_size: None,
        level_multiplier: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (flag.clone(), None),
        };
        let mut val = || {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or(format!("{name} needs a value"))
        };
        let num = |s: String| s.parse::<u64>().map_err(|e| format!("{name}: {e}"));
        match name.trim_start_matches('-') {
            "num" => a.num = num(val()?)?,
            "reads" => a.reads = num(val()?)?,
            "key_size" => a.key_size = num(val()?)? as usize,
            "value_size" => a.value_size = num(val()?)? as usize,
            "benchmarks" => a.benchmarks = val()?.split(',').map(str::to_string).collect(),
            "db" => a.db = val()?,
            "sync" => a.sync = val()? == "1",
            "memory_budget" => a.memory_budget = Some(num(val()?)? as usize),
            "blob_threshold" => a.blob_threshold = Some(num(val()?)? as usize),
            "level_base_size" => a.level_base_size = Some(num(val()?)?),
            "level_multiplier" => a.level_multiplier = Some(num(val()?)?),
            other => return Err(format!("unknown option --{other}")),
        }
    }
    if a.reads == 0 {
        a.reads = a.num;
    }
    Ok(a)
}

/// Values like db_bench's: consecutive slices of a 1 MiB buffer built from
/// pieces that are half random bytes and half a repeat of them, so blocks
/// compress to about half their size (db_bench's default compression ratio).
struct ValueSource {
    buf: Vec<u8>,
    size: usize,
    pos: std::cell::Cell<usize>,
}

impl ValueSource {
    fn new(size: usize) -> ValueSource {
        let mut rng = Rng(301);
        let mut buf = Vec::with_capacity((1 << 20) + size);
        while buf.len() < (1 << 20) + size {
            let piece = size.clamp(2, 100);
            let random: Vec<u8> = (0..piece / 2)
                .map(|_| (rng.next() % 95 + 32) as u8)
                .collect();
            buf.extend_from_slice(&random);
            buf.extend_from_slice(&random);
        }
        ValueSource {
            buf,
            size,
            pos: std::cell::Cell::new(0),
        }
    }

    fn next(&self) -> &[u8] {
        let mut p = self.pos.get();
        if p + self.size > self.buf.len() {
            p = 0;
        }
        self.pos.set(p + self.size);
        self.buf.get(p..p + self.size).unwrap_or_default()
    }
}

/// xorshift64*: fast and deterministic, like db_bench's Random64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn key(buf: &mut Vec<u8>, k: u64, size: usize) {
    buf.clear();
    let s = format!("{k:016}");
    buf.extend_from_slice(
        s.as_bytes()
            .get(s.len().saturating_sub(size)..)
            .unwrap_or_default(),
    );
    buf.resize(size, b'0');
}

fn report(name: &str, ops: u64, bytes: u64, t: Instant) {
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{name:<12} : {:>10.3} micros/op {:>9.0} ops/sec; {:>7.1} MB/s",
        secs * 1e6 / ops as f64,
        ops as f64 / secs,
        bytes as f64 / secs / 1e6
    );
}

type BoxError = Box<dyn std::error::Error>;

/// lamina's options, with those the flags force.
fn options(a: &Args) -> Options {
    let mut opts = Options::default();
    if let Some(b) = a.memory_budget {
        opts.memory_budget = b;
    }
    if let Some(t) = a.blob_threshold {
        opts.blob_threshold = t;
    }
    if let Some(b) = a.level_base_size {
        opts.level_base_size = b;
    }
    if let Some(m) = a.level_multiplier {
        opts.level_multiplier = m;
    }
    opts
}

fn main() -> Result<(), BoxError> {
    let a = parse()?;
    let _ = Db::destroy(&a.db, &Options::default());
    let db = Db::open(&a.db, options(&a))?;
    let values = ValueSource::new(a.value_size);
    let mut k = Vec::new();
    for bench in &a.benchmarks {
        run(&db, &a, bench, &values, &mut k)?;
    }
    let s = db.stats();
    println!(
        "tables by level: {:?}; write amplification {:.2}; stalls {} ({} ms)",
        s.levels.iter().map(|l| l.tables).collect::<Vec<_>>(),
        s.write_amplification(),
        s.write_stops,
        s.write_delay_micros / 1000
    );
    db.close()?;
    Ok(())
}

/// Runs the benchmark `bench` and prints its report line; `values` go on
/// from where the previous benchmark left them, `k` is the key's buffer.
fn run(
    db: &Db,
    a: &Args,
    bench: &str,
    values: &ValueSource,
    k: &mut Vec<u8>,
) -> Result<(), BoxError> {
    let t = Instant::now();
    let seed = if bench.starts_with("read") {
        0x0fed_cba9_8765_4321
    } else {
        0x1234_5678_9abc_def1
    };
    let mut rng = Rng(seed);
    match bench {
        "fillseq" | "fillrandom" | "overwrite" => {
            fill(db, a, bench == "fillseq", values, k, &mut rng)?;
            report(bench, a.num, a.num * (a.key_size + a.value_size) as u64, t);
        }
        "readrandom" => {
            let found = read_random(db, a, k, &mut rng)?;
            report(
                bench,
                a.reads,
                found * (a.key_size + a.value_size) as u64,
                t,
            );
            println!("             ({found} of {} found)", a.reads);
        }
        "readseq" => {
            let mut n = 0u64;
            let mut bytes = 0u64;
            for e in db.iter() {
                let (k, v) = e?;
                bytes += (k.len() + v.len()) as u64;
                n += 1;
            }
            report(bench, n, bytes, t);
        }
        "readreverse" => {
            let mut n = 0u64;
            let mut bytes = 0u64;
            for e in db.iter().rev() {
                let (k, v) = e?;
                bytes += (k.len() + v.len()) as u64;
                n += 1;
            }
            report(bench, n, bytes, t);
        }
        "flush" => {
            db.flush()?;
            report(bench, 1, 0, t);
        }
        "compact" => {
            db.compact()?;
            report(bench, 1, 0, t);
        }
        other => return Err(format!("unknown benchmark {other}").into()),
    }
    Ok(())
}

/// Puts `--num` keys, in order when `sequential`, else drawn at random, a
/// commit each.
fn fill(
    db: &Db,
    a: &Args,
    sequential: bool,
    values: &ValueSource,
    k: &mut Vec<u8>,
    rng: &mut Rng,
) -> Result<(), BoxError> {
    let d = if a.sync {
        Durability::Sync
    } else {
        Durability::None
    };
    let mut batch = Batch::new();
    for i in 0..a.num {
        let n = if sequential { i } else { rng.next() % a.num };
        key(k, n, a.key_size);
        batch.put(k, values.next());
        if batch.len() == 1 {
            db.write_with(std::mem::take(&mut batch), d)?;
            batch = Batch::new();
        }
    }
    Ok(())
}

/// Gets `--reads` keys drawn at random; how many were found.
fn read_random(db: &Db, a: &Args, k: &mut Vec<u8>, rng: &mut Rng) -> Result<u64, BoxError> {
    let mut found = 0u64;
    for _ in 0..a.reads {
        key(k, rng.next() % a.num, a.key_size);
        if db.get(k)?.is_some() {
            found += 1;
        }
    }
    Ok(found)
}
