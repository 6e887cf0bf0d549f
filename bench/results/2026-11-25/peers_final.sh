#!/usr/bin/env bash
# Seed 001 from Python after blob values were checksummed and copied in one
# pass, kept values answered at once and large values read again handed out as
# the bytes object read before (main at 697671d and its review mends): every peer, one after
# the other, alone on the machine;
# n = 1,000,000, then n = 300,000, then the large values.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-25
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
rm -f .venv/.lamina-built
make -s py-build
grep -m1 "model name" /proc/cpuinfo > $R/LOG_final
git rev-parse --short HEAD >> $R/LOG_final
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG_final
$PY bench/dbm_bench.py -n 1000000 $PEERS > $R/dbm_1m_final.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG_final
$PY bench/dbm_bench.py -n 300000 $PEERS > $R/dbm_300k_final.txt 2>&1
echo "dbm 300k done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG_final
$PY bench/dbm_bench.py -n 1000 -s 100000 $PEERS > $R/dbm_large_final.txt 2>&1
echo "large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG_final
