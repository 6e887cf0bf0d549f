#!/bin/bash
# abrows.sh N "ARGS" BUILD...: runs bench/dbm_bench.py ARGS -d lamina N times per build, alternating;
# prints each row's per-build values and medians.
N=$1; shift; ARGS=$1; shift
out=/tmp/ab/out.$$; mkdir -p $out
for r in $(seq $N); do for b in "$@"; do cp /tmp/$b.so /work/main/python/lamina/_lamina.abi3.so; (cd /work/main && .venv/bin/python bench/dbm_bench.py $ARGS -d lamina 2>&1) | grep -E '^(fill|read|delete)' | grep -v ' s$' | awk '{print $1, $2}' | tr -d ',' >> $out/$b; done; done
python3 - "$out" "$@" <<'PY'
import sys, statistics, collections
out=sys.argv[1]; builds=sys.argv[2:]
res={b:collections.defaultdict(list) for b in builds}
for b in builds:
    for line in open(f"{out}/{b}"):
        k,v=line.split(); res[b][k].append(float(v))
rows=list(res[builds[0]].keys())
print(f"{'row':24}"+"".join(f"{b:>14}" for b in builds)+"   ratio")
for r in rows:
    meds=[statistics.median(res[b][r]) for b in builds]
    print(f"{r:24}"+"".join(f"{m:>14,.0f}" for m in meds)+f"   {meds[-1]/meds[0]:.3f}")
PY
