#!/usr/bin/env bash
# Seed 002 db-update to 10^9 upserts under a 512 MiB memory cap with a
# 256 MiB budget (issue 15), level sizes chosen (growth factor 4), alone on the machine, stopped after 70 minutes at
# the latest; a CSV row every 10^6 ops, a line every 2x10^7.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24a
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG_1e9
../shared/tools/memlimit 512M target/release/lamina bench update -q --ops 1000000000 \
  --memory-budget 256M --max-seconds 4200 --report 1000000 --every 20000000 \
  --csv $R/update_1e9.csv > $R/update_1e9.txt 2>&1
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG_1e9
