//! Random inserts into one memtable, timed: 400,000 entries of 16-byte
//! pseudo-random keys and 100-byte values into a fresh 64 MiB memtable,
//! three rounds, nanoseconds per insert printed for each. The first round
//! also pays for the arena's first page faults.
//!
//!     cargo run --release -p lamina --example memtable_inserts

use lamina::key::Kind;
use lamina::memtable::{Inserters, Memtable};
use std::time::Instant;
fn main() {
    let n = 400_000u64;
    let value = vec![b'v'; 100];
    let mut x = 0x9e3779b97f4a7c15u64;
    let keys: Vec<[u8; 16]> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&x.to_be_bytes());
            k[8..].copy_from_slice(&x.rotate_left(17).to_be_bytes());
            k
        })
        .collect();
    let mut out = Vec::new();
    for _ in 0..3 {
        let mem = Memtable::new(1, 64 << 20);
        let t = Instant::now();
        for (i, k) in keys.iter().enumerate() {
            mem.insert_user(0, k, i as u64 + 1, Kind::Put, &value, Inserters::Many);
        }
        out.push(format!("{:.0}", t.elapsed().as_nanos() as f64 / n as f64));
    }
    println!("ns/insert {}", out.join(" "));
}
