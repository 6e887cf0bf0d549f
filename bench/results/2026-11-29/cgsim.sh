#!/bin/bash
# cgsim.sh NAME [WHAT N]: callgrind cache sim of phase.py with /tmp/lp_NAME; prints per-read figures
W=${2:-read_random}; N=${3:-1000000}
cd /work/main && LAMINA_PY=/tmp/lp_$1 valgrind --tool=callgrind --cache-sim=yes --LL=33554432,16,64 --callgrind-out-file=/tmp/cg_$1_$W.out --toggle-collect='*__pymethod___getitem__*' .venv/bin/python bench/results/2026-11-29/phase.py $W $N 1 > /tmp/cg_$1_$W.log 2>&1
python3 - "$1" "$W" "$N" <<'P'
import sys,re
name,w,n=sys.argv[1],sys.argv[2],int(sys.argv[3])
t=open(f"/tmp/cg_{name}_{w}.out").read()
ev=re.search(r"^events: (.*)$",t,re.M).group(1).split()
tot=[int(x) for x in re.search(r"^totals: (.*)$",t,re.M).group(1).split()]
d=dict(zip(ev,tot))
per={k:v/n for k,v in d.items()}
est=per['Ir']+12*(per['D1mr']+per['D1mw']+per['I1mr'])+200*(per['DLmr']+per['DLmw'])
print(f"{name:8s} {w} Ir {per['Ir']:.0f} D1m {per['D1mr']+per['D1mw']:.2f} I1m {per['I1mr']:.2f} LLm {per['DLmr']+per['DLmw']:.2f} est {est:.0f}")
P
