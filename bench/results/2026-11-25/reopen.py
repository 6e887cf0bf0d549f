# Fills dbm_bench.py n = 300,000 data, closes, then reopens it read-only 8 times in one process and times the read_hot loop each time.
# Run from the repository root: .venv/bin/python bench/results/2026-11-25/reopen.py
import os, sys, time, tempfile
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import dbm_bench, lamina
data = dbm_bench.Data(300000, 16, 100)
path = os.path.join(tempfile.mkdtemp(), "db")
db = lamina.open(path, "c"); pos = 0; buf = data.buffer
for k in data.keys:
    db[k] = buf[pos:pos + 100]; pos += 100
    if pos + 100 > len(buf): pos = 0
db.close()
def huge():
    for l in open("/proc/self/smaps_rollup"):
        if l.startswith("AnonHugePages"): return l.split()[1]
for i in range(8):
    db = lamina.open(path, "r")
    t = time.perf_counter()
    for k in data.hot: db[k]
    el = time.perf_counter() - t
    print(f"open {i}: hot {len(data.hot)/el:,.0f}/s  AnonHuge {huge()} kB", flush=True)
    db.close()
