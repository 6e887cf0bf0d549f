#!/usr/bin/env bash
# ab.sh A DIR_A B DIR_B [READS] [ROUNDS]: runs two builds of
# crates/lamina/examples/random_reads at the same time, each pinned to one
# of the two cores, swapping cores every run, so both share whatever else
# the machine does; prints the ns a read of each, A then B.
# Each build reads the database it wrote (copy one with cp -r to give both
# builds the same bytes: a database is opened by one process at a time).
set -u
N=${5:-2000000}
R=${6:-3}
out=$(mktemp -d)
for _ in $(seq "$R"); do
  for c in 0 1; do
    taskset -c $c "$1" "$2" "$N" > "$out/a" &
    taskset -c $((1 - c)) "$3" "$4" "$N" > "$out/b"
    wait
    echo "A $(awk '{print $5}' "$out/a") B $(awk '{print $5}' "$out/b")"
  done
done
rm -rf "$out"
