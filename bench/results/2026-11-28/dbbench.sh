#!/usr/bin/env bash
# The engine beside RocksDB's db_bench at the end of 2026-11-28, alone on the machine
# (bench/db_bench_pair.sh).
exec "$(dirname "$0")/../../db_bench_pair.sh" bench/results/2026-11-28
