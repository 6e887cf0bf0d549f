//! Where a database's disk space goes. Loads N items (default 5,000,000)
//! of 24-byte random keys and 150-byte random values, in random order and
//! in batches of 10,000, into `DIR`, then lists the directory by file kind
//! — tables per level, blob files, WAL segments, manifest — before and
//! after `compact()`, beside the raw size of the items (N × 174 bytes):
//!
//! cargo run --release -p lamina --example space -- DIR [N] [--churn]
//!
//! With `--churn`, the load is followed by the writes of the redb
//! benchmark's later phases (crates/redb-bench/src/lib.rs), so that the
//! listing before `compact()` holds what they leave: 1,000 single puts,
//! 100 batches of 1,000 and 50,000 single puts; the first half of the keys
//! put so far deleted; every other key deleted and as many new ones put;
//! every other key of the third of the key space from `0x55…` to `0xaa…`
//! likewise; 250,000 keys at each end deleted and 500,000 new ones put.
//!
//! `DIR` must not exist; it is left behind for a look (`lamina stat DIR`).

use lamina::{Batch, Db, Options};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const KEY: usize = 24;
const VALUE: usize = 150;
const BATCH: usize = 10_000;

/// xorshift64*: random bytes without a dependency.
struct Rng(u64);

impl Rng {
    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
            for (b, r) in chunk.iter_mut().zip(x) {
                *b = r;
            }
        }
    }

    fn pair(&mut self) -> ([u8; KEY], [u8; VALUE]) {
        let (mut key, mut value) = ([0u8; KEY], [0u8; VALUE]);
        self.fill(&mut key);
        self.fill(&mut value);
        (key, value)
    }
}

/// Bytes as MiB, two decimals.
fn mib(b: u64) -> String {
    format!("{:.2} MiB", b as f64 / (1 << 20) as f64)
}

/// Length and allocated bytes of every file of `dir`, grouped by kind, and
/// the tables of each level as the database counts them.
fn list(dir: &Path, db: &Db, when: &str) {
    let mut kinds: std::collections::BTreeMap<&str, (usize, u64, u64)> = Default::default();
    for e in std::fs::read_dir(dir).expect("read_dir") {
        let e = e.expect("entry");
        let name = e.file_name().to_string_lossy().into_owned();
        let m = e.metadata().expect("metadata");
        let kind = match name.rsplit_once('.') {
            Some((_, "sst")) => "tables",
            Some((_, "blob")) => "blob files",
            Some((_, "wal")) => "WAL segments",
            _ if name.starts_with("MANIFEST") => "manifest",
            _ => "other",
        };
        let k = kinds.entry(kind).or_default();
        k.0 += 1;
        k.1 += m.len();
        k.2 += m.blocks() * 512;
    }
    println!("{when}:");
    let (mut len, mut alloc) = (0, 0);
    for (kind, (n, l, a)) in &kinds {
        println!(
            "  {kind:<13} {n:>5} files {:>13} long {:>13} allocated",
            mib(*l),
            mib(*a)
        );
        len += l;
        alloc += a;
    }
    println!(
        "  {:<25} {:>13} long {:>13} allocated",
        "total",
        mib(len),
        mib(alloc)
    );
    for l in db.stats().levels.iter().filter(|l| l.tables > 0) {
        println!(
            "  L{} {:>4} tables {:>13}: {} entries ({} deletes), keys {}, values {}, \
             data {} raw / {} stored, filters {}, index {}",
            l.level,
            l.tables,
            mib(l.bytes),
            l.entries,
            l.deletes,
            mib(l.key_bytes),
            mib(l.value_bytes),
            mib(l.data_raw_bytes),
            mib(l.data_stored_bytes),
            mib(l.filter_bytes),
            mib(l.index_bytes),
        );
    }
}

/// Puts `n` new random items, `per` to a batch.
fn put(db: &Db, rng: &mut Rng, n: usize, per: usize) {
    let mut left = n;
    while left > 0 {
        let mut batch = Batch::new();
        for _ in 0..left.min(per) {
            let (key, value) = rng.pair();
            batch.put(&key, &value);
        }
        left -= left.min(per);
        db.write(batch).expect("write");
    }
}

/// Deletes `keys`, in batches; returns how many.
fn delete(db: &Db, keys: impl IntoIterator<Item = Vec<u8>>) -> usize {
    let mut n = 0;
    let mut batch = Batch::new();
    for key in keys {
        batch.delete(&key);
        n += 1;
        if n % BATCH == 0 {
            db.write(std::mem::take(&mut batch)).expect("delete");
        }
    }
    db.write(batch).expect("delete");
    n
}

/// Every other key of `it` (the second, fourth, …, or the first, third, …
/// when `first`).
fn every_other(it: lamina::Iter, first: bool) -> Vec<Vec<u8>> {
    it.map(|e| e.expect("iterate").0)
        .enumerate()
        .filter(|(i, _)| (i % 2 == 0) == first)
        .map(|(_, k)| k)
        .collect()
}

/// The redb benchmark's writes after its bulk load (see the header).
fn churn(db: &Db, rng: &mut Rng, loaded: usize) {
    put(db, rng, 1_000, 1);
    put(db, rng, 100 * 1_000, 1_000);
    put(db, rng, 50_000, 1);
    let elements = loaded + 1_000 + 100 * 1_000 + 50_000;
    let mut again = Rng(3);
    delete(db, (0..elements / 2).map(|_| again.pair().0.to_vec()));
    let retained = delete(db, every_other(db.iter(), false));
    put(db, rng, retained, BATCH);
    let range = db.range([0x55u8; KEY]..[0xaau8; KEY]);
    let extracted = delete(db, every_other(range, false));
    put(db, rng, extracted, BATCH);
    let pops = 500_000 / 2;
    let front: Vec<Vec<u8>> = db
        .iter()
        .take(pops)
        .map(|e| e.expect("iterate").0)
        .collect();
    let back: Vec<Vec<u8>> = db
        .iter()
        .rev()
        .take(pops)
        .map(|e| e.expect("iterate").0)
        .collect();
    delete(db, front.into_iter().chain(back));
    put(db, rng, 2 * pops, BATCH);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let churning = args.iter().any(|a| a == "--churn");
    let mut args = args.iter().filter(|a| *a != "--churn");
    let dir = args.next().expect("usage: space DIR [N] [--churn]");
    let n: usize = args.next().map_or(5_000_000, |s| s.parse().expect("N"));
    let dir = Path::new(dir);
    assert!(!dir.exists(), "{} exists", dir.display());
    let db = Db::open(dir, Options::default()).expect("open");
    let mut rng = Rng(3);
    put(&db, &mut rng, n, BATCH);
    println!(
        "{n} items, raw {} (N × {} B)",
        mib((n * (KEY + VALUE)) as u64),
        KEY + VALUE
    );
    list(dir, &db, "after the load");
    if churning {
        churn(&db, &mut rng, n);
        list(dir, &db, "after the churn");
        // Counted after the listing: an iterator keeps the tables it reads
        // on disk while it lives, compacted away or not.
        let live = db.iter().count();
        println!(
            "{live} items live, raw {}",
            mib((live * (KEY + VALUE)) as u64)
        );
    }
    db.compact().expect("compact");
    list(dir, &db, "after compact()");
    db.close().expect("close");
    let db = Db::open(dir, Options::default()).expect("reopen");
    list(dir, &db, "after close and open");
}
