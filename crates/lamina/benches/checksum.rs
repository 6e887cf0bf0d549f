//! The crc32c of a 100 KB blob value two ways — the `crc32` instruction
//! (crate `crc32c`) and folding by carry-less multiplication
//! (`crc_fold`) — with the value in the CPU's cache and spread over 100 MB
//! of memory; a copy of it, for scale; and what a read of a blob value
//! does: verify then copy (two passes) against the two fused in one.
//!
//! Run with `cargo bench -p lamina --bench checksum`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use lamina::crc_fold;
use rand::{rngs::StdRng, RngCore, SeedableRng};

const VALUE: usize = 100_000;
const SPREAD: usize = 100 << 20;

fn bytes(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    StdRng::seed_from_u64(1).fill_bytes(&mut v);
    v
}

fn checksum(c: &mut Criterion) {
    let spread = bytes(SPREAD);
    let values = SPREAD / VALUE;
    let mut g = c.benchmark_group("crc32c_100k");
    g.throughput(Throughput::Bytes(VALUE as u64));
    for (place, count) in [("cached", 1), ("spread", values)] {
        let mut i = 0;
        let mut next = move || {
            i = (i + 1) % count;
            i * VALUE
        };
        g.bench_function(format!("crc32_instruction/{place}"), |b| {
            b.iter(|| {
                let at = next();
                black_box(crc32c::crc32c(&spread[at..at + VALUE]))
            })
        });
        g.bench_function(format!("fold/{place}"), |b| {
            b.iter(|| {
                let at = next();
                black_box(crc_fold::crc32c_append(0, &spread[at..at + VALUE]))
            })
        });
        let mut out = vec![0u8; VALUE];
        g.bench_function(format!("copy/{place}"), |b| {
            b.iter(|| {
                let at = next();
                out.copy_from_slice(&spread[at..at + VALUE]);
                black_box(&out);
            })
        });
        g.bench_function(format!("verify_then_copy/{place}"), |b| {
            b.iter(|| {
                let at = next();
                let value = &spread[at..at + VALUE];
                black_box(crc32c::crc32c(value));
                out.copy_from_slice(value);
                black_box(&out);
            })
        });
        g.bench_function(format!("fold_and_copy/{place}"), |b| {
            b.iter(|| {
                let at = next();
                black_box(crc_fold::crc32c_append_copy(
                    0,
                    &spread[at..at + VALUE],
                    &mut out,
                ));
                black_box(&out);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, checksum);
criterion_main!(benches);
