#!/usr/bin/env bash
# Seed 001 from Python after the data blocks' hash index went to 5 buckets
# a key, data blocks keep numbers for their restart keys, and a batch of one
# is inserted without being decoded again: every peer, one after the other,
# alone on the machine, n = 1,000,000 twice, then n = 300,000 once.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24m
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
make -s py-build
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG
$PY bench/dbm_bench.py -n 1000000 $PEERS --png $R/dbm_1m.png > $R/dbm_1m.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py -n 1000000 $PEERS > $R/dbm_1m_2.txt 2>&1
echo "dbm 1m (2) done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py -n 300000 $PEERS --png $R/dbm_300k.png > $R/dbm_300k.txt 2>&1
echo "dbm 300k done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
