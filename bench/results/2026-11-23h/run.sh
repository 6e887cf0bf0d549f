#!/usr/bin/env bash
# Seed 000 at full size through the gdbmtool-language pipe (issue 15), main
# after the memtable skip list and large values at commit: 125,000,000
# records, a progress line every second, twice, alone on the machine;
# level-1 tables cut at a quarter of target_table_size.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-23h
cargo build --release -p lamina-cli -q
for run in 1 2; do
  rm -rf /tmp/numbers.lamina
  echo "run $run start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
  /usr/bin/time -v sh -c 'target/release/lamina gen numbers 124999999 | target/release/lamina shell --newdb --progress --progress-interval 1 /tmp/numbers.lamina' 2> $R/load_$run.log
  du -sb /tmp/numbers.lamina >> $R/load_$run.log
  .venv/bin/python bench/progress_curve.py $R/load_$run.log --csv $R/load125_$run.csv --png $R/load125_$run.png > $R/curve_$run.txt 2>&1
done
rm -rf /tmp/numbers.lamina
