#!/usr/bin/env bash
# Large values at engine level at the end of 2026-11-28, lamina then RocksDB's db_bench with blob
# files, one run each, alone on the machine: 5x10^4 random puts of 64 KiB values, as many
# overwrites, 5x10^4 random gets (the workload of bench/results/2026-11-25/engine_large.sh);
# bytes written to the disk ("File system outputs", 512-byte units) and the size on disk after.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-28
cargo build -q --release -p lamina --example dbbench
rm -rf /tmp/lam-db /tmp/rdb-db
/usr/bin/time -v target/release/examples/dbbench --num 50000 --reads 50000 --value_size 65536 \
  --benchmarks fillrandom,overwrite,readrandom,flush --db /tmp/lam-db 2>&1 \
  | grep -E "fillrandom|overwrite|readrandom|found|amplification|File system outputs|Elapsed" > $R/engine_large.txt
du -sb /tmp/lam-db >> $R/engine_large.txt
/usr/bin/time -v db_bench --benchmarks=fillrandom,overwrite,readrandom --num=50000 --reads=50000 \
  --key_size=16 --value_size=65536 --db=/tmp/rdb-db --compression_type=lz4 --enable_blob_files=true \
  2>&1 | grep -E "^fillrandom|^overwrite|^readrandom|File system outputs|Elapsed" > $R/db_bench_large.txt
du -sb /tmp/rdb-db >> $R/db_bench_large.txt
rm -rf /tmp/lam-db /tmp/rdb-db
