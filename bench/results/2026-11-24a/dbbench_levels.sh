#!/bin/sh
# Engine fillrandom + readrandom at 10^7 keys with a 108 MiB budget (RocksDB
# db_bench's peak memory), lamina's level growth factor chosen (4) and forced
# to 10, alternating, twice each; then db_bench once. Alone on the machine.
set -e
R=bench/results/2026-11-24a
for round in 1 2; do
  for m in 4 10; do
    rm -rf /tmp/lam-db
    echo "== lamina level_multiplier=$m round $round" >> $R/dbbench_levels.txt
    target/release/examples/dbbench --num 10000000 --reads 1000000 \
      --benchmarks fillrandom,readrandom --memory_budget 113246208 \
      --level_multiplier $m --db /tmp/lam-db >> $R/dbbench_levels.txt
  done
done
rm -rf /tmp/lam-db /tmp/rdb-db
echo "== db_bench" >> $R/dbbench_levels.txt
db_bench --benchmarks=fillrandom,readrandom --num=10000000 --reads=1000000 --key_size=16 \
  --value_size=100 --db=/tmp/rdb-db --compression_type=lz4 2>&1 | grep -E "^(fillrandom|readrandom)" >> $R/dbbench_levels.txt
rm -rf /tmp/rdb-db
