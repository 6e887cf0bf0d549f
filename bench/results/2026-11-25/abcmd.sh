#!/bin/bash
# abcmd.sh N "CMD" BUILD...: /tmp/BUILD.so of each build copied into python/lamina in turn
# abcmd.sh N "CMD" BUILD...: runs CMD N times per build, alternating; the last number CMD prints is taken
N=$1; shift; CMD=$1; shift
declare -A res
for r in $(seq $N); do for b in "$@"; do cp /tmp/$b.so /work/main/python/lamina/_lamina.abi3.so; v=$(cd /work/main && eval "$CMD" 2>&1 | tail -1 | grep -oE "[0-9][0-9,]*" | tail -1 | tr -d ','); res[$b]="${res[$b]} $v"; done; done
for b in "$@"; do echo "$b: ${res[$b]}  median $(echo ${res[$b]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"; done
