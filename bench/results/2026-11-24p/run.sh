#!/bin/sh
# Two builds of the Python module alternated: main before the memtable's
# hash index moved to one-cache-line buckets (main.so) and after (slots.so),
# each copied to python/lamina/_lamina.abi3.so in turn, alone on the machine
# (built with `make py-build` at 02c7fe6 and at ff6d988, saved under /tmp/prof).
set -e
cd "$(dirname "$0")/../../.."
for i in 1 2 3; do for b in main slots; do
  cp /tmp/prof/$b.so python/lamina/_lamina.abi3.so
  echo "$b $(.venv/bin/python bench/point_loops.py delete -n 1000000 --rounds 2 | tail -2 | tr '\n' ' ')"
done; done > delete.txt
for i in 1 2 3; do for b in main slots; do
  cp /tmp/prof/$b.so python/lamina/_lamina.abi3.so
  echo "$b $(.venv/bin/python bench/point_loops.py reads -n 1000000 | tail -3 | tr '\n' ' ')"
done; done > reads.txt
