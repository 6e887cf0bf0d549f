#!/usr/bin/env bash
# After the per-thread memo of each table's last block and the memtable
# hash index's per-shard key ranges: seed 001 at n = 1,000,000 beside LMDB
# and dbm.gnu, twice, alone on the machine; then the large-value
# configuration beside LMDB.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24f
PY=.venv/bin/python
make -s py-build
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG
$PY bench/dbm_bench.py -n 1000000 -d lamina -d lmdb -d gdbm > $R/dbm_1m.txt 2>&1
$PY bench/dbm_bench.py -n 1000000 -d lamina -d lmdb -d gdbm > $R/dbm_1m_2.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py --large -d lamina -d lmdb > $R/dbm_large.txt 2>&1
echo "large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
