//! Micro-benchmarks of the engine above the table layer: memtable inserts and
//! lookups, and whole-database point operations: puts with each durability,
//! gets (in the memtable, and from tables through the block cache, copied
//! or lent to a closure), contains, and gets of missing keys; and a hot
//! 100 KB value in a blob file beside what bounds it: one copy of its bytes
//! and one CRC32C of them (every blob read verifies its checksum).
//!
//! For repeatable numbers on a busy machine, count instructions instead:
//! `examples/pointops.rs` under callgrind.
//!
//! Run with `cargo bench -p lamina --bench engine`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use lamina::crc_fold;
use lamina::key::{self, Kind};
use lamina::memtable::{Inserters, Memtable};
use lamina::{Batch, Db, Durability, Options};

fn user_key(i: u64) -> Vec<u8> {
    // Spread keys over the space the way random inserts do.
    format!(
        "{:016}",
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 10_000_000_000_000_000
    )
    .into_bytes()
}

fn memtable(c: &mut Criterion) {
    let mut g = c.benchmark_group("memtable");
    g.throughput(Throughput::Elements(1));
    let value = vec![b'v'; 100];
    g.bench_function("insert 16B key 100B value", |b| {
        let mem = Memtable::new(1, 64 << 20);
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            mem.insert_user(0, &user_key(i), i, Kind::Put, &value, Inserters::Many);
        })
    });
    let mem = Memtable::new(1, 64 << 20);
    for i in 0..200_000u64 {
        mem.insert_user(0, &user_key(i), i + 1, Kind::Put, &value, Inserters::Many);
    }
    g.bench_function("lookup in 200k entries", |b| {
        let mut i = 0u64;
        let mut out = Vec::new();
        b.iter(|| {
            i = (i + 7919) % 200_000;
            let tk = key::tree_key(0, &user_key(i));
            out.clear();
            black_box(mem.collect_entries(&tk, &key::seek_key(&tk), &mut out));
        })
    });
    g.finish();
}

fn database(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), Options::default()).unwrap();
    let value = vec![b'v'; 100];
    let mut g = c.benchmark_group("db");
    g.throughput(Throughput::Elements(1));
    let mut i = 0u64;
    g.bench_function("put (Durability::None)", |b| {
        b.iter(|| {
            i += 1;
            let mut batch = Batch::new();
            batch.put(&user_key(i), &value);
            db.write_with(batch, Durability::None).unwrap();
        })
    });
    g.bench_function("put (Durability::Os)", |b| {
        b.iter(|| {
            i += 1;
            db.put(&user_key(i), &value).unwrap();
        })
    });
    let written = i;
    g.bench_function("get from memtable", |b| {
        let mut j = 0u64;
        b.iter(|| {
            j = j % written + 1;
            black_box(db.get(&user_key(j)).unwrap());
        })
    });
    db.flush().unwrap();
    g.bench_function("get from tables (cached)", |b| {
        let mut j = 0u64;
        b.iter(|| {
            j = j % written + 1;
            black_box(db.get(&user_key(j)).unwrap());
        })
    });
    g.bench_function("get_with of a cached key (no copy)", |b| {
        let mut j = 0u64;
        b.iter(|| {
            j = j % written + 1;
            black_box(db.get_with(&user_key(j), |v| v.len()).unwrap());
        })
    });
    g.bench_function("contains of a cached key", |b| {
        let mut j = 0u64;
        b.iter(|| {
            j = j % written + 1;
            black_box(db.contains_key(&user_key(j)).unwrap());
        })
    });
    g.bench_function("get of a missing key (bloom)", |b| {
        let mut j = 0u64;
        b.iter(|| {
            j += 1;
            black_box(db.get(format!("missing{j:09}").as_bytes()).unwrap());
        })
    });
    g.finish();
}

/// Ten hot values of 100,000 bytes in blob files (the dbm benchmark's large
/// configuration read hot), and the two things a read does to a value not
/// kept in memory, each alone: the copy into the caller's buffer and the
/// checksum (a read does both in one pass over the bytes).
fn large_values(c: &mut Criterion) {
    const LEN: usize = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), Options::default()).unwrap();
    let values: Vec<Vec<u8>> = (0..10u8)
        .map(|i| (0..LEN).map(|j| (j as u8).wrapping_mul(31) ^ i).collect())
        .collect();
    for (i, v) in values.iter().enumerate() {
        db.put(&user_key(i as u64), v).unwrap();
    }
    db.flush().unwrap();
    let mut g = c.benchmark_group("large value (100 KB, hot)");
    g.throughput(Throughput::Bytes(LEN as u64));
    let mut out = vec![0u8; LEN];
    let mut j = 0usize;
    g.bench_function("get", |b| {
        b.iter(|| {
            j = (j + 1) % values.len();
            black_box(db.get(&user_key(j as u64)).unwrap());
        })
    });
    g.bench_function("copy only", |b| {
        b.iter(|| {
            j = (j + 1) % values.len();
            out.copy_from_slice(&values[j]);
            black_box(&out);
        })
    });
    g.bench_function("crc32c only (folding)", |b| {
        b.iter(|| {
            j = (j + 1) % values.len();
            black_box(crc_fold::crc32c_append(0, &values[j]));
        })
    });
    g.finish();
}

criterion_group!(benches, memtable, database, large_values);
criterion_main!(benches);
