#!/bin/sh
# Seed 002 db-update, 100 M upserts under a 512 MiB cap with a 256 MiB
# budget (a tree of about 1.6 GB: level 1 and a partial level 2 with a
# growth factor of 10, three levels with 4), the factor chosen (4) and
# forced to 10, alternating, twice each, alone on the machine.
set -e
out=bench/results/2026-11-24a/ab_100m.txt
for round in 1 2; do
  for m in 4 10; do
    r=$(../shared/tools/memlimit 512M target/release/lamina --option level_multiplier=$m \
        bench update -q --ops 100000000 --memory-budget 256M \
        --csv bench/results/2026-11-24a/ab_100m_f${m}_$round.csv | grep -E '^(total|files)' | tr '\n' ' ')
    echo "level_multiplier=$m round $round $r" | tee -a $out
  done
done
