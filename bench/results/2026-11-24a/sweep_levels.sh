#!/bin/sh
# Seed 002 db-update, 40 M upserts under a 512 MiB cap with a 256 MiB budget,
# with the level sizes forced to each setting in turn (default first), alone
# on the machine. One line per run in sweep_levels.txt: setting, then the
# bench's "total ops seconds rate" line and its files line.
# Run from the repository root after `cargo build --release -p lamina-cli`.
set -e
out=bench/results/2026-11-24a/sweep_levels.txt
for setting in default level_multiplier=4 level_multiplier=6 level_multiplier=8 \
    level_multiplier=16 level_base_size=64M level_base_size=128M level_base_size=512M; do
    if [ "$setting" = default ]; then opt=""; else opt="--option $setting"; fi
    r=$(../shared/tools/memlimit 512M target/release/lamina $opt bench update -q \
        --ops 40000000 --memory-budget 256M | grep -E '^(total|files)' | tr '\n' ' ')
    echo "$setting $r" | tee -a $out
done
