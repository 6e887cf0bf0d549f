#!/bin/bash
# abrr.sh PASSES ROUNDS V1 V2 ...: one db made by V1, then V1..Vn Vn..V1 per pass, each run ROUNDS reads of it
P=$1; R=$2; shift 2; V="$@"; RV=$(echo $V | tr ' ' '\n' | tac | tr '\n' ' ')
D=$(mktemp -d); MAKE=1 LAMINA_PY=/tmp/ab_$1 /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/rr.py $D/db 0
for i in $(seq $P); do for b in $V $RV; do echo "$b $(LAMINA_PY=/tmp/ab_$b taskset -c 1 /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/rr.py $D/db $R)"; done; done
rm -rf $D
