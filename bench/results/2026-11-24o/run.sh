#!/bin/sh
# Run from the repository root, alone on the machine, after
# `cargo build --release` and `make py-build`.
set -e
D=bench/results/2026-11-24o
(grep "model name" /proc/cpuinfo | head -1; uname -r; uptime) > $D/LOG
# Seed 004 from Rust, one and sixteen threads in turn.
target/release/lamina bench commit -q --seconds 1.5 --threads 1,16,1,16 > $D/commit.txt 2>&1
# A context switch on this machine: a round trip through a pipe across the
# two CPUs, then on one.
perf bench sched pipe -l 100000 > $D/sched_pipe.txt 2>&1
taskset -c 0 perf bench sched pipe -l 100000 >> $D/sched_pipe.txt 2>&1
# Large fills before and after 3f2c429 (the module of each build copied
# into python/lamina/ in turn, three alternating pairs).
.venv/bin/python bench/large_fill.py -r 4 >> $D/try_put_large_fill.txt
.venv/bin/python bench/dbm_bench.py -n 1000 -s 100000 -d lamina -d lmdb >> $D/try_put_ab.txt
# A kept value copied with the interpreter lock held (a build not kept)
# against main, alternating, two pairs.
.venv/bin/python bench/blob_reads.py -r 5 >> $D/in_memory_blob_reads.txt
