#!/bin/bash
# abdb.sh PASSES ROUNDS READER W1 W2: dbs written by builds W1 and W2, both read by READER, alternately
P=$1; R=$2; RD=$3; W1=$4; W2=$5
D=$(mktemp -d)
MAKE=1 LAMINA_PY=/tmp/ab_$W1 /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/rr.py $D/$W1 0
MAKE=1 LAMINA_PY=/tmp/ab_$W2 /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/rr.py $D/$W2 0
du -s $D/$W1 $D/$W2
for i in $(seq $P); do for s in $W1 $W2 $W2 $W1; do echo "$s $(LAMINA_PY=/tmp/ab_$RD taskset -c 1 /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/rr.py $D/$s $R)"; done; done
rm -rf $D
