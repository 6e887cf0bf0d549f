#!/usr/bin/env bash
# The engine beside RocksDB's db_bench on 2026-11-29, alone on the machine (bench/db_bench_pair.sh).
exec "$(dirname "$0")/../../db_bench_pair.sh" bench/results/2026-11-29
