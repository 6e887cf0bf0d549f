#!/usr/bin/env bash
# Seed 001 from Python with large values written to blob files at commit
# (main at 070e8d3), every peer, one after the other, alone on the machine:
# 1,000 values of 100,000 bytes, twice.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-23e
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG
$PY bench/dbm_bench.py --large $PEERS --png $R/dbm_large.png --csv $R/dbm_large.csv > $R/dbm_large.txt 2>&1
echo "dbm large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py --large $PEERS --csv $R/dbm_large_2.csv > $R/dbm_large_2.txt 2>&1
echo "dbm large again done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
