#!/bin/bash
# ab3.sh WHAT N ROUNDS PASSES VARIANTS...
W=$1; N=$2; R=$3; P=$4; shift 4
for i in $(seq $P); do
 for b in "$@"; do
  echo "$b $(LAMINA_PY=/tmp/ab_$b taskset -c 1 /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/phase.py $W $N $R | awk '{print $3}' | tr '\n' ' ')"
 done
done
