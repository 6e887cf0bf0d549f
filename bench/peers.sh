#!/usr/bin/env bash
# bench/peers.sh [DIR [SUFFIX]]: semidbm's dbm benchmark from Python with every peer, one after
# the other, at three sizes: n = 1,000,000, then n = 300,000 (16-byte keys, 100-byte values),
# then 1,000 values of 100,000 bytes; the module built in release mode first. Writes DIR/LOG<SUFFIX> (CPU, commit, times and load averages) and
# DIR/dbm_{1m,300k,large}<SUFFIX>.txt. DIR defaults to $BENCH_OUT/<date> ($BENCH_OUT defaults
# to target/bench-results, which git ignores). ROUNDS (default 5): how many times every module
# runs, in turn; each figure is the median (dbm_bench.py --rounds).
set -u
cd "$(dirname "$0")/.."
R=${1:-${BENCH_OUT:-target/bench-results}/$(date -u +%F)}
S=${2:-}
mkdir -p "$R"
PY=.venv/bin/python
ROUNDS=${ROUNDS:-5}
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
mark() { echo "$1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$R/LOG$S"; }
rm -f .venv/.lamina-built
make -s py-build
grep -m1 "model name" /proc/cpuinfo > "$R/LOG$S"
git rev-parse --short HEAD >> "$R/LOG$S"
mark start
$PY bench/dbm_bench.py --rounds "$ROUNDS" -n 1000000 $PEERS > "$R/dbm_1m$S.txt" 2>&1
mark "dbm 1m done"
$PY bench/dbm_bench.py --rounds "$ROUNDS" -n 300000 $PEERS > "$R/dbm_300k$S.txt" 2>&1
mark "dbm 300k done"
$PY bench/dbm_bench.py --rounds "$ROUNDS" -n 1000 -s 100000 $PEERS > "$R/dbm_large$S.txt" 2>&1
mark "large done"
echo "results in $R"
