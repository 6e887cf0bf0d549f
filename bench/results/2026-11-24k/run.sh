#!/usr/bin/env bash
# Seed 001 from Python after the blob reads verify before they copy and the
# index search's numbers skip the bytes a table's keys share: every peer,
# one after the other, alone on the machine, the large values twice, then
# n = 1,000,000 once.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24k
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
make -s py-build
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG
$PY bench/dbm_bench.py --large $PEERS --png $R/dbm_large.png > $R/dbm_large.txt 2>&1
$PY bench/dbm_bench.py --large $PEERS > $R/dbm_large_2.txt 2>&1
echo "dbm large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py -n 1000000 $PEERS --png $R/dbm_1m.png > $R/dbm_1m.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
