//! Random point reads of keys in tables, for cache-miss counts under
//! callgrind's cache simulation (deterministic, where timings move from run
//! to run):
//!
//! valgrind --tool=callgrind --cache-sim=yes --LL=1048576,16,64 \
//!     --toggle-collect='*measured*' target/release/examples/random_reads DIR 100000
//!
//! The first run loads 10^6 keys (`%016d`, 100-byte values of random bytes,
//! as the dbm benchmark's) into `DIR`, in order, and closes; every run then opens
//! `DIR`, reads the first 800,000 keys (the ones the load leaves in tables)
//! once in order, untimed, so their blocks are in the cache, then reads N
//! keys (default 200,000) drawn at random from them, timing those reads.

use lamina::{Db, Options};
use std::hint::black_box;

/// Keys loaded.
const KEYS: u64 = 1_000_000;
/// Keys read from: those the load leaves in tables.
const IN_TABLES: u64 = 800_000;

#[inline(never)]
fn measured(db: &Db, keys: &[Vec<u8>]) -> usize {
    let mut found = 0;
    for k in keys {
        found += usize::from(db.get(k).expect("get").is_some());
    }
    found
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: random_reads DIR [READS]");
    let reads: usize = args.next().map_or(200_000, |s| s.parse().expect("READS"));
    if !std::path::Path::new(&dir).exists() {
        let db = Db::open(&dir, Options::default()).expect("open");
        let mut x: u64 = 88172645463325252;
        let mut v = [0u8; 100];
        for i in 0..KEYS {
            for b in v.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            db.put(format!("{i:016}").as_bytes(), &v).expect("put");
        }
        db.close().expect("close");
    }
    let db = Db::open(&dir, Options::default()).expect("open");
    for i in 0..IN_TABLES {
        black_box(db.get(format!("{i:016}").as_bytes()).expect("get"));
    }
    let mut x: u64 = 12345;
    let keys: Vec<Vec<u8>> = (0..reads)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{:016}", x % IN_TABLES).into_bytes()
        })
        .collect();
    let t = std::time::Instant::now();
    let found = black_box(measured(&db, &keys));
    println!(
        "{found} of {reads} found, {:.0} ns a read",
        t.elapsed().as_nanos() as f64 / reads as f64
    );
}
