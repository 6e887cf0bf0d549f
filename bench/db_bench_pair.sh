#!/usr/bin/env bash
# bench/db_bench_pair.sh DIR: the engine beside RocksDB's db_bench, one run each, lamina then
# RocksDB: 10^7 random puts of 16-byte keys and 100-byte values, then 10^6 random gets (lz4 for
# RocksDB), with the bytes each wrote. Writes DIR/dbbench_small.txt (lamina's `dbbench` example)
# and DIR/db_bench_small.txt, and appends start and end times to DIR/LOG.
set -u
R=${1:?usage: bench/db_bench_pair.sh DIR}
cd "$(dirname "$0")/.."
IO=bench/results/2026-11-23b/io_of.sh
cargo build -q --release -p lamina --example dbbench
echo "dbbench start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$R/LOG"
$IO lamina target/release/examples/dbbench --num 10000000 --reads 1000000 \
    --benchmarks fillrandom,readrandom --db /tmp/lam-db > "$R/dbbench_small.txt" 2>&1
du -sb /tmp/lam-db >> "$R/dbbench_small.txt"; rm -rf /tmp/lam-db
$IO rocksdb db_bench --benchmarks=fillrandom,readrandom --num=10000000 --reads=1000000 \
    --key_size=16 --value_size=100 --db=/tmp/rdb-db --compression_type=lz4 > "$R/db_bench_small.txt" 2>&1
du -sb /tmp/rdb-db >> "$R/db_bench_small.txt"; rm -rf /tmp/rdb-db
echo "dbbench small done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$R/LOG"
