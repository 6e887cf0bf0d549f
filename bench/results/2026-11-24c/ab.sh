#!/usr/bin/env bash
# Two builds of the Python module, alternating: OLD and NEW are paths to
# lib_lamina.so files built with
#   cargo build --release --manifest-path python/Cargo.toml
# (OLD in a worktree of f88f385, NEW at 76b5fa4). Each round copies one over
# python/lamina/_lamina.abi3.so and runs seed 001's large values (lamina and
# LMDB), the first and second reads after a reopen, and eight large fills.
set -u
cd "$(dirname "$0")/../../.."
OLD=$1 NEW=$2
PY=.venv/bin/python
for round in 1 2; do
  for b in OLD NEW; do
    cp "${!b}" python/lamina/_lamina.abi3.so
    echo "== $b round $round"
    $PY bench/dbm_bench.py --large -d lamina -d lmdb 2>&1 | grep -E "fill|read|delete"
    $PY bench/cold_blob_reads.py --memtable 64 --rounds 1
    $PY bench/point_loops.py large --rounds 8 | tail -8
  done
done
rm -f .venv/.lamina-built
