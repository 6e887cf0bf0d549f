//! A driver for instruction counts of point operations under callgrind:
//! it loads a database, then runs one kind of point operation in a loop
//! inside `measured`, so `--toggle-collect` counts only that loop.
//!
//! valgrind --tool=callgrind --toggle-collect='*measured*' \
//!     target/release/examples/pointops get-table 100000
//!
//! Operations: `get-mem` (keys in the memtable), `get-table` (keys in tables,
//! blocks cached), `get-cold` (keys in tables, each read once, no block
//! cached before: at most 20,000 operations), `get-missing`, `contains`,
//! `contains-mem`, `put` (default durability; the same 20,000 keys over
//! and over), `put-seq` (N new keys in ascending order, `%016d`, as the
//! dbm benchmark's fill_sequential), `delete` (keys in the
//! memtable, default durability), `delete-existing` (`Db::delete_existing`
//! of keys in the memtable: at most 20,000 operations, each deletes).

use lamina::{Db, Options};
use std::hint::black_box;

/// Keys loaded before reads.
const KEYS: u64 = 20_000;

fn user_key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    let v = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 10_000_000_000_000_000;
    k.copy_from_slice(format!("{v:016}").as_bytes());
    k
}

#[inline(never)]
fn measured(db: &Db, op: &str, keys: &[[u8; 16]], n: usize) -> usize {
    let value = [b'v'; 100];
    let mut found = 0usize;
    for k in keys.iter().cycle().take(n) {
        match op {
            "get-mem" | "get-table" | "get-cold" | "get-missing" => {
                found += usize::from(db.get(k).expect("get").is_some());
            }
            "contains" | "contains-mem" => {
                found += usize::from(db.contains_key(k).expect("contains"))
            }
            "put" | "put-seq" => db.put(k, &value).expect("put"),
            "delete" => db.delete(k).expect("delete"),
            "delete-existing" => {
                found += usize::from(db.delete_existing(k).expect("delete_existing"))
            }
            _ => {}
        }
    }
    found
}

fn main() {
    let mut args = std::env::args().skip(1);
    let op = args.next().unwrap_or_else(|| "get-table".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), Options::default()).expect("open");
    let value = [b'v'; 100];
    let mut keys: Vec<[u8; 16]> = (0..KEYS).map(user_key).collect();
    if op == "put-seq" {
        keys = (0..n as u64)
            .map(|i| {
                let mut k = [0u8; 16];
                k.copy_from_slice(format!("{i:016}").as_bytes());
                k
            })
            .collect();
    } else if op != "put" {
        for k in &keys {
            db.put(k, &value).expect("load");
        }
        if !matches!(
            op.as_str(),
            "get-mem" | "contains-mem" | "delete" | "delete-existing"
        ) {
            db.flush().expect("flush");
        }
    }
    let mut n = n;
    if op == "get-missing" {
        keys = (KEYS..2 * KEYS).map(user_key).collect();
    } else if matches!(op.as_str(), "get-cold" | "delete-existing" | "put-seq") {
        // Each key once: no row is cached, no key is deleted or put twice.
        n = n.min(keys.len());
    } else {
        // Warm the block cache (outside `measured`).
        for k in &keys {
            black_box(db.get(k).expect("warm"));
        }
    }
    let found = black_box(measured(&db, &op, &keys, n));
    println!("{op} {n}: {found} found");
    db.close().expect("close");
}
