#!/usr/bin/env bash
# Seed 001 from Python at the end of the round (reads in order skip the row
# cache; the memtable index's key ranges by keyspace and user key): every
# peer, one after the other, alone on the machine, n = 1,000,000 twice,
# then n = 300,000 and the large values; then the engine beside RocksDB's
# db_bench (10^7 random puts of 100-byte values, then 10^6 random gets).
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-24j
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
make -s py-build
cargo build -q --release -p lamina --example dbbench
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG
$PY bench/dbm_bench.py -n 1000000 $PEERS --png $R/dbm_1m.png > $R/dbm_1m.txt 2>&1
$PY bench/dbm_bench.py -n 1000000 $PEERS > $R/dbm_1m_2.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py -n 300000 $PEERS --png $R/dbm_300k.png > $R/dbm_300k.txt 2>&1
echo "dbm 300k done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py --large $PEERS --png $R/dbm_large.png > $R/dbm_large.txt 2>&1
echo "dbm large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
bench/results/2026-11-23b/io_of.sh lamina target/release/examples/dbbench --num 10000000 --reads 1000000 --benchmarks fillrandom,readrandom --db /tmp/lam-db > $R/dbbench_small.txt 2>&1
du -sb /tmp/lam-db >> $R/dbbench_small.txt; rm -rf /tmp/lam-db
bench/results/2026-11-23b/io_of.sh rocksdb db_bench --benchmarks=fillrandom,readrandom --num=10000000 --reads=1000000 --key_size=16 --value_size=100 --db=/tmp/rdb-db --compression_type=lz4 > $R/db_bench_small.txt 2>&1
du -sb /tmp/rdb-db >> $R/db_bench_small.txt; rm -rf /tmp/rdb-db
echo "dbbench small done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
