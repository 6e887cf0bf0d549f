#!/usr/bin/env bash
# Seed 000 at full size through the gdbmtool-language pipe, with the level
# sizes chosen (growth factor 4) and with the factor forced to 10 (the
# default before), alternating, twice each, alone on the machine.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24a
for run in 1 2; do
  for setting in chosen level_multiplier=10; do
    if [ $setting = chosen ]; then opt=""; else opt="--option $setting"; fi
    rm -rf /tmp/numbers.lamina
    log=$R/load_${setting}_$run.log
    echo "$setting run $run start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
    /usr/bin/time -v sh -c "target/release/lamina gen numbers 124999999 | target/release/lamina $opt shell --newdb --progress --progress-interval 1 /tmp/numbers.lamina" 2> $log
    du -sb /tmp/numbers.lamina >> $log
    .venv/bin/python bench/progress_curve.py $log > $R/curve_${setting}_$run.txt 2>&1
  done
done
rm -rf /tmp/numbers.lamina
