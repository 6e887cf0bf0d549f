#!/usr/bin/env bash
# After the skip list's insertion hint was removed (every insert searches
# from the top): seed 001 at n = 1,000,000 beside LMDB and dbm.gnu, twice,
# and the durable-commit bench at 1 and 16 threads, alone on the machine.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24e
PY=.venv/bin/python
make -s py-build
cargo build -q --release -p lamina-cli
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG
$PY bench/dbm_bench.py -n 1000000 -d lamina -d lmdb -d gdbm > $R/dbm_1m.txt 2>&1
$PY bench/dbm_bench.py -n 1000000 -d lamina -d lmdb -d gdbm > $R/dbm_1m_2.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
target/release/lamina bench commit -q --seconds 2 --threads 1,16 > $R/commit.txt 2>&1
target/release/lamina bench commit -q --seconds 2 --threads 1,16 >> $R/commit.txt 2>&1
echo "commit done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
