#!/usr/bin/env bash
# Where a 16-thread durable-commit cycle goes: timers in the syncer
# (syncer_timers.patch, applied for this run only), printed when each
# thread count's database closes. Run alone on the machine.
set -euo pipefail
cd "$(dirname "$0")/../../.."
git apply bench/results/2026-11-24l/syncer_timers.patch
trap 'git apply -R bench/results/2026-11-24l/syncer_timers.patch' EXIT
cargo build --release -p lamina-cli
for t in 1 16; do
  target/release/lamina bench commit -q --seconds 2 --threads "$t"
done
