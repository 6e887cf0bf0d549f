#!/bin/bash
# ab.sh WHAT N ROUNDS DIR1 DIR2 : alternate builds, one process each run
WHAT=$1 N=$2 R=$3 A=$4 B=$5
for i in $(seq $R); do
  for d in $A $B; do
    echo -n "$(basename $d) "; LAMINA_PY=$d taskset -c 1 "$(dirname "$0")/../../../.venv/bin/python" "$(dirname "$0")/phase.py" $WHAT $N 1
  done
done
