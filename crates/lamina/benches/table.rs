//! Micro-benchmarks of the table layer: building and seeking a block, the
//! bloom filter, and point lookups in a table through the block cache.
//!
//! Run with `cargo bench -p lamina --bench table`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lamina::cache::BlockCache;
use lamina::fs::{FileSystem, RealFs};
use lamina::iter::InternalIterator;
use lamina::key;
use lamina::table::{
    Block, BlockBuilder, BlockedBloom, BloomBuilder, Table, TableBuilder, TableOptions,
};
use std::path::Path;
use std::sync::Arc;

/// Internal keys of 16-byte user keys, one version each, with 100-byte values.
fn entries(n: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let tk = key::tree_key(0, format!("user{:012}", i * 7).as_bytes());
            (key::internal_key(&tk, 1000 + i, 1), vec![b'v'; 100])
        })
        .collect()
}

/// Entries filling about one 16 KiB block.
fn block_entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    entries(128)
}

fn build_block(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut b = BlockBuilder::new(16);
    for (k, v) in entries {
        b.add(k, v);
    }
    b.finish().to_vec()
}

fn block(c: &mut Criterion) {
    let entries = block_entries();
    let mut g = c.benchmark_group("block");
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.bench_function("build_16k", |b| b.iter(|| black_box(build_block(&entries))));
    let data = build_block(&entries);
    let block = Arc::new(Block::new(data, Arc::from(Path::new("bench.sst")), 0).unwrap());
    g.throughput(Throughput::Elements(1));
    let mut i = 0usize;
    g.bench_function("seek", |b| {
        let mut it = block.iter();
        b.iter(|| {
            i = (i + 37) % entries.len();
            it.seek(&entries[i].0);
            black_box(it.valid());
        })
    });
    g.bench_function("prev", |b| {
        let mut it = block.iter();
        b.iter(|| {
            if !it.valid() {
                it.seek_to_last();
            }
            it.prev();
            black_box(it.valid());
        })
    });
    g.finish();
}

fn bloom(c: &mut Criterion) {
    let keys: Vec<Vec<u8>> = (0..100_000u32)
        .map(|i| key::tree_key(0, &i.to_be_bytes()))
        .collect();
    let mut g = c.benchmark_group("bloom");
    g.throughput(Throughput::Elements(keys.len() as u64));
    g.bench_function("build_100k", |b| {
        b.iter(|| {
            let mut bb = BloomBuilder::new();
            for k in &keys {
                bb.add(k);
            }
            black_box(bb.build(10))
        })
    });
    let mut bb = BloomBuilder::new();
    keys.iter().for_each(|k| bb.add(k));
    let filter = BlockedBloom::new(&bb.build(10)).unwrap();
    g.throughput(Throughput::Elements(1));
    let mut i = 0u32;
    g.bench_function("may_contain", |b| {
        b.iter(|| {
            i = i.wrapping_add(7919);
            let h = lamina::table::key_hash(&key::tree_key(0, &i.to_be_bytes()));
            black_box(filter.may_contain_hash(h))
        })
    });
    g.finish();
}

fn table(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000001.sst");
    let entries = entries(20_000);
    let write = |path: &Path| {
        let file = RealFs.create(path).unwrap();
        let mut b = TableBuilder::new(file, path.to_path_buf(), TableOptions::default());
        for (k, v) in &entries {
            b.add(k, v).unwrap();
        }
        b.finish().unwrap()
    };
    let mut g = c.benchmark_group("table");
    g.sample_size(10);
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.bench_function("build_20k", |b| {
        b.iter_batched(|| (), |()| write(&path), BatchSize::PerIteration)
    });
    write(&path);
    let cache = Arc::new(BlockCache::new(64 << 20));
    let file = RealFs.open(&path).unwrap();
    let t = Arc::new(Table::open(file, path.clone(), 1, cache).unwrap());
    g.sample_size(100);
    g.throughput(Throughput::Elements(1));
    let mut i = 0usize;
    g.bench_function("get_cached", |b| {
        b.iter(|| {
            i = (i + 7919) % entries.len();
            black_box(t.get(&entries[i].0).unwrap())
        })
    });
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.bench_function("scan_cached", |b| {
        b.iter(|| {
            let mut it = t.iter();
            it.seek_to_first();
            let mut n = 0;
            while it.valid() {
                n += it.value().len();
                it.next();
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, block, bloom, table);
criterion_main!(benches);
