#!/usr/bin/env bash
# Large values at engine level, before (dbbench-old, 707fe2e) and after
# (dbbench-new, 4317536) blob values were checksummed and copied in one pass:
# 5x10^4 random puts of 64 KiB values, as many overwrites, 5x10^4 random
# gets, two alternating pairs, then RocksDB's db_bench with blob files once,
# alone on the machine. Binaries: `cargo build --release -p lamina --example
# dbbench` at each commit, copied to /tmp. Run twice; the outputs are kept
# as engine_large_run1.txt, engine_large_run2.txt, db_bench_large_run1.txt
# and db_bench_large_run2.txt.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-25
for run in 1 2; do for b in old new; do
  rm -rf /tmp/lam-db
  echo "== $b run $run"
  /usr/bin/time -v /tmp/dbbench-$b --num 50000 --reads 50000 --value_size 65536 \
    --benchmarks fillrandom,overwrite,readrandom,flush --db /tmp/lam-db 2>&1 \
    | grep -E "fillrandom|overwrite|readrandom|File system outputs|Elapsed"
  du -sb /tmp/lam-db
done; done > $R/engine_large.txt 2>&1
rm -rf /tmp/rdb-db
/usr/bin/time -v db_bench --benchmarks=fillrandom,overwrite,readrandom --num=50000 --reads=50000 \
  --key_size=16 --value_size=65536 --db=/tmp/rdb-db --compression_type=lz4 --enable_blob_files=true \
  2>&1 | grep -E "^fillrandom|^overwrite|^readrandom|File system outputs|Elapsed" > $R/db_bench_large.txt
du -sb /tmp/rdb-db >> $R/db_bench_large.txt
rm -rf /tmp/lam-db /tmp/rdb-db
