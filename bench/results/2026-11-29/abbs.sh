#!/bin/bash
# abbs.sh PASSES ROUNDS BUILD BS1 BS2: two dbs (block sizes BS1, BS2) made by BUILD, read alternately
P=$1; R=$2; B=$3; S1=$4; S2=$5
D=$(mktemp -d)
BS=$S1 MAKE=1 LAMINA_PY=/tmp/ab_$B /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/rr.py $D/db$S1 0
BS=$S2 MAKE=1 LAMINA_PY=/tmp/ab_$B /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/rr.py $D/db$S2 0
du -s $D/db$S1 $D/db$S2
for i in $(seq $P); do for s in $S1 $S2 $S2 $S1; do echo "$s $(LAMINA_PY=/tmp/ab_$B taskset -c 1 /work/main/.venv/bin/python /work/main/bench/results/2026-11-29/rr.py $D/db$s $R)"; done; done
rm -rf $D
