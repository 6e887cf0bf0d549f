#!/usr/bin/env bash
# Large values after blob files written at commit run ahead of their records
# in zero-filled 256 KiB steps (76b5fa4): seed 001's second configuration
# beside every peer twice, alone on the machine, then first and second reads
# after a reopen by memtable size.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24c
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
make -s py-build
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG
$PY bench/dbm_bench.py --large $PEERS --png $R/dbm_large.png > $R/dbm_large.txt 2>&1
echo "dbm large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py --large $PEERS > $R/dbm_large_2.txt 2>&1
echo "dbm large again done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/cold_blob_reads.py --rounds 2 > $R/cold_blob_reads.txt 2>&1
echo "cold reads done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
