#!/usr/bin/env bash
# Seed 001 from Python after blob values are checksummed by the crc32
# instruction on CPUs without 512-bit carry-less multiplication, blob values
# read more than once are kept in memory as verified, and WAL segments have
# their write-back started every 4 MiB: every peer, one after the other,
# alone on the machine; the large values twice, then n = 1,000,000 once.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24n
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
rm -f .venv/.lamina-built
make -s py-build
grep -m1 "model name" /proc/cpuinfo > $R/LOG
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py -n 1000 -s 100000 $PEERS > $R/dbm_large.txt 2>&1
echo "large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py -n 1000 -s 100000 $PEERS > $R/dbm_large_2.txt 2>&1
echo "large (2) done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py -n 1000000 $PEERS > $R/dbm_1m.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
