"""dbm_bench.py's n = 300,000 data filled and closed, then cold, sequential and
hot passes (and the hot pass again), each from a handle opened afresh, with
the stats that show where the keys are (all in the memtable, replayed).
Run from the repository root: .venv/bin/python bench/results/2026-11-25/hot300.py"""
import os, sys, time, tempfile, shutil
sys.path.insert(0, "bench")
import dbm_bench
import lamina
data = dbm_bench.Data(300000, 16, 100)
base = tempfile.mkdtemp(); path = os.path.join(base, "db")
db = lamina.open(path, "c")
pos = 0
buf = data.buffer
for k in data.keys:
    db[k] = buf[pos:pos + 100]
    pos += 100
    if pos + 100 > len(buf):
        pos = 0
db.close()
for phase in ("cold", "seq", "hot", "hot2"):
    db = lamina.open(path, "r")
    st = db.stats()
    keys = data.hot if phase.startswith("hot") else data.keys
    t = time.perf_counter()
    for k in keys:
        db[k]
    el = time.perf_counter() - t
    st2 = db.stats()
    print(phase, f"{len(keys)/el:,.0f}/s", {k: st.get(k) for k in ("memtable_bytes", "total_table_bytes", "immutable_memtables")}, st.get("levels"), st2.get("cache_hits") - st.get("cache_hits"), st2.get("cache_misses") - st.get("cache_misses"), file=sys.stderr)
    db.close()
shutil.rmtree(base)
