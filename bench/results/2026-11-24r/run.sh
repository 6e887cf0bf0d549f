#!/bin/sh
# Two builds of the Python module alternated, alone on the machine: main
# before memtable rotation stopped waiting for its syncs (old.so, built with
# `make py-build` at 9e86fd8) and after (new.so, at b4cf4fa), each copied to
# python/lamina/_lamina.abi3.so in turn.
set -e
cd "$(dirname "$0")/../../.."
out=bench/results/2026-11-24r
for i in 1 2 3; do for b in old new; do
  cp /tmp/$b.so python/lamina/_lamina.abi3.so
  echo "== $b"
  .venv/bin/python bench/large_fill.py -r 4
done; done > $out/large_fill.txt 2>&1
for i in 1 2 3; do for b in old new; do
  cp /tmp/$b.so python/lamina/_lamina.abi3.so
  echo "== $b"
  .venv/bin/python bench/point_loops.py fill sequential -n 1000000 --rounds 2
done; done > $out/fill_seq.txt 2>&1
# After the first measurement above (new.so moved nothing: the next
# memtable's blob file still synced the directory on the writer's path),
# the same A/B with the build of 50b5df8 (new3.so), where that sync is a
# debt too.
for i in 1 2 3; do for b in old new3; do
  cp /tmp/$b.so python/lamina/_lamina.abi3.so
  echo "== $b"
  .venv/bin/python bench/large_fill.py -r 4
done; done > $out/large_fill_final.txt 2>&1
