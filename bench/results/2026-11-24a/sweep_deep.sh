#!/bin/sh
# A deep tree in two minutes: seed 002 db-update, 40 M upserts under a 512 MiB
# cap with a 256 MiB budget, with memtables of 4 MiB and level 1 of 16 MiB, so
# the ~660 MB the run writes spans as many levels above level 1 (660 / 16)
# as the 10^9 run's 14 GB do above a 256 MiB level 1 (14,300 / 256): the
# level multiplier is what differs between runs. Alone on the machine.
# Run from the repository root after `cargo build --release -p lamina-cli`.
set -e
out=bench/results/2026-11-24a/sweep_deep.txt
for round in 1 2; do
for m in 10 4 6 8 16; do
    r=$(../shared/tools/memlimit 512M target/release/lamina \
        --option memtable_size=4M --option level_base_size=16M --option level_multiplier=$m \
        bench update -q --ops 40000000 --memory-budget 256M | grep -E '^(total|files)' | tr '\n' ' ')
    echo "level_multiplier=$m $r" | tee -a $out
done
done
