#!/bin/sh
# The large-value threshold: for each value size, about 1 GB of random puts
# (fillrandom), as many overwrites, then 100,000 random gets, with values kept
# in blob files (blob_threshold = the value size) and in the tree
# (blob_threshold = 2^40), under a 2 GiB cap with a 256 MiB budget. Alone on
# the machine.
# Run from the repository root after `cargo build --release --example dbbench`.
set -e
out=bench/results/2026-11-24a/sweep_blob.txt
db=${DB:-/tmp/lamina-sweep-blob}
for v in 1024 4096 16384; do
    num=$((1000000000 / v))
    for t in $v 1099511627776; do
        r=$(../shared/tools/memlimit 2G target/release/examples/dbbench --num $num --reads 100000 \
            --value_size $v --blob_threshold $t --memory_budget 268435456 \
            --benchmarks fillrandom,overwrite,readrandom --db $db | tr '\n' ' ')
        size=$(du -sb $db | cut -f1)
        echo "value=$v threshold=$t $r size=$size" | tee -a $out
    done
done
rm -rf $db
