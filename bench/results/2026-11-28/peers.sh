#!/usr/bin/env bash
# Seed 001 from Python at main: every peer, one after
# the other, alone on the machine;
# n = 1,000,000, then n = 300,000, then the large values. An argument, if
# given, ends the names of the outputs (LOG_final, dbm_1m_final.txt, ...).
set -u
S=${1:-}
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-28
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
rm -f .venv/.lamina-built
make -s py-build
grep -m1 "model name" /proc/cpuinfo > $R/LOG$S
git rev-parse --short HEAD >> $R/LOG$S
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG$S
$PY bench/dbm_bench.py -n 1000000 $PEERS > $R/dbm_1m$S.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG$S
$PY bench/dbm_bench.py -n 300000 $PEERS > $R/dbm_300k$S.txt 2>&1
echo "dbm 300k done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG$S
$PY bench/dbm_bench.py -n 1000 -s 100000 $PEERS > $R/dbm_large$S.txt 2>&1
echo "large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG$S
