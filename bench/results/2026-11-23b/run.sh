#!/usr/bin/env bash
# The benchmarks of this round, one after the other, alone on the machine.
set -u
cd /work/main
R=bench/results/2026-11-23b
PY=.venv/bin/python
PEERS="-d lamina -d gdbm -d bdb_hash -d bdb_btree -d lmdb -d rocksdb -d leveldb -d semidbm"
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/LOG
$PY bench/dbm_bench.py -n 300000 $PEERS --csv $R/dbm.csv --png $R/dbm_300k.png > $R/dbm_300k.txt 2>&1
echo "dbm 300k done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py --large $PEERS --csv $R/dbm.csv --png $R/dbm_large.png > $R/dbm_large.txt 2>&1
echo "dbm large done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
$PY bench/dbm_bench.py -n 1000000 $PEERS --csv $R/dbm.csv --png $R/dbm_1m.png > $R/dbm_1m.txt 2>&1
echo "dbm 1m done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
rm -rf /tmp/lam-db /tmp/rdb-db
bench/results/2026-11-23b/io_of.sh lamina target/release/examples/dbbench --num 10000000 --reads 1000000 --benchmarks fillrandom,readrandom --db /tmp/lam-db > $R/dbbench_small.txt 2>&1
du -sb /tmp/lam-db >> $R/dbbench_small.txt; rm -rf /tmp/lam-db
bench/results/2026-11-23b/io_of.sh rocksdb db_bench --benchmarks=fillrandom,readrandom --num=10000000 --reads=1000000 --key_size=16 --value_size=100 --db=/tmp/rdb-db --compression_type=lz4 > $R/db_bench_small.txt 2>&1
du -sb /tmp/rdb-db >> $R/db_bench_small.txt; rm -rf /tmp/rdb-db
echo "dbbench small done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
bench/results/2026-11-23b/io_of.sh "lamina" target/release/examples/dbbench --num 50000 --reads 50000 --value_size 65536 --benchmarks fillrandom,overwrite,readrandom,flush --db /tmp/lam-db > $R/dbbench_large.txt 2>&1
du -sb /tmp/lam-db >> $R/dbbench_large.txt; ls -la /tmp/lam-db | tail -5 >> $R/dbbench_large.txt; rm -rf /tmp/lam-db
bench/results/2026-11-23b/io_of.sh "rocksdb" db_bench --benchmarks=fillrandom,overwrite,readrandom --num=50000 --reads=50000 --key_size=16 --value_size=65536 --db=/tmp/rdb-db --compression_type=lz4 --enable_blob_files=true > $R/db_bench_large.txt 2>&1
du -sb /tmp/rdb-db >> $R/db_bench_large.txt; rm -rf /tmp/rdb-db
echo "large values done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
target/release/lamina bench commit -q --seconds 2 --csv $R/commit.csv > $R/commit_rust.txt 2>&1
$PY bench/commit_threads.py --threads 1,2,4,8,16,32 --seconds 2 --csv $R/commit_py.csv > $R/commit_py.txt 2>&1
# testfile again, right after lamina's commits (the disk's fsync rate moves within minutes).
target/release/lamina bench commit -q --threads 1 --seconds 1 > $R/commit_testfile_after.txt 2>&1
echo "commit done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG
echo "end $(date -u +%H:%M:%S)" >> $R/LOG
