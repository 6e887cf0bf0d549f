#!/bin/bash
# /tmp/BUILD.so of each build copied into python/lamina in turn; main = e9a4c3b^ (256 KiB chunks), huge = e9a4c3b
# abfull.sh N ARGS BUILD...: runs dbm_bench.py ARGS -d lamina N times per build, alternating
N=$1; shift; ARGS=$1; shift
for r in $(seq $N); do for b in "$@"; do cp /tmp/$b.so /work/main/python/lamina/_lamina.abi3.so; /work/main/.venv/bin/python /work/main/bench/dbm_bench.py $ARGS -d lamina --json /tmp/abfull_$b_$r.json 2>&1 | grep -E "^(fill|read|delete)" | awk -v b=$b '{printf "%s %s %s\n", b, $1, $2}'; done; done
