#!/usr/bin/env bash
# The engine beside RocksDB's db_bench (10^7 random puts of 100-byte values, then 10^6 random
# gets), alone on the machine, one run each, lamina then RocksDB: the commands of
# bench/results/2026-11-25b/dbbench.sh, writing here.
set -u
cd "$(dirname "$0")/../../.."
sed 's#^R=bench/results/2026-11-25b#R=bench/results/2026-11-28#' bench/results/2026-11-25b/dbbench.sh | bash
