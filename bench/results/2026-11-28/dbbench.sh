#!/usr/bin/env bash
# The engine beside RocksDB's db_bench at the end of 2026-11-28 (10^7
# random puts of 100-byte values, then 10^6 random gets), alone on the
# machine, one run each, lamina then RocksDB.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-28
cargo build -q --release -p lamina --example dbbench
echo "dbbench start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
bench/results/2026-11-23b/io_of.sh lamina target/release/examples/dbbench --num 10000000 --reads 1000000 --benchmarks fillrandom,readrandom --db /tmp/lam-db > $R/dbbench_small.txt 2>&1
du -sb /tmp/lam-db >> $R/dbbench_small.txt; rm -rf /tmp/lam-db
bench/results/2026-11-23b/io_of.sh rocksdb db_bench --benchmarks=fillrandom,readrandom --num=10000000 --reads=1000000 --key_size=16 --value_size=100 --db=/tmp/rdb-db --compression_type=lz4 > $R/db_bench_small.txt 2>&1
du -sb /tmp/rdb-db >> $R/db_bench_small.txt; rm -rf /tmp/rdb-db
echo "dbbench small done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
