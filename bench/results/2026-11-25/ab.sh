#!/bin/bash
# ab.sh N SCRIPT ROUNDS BUILD...: runs SCRIPT (ROUNDS=ROUNDS in its
# environment) N times for each build of the Python module, alternating
# builds (each /tmp/BUILD.so copied into place before its run); prints
# each build's reads/s, run by run, and their median.
N=$1; shift; SCRIPT=$1; shift; ROUNDSV=$1; shift
declare -A res
for r in $(seq $N); do for b in "$@"; do cp /tmp/$b.so /work/main/python/lamina/_lamina.abi3.so; v=$(ROUNDS=$ROUNDSV /work/main/.venv/bin/python $SCRIPT 2>&1 | tail -1 | tr -d ', ' | sed 's/reads\/s//'); res[$b]="${res[$b]} $v"; done; done
for b in "$@"; do echo "$b: ${res[$b]}  median $(echo ${res[$b]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"; done
