#!/usr/bin/env bash
# Large-value fills as the page cache grows: twenty 100 MB databases kept
# side by side (bench/point_loops.py large keeps each round's database), for
# two builds of the Python module in turn (OLD, NEW: paths to lib_lamina.so
# as in ab.sh).
set -u
cd "$(dirname "$0")/../../.."
for b in "$1" "$2" "$1" "$2"; do
  cp "$b" python/lamina/_lamina.abi3.so
  echo "== $b"
  .venv/bin/python bench/point_loops.py large --rounds 20 | awk '{printf "%s ", $2} END {print ""}'
done
rm -f .venv/.lamina-built
