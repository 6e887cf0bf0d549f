#!/usr/bin/env bash
# Large values beside RocksDB's BlobDB, engine level (main after large values
# are written to blob files at commit): 5x10^4 random puts of 64 KiB values,
# as many overwrites, 5x10^4 random gets; lamina then db_bench, twice, alone
# on the machine. Bytes written to the disk from /usr/bin/time's "File system
# outputs" (512-byte units); size on disk by du after each run.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-23f
cargo build --release -p lamina --example dbbench -q
for run in 1 2; do
  rm -rf /tmp/lam-db /tmp/rdb-db
  /usr/bin/time -v target/release/examples/dbbench --num 50000 --reads 50000 --value_size 65536 \
    --benchmarks fillrandom,overwrite,readrandom,flush --db /tmp/lam-db > $R/dbbench_large_$run.txt 2>&1
  du -sb /tmp/lam-db >> $R/dbbench_large_$run.txt
  /usr/bin/time -v db_bench --benchmarks=fillrandom,overwrite,readrandom --num=50000 --reads=50000 \
    --key_size=16 --value_size=65536 --db=/tmp/rdb-db --compression_type=lz4 --enable_blob_files=true \
    > $R/db_bench_large_$run.txt 2>&1
  du -sb /tmp/rdb-db >> $R/db_bench_large_$run.txt
done
rm -rf /tmp/lam-db /tmp/rdb-db
