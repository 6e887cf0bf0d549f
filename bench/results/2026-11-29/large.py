# large.py MODULE ORDER REPS: n=1000 values of S (default 100,000) bytes, dbm_bench.py's data; REPS times: open 'r', read every key (ORDER: random|seq), close; prints the median rate. LAMINA_PY: the lamina package's directory
import sys, os, time, random, shutil, tempfile, statistics
sys.path.insert(0, "/work/main/bench"); sys.path.insert(0, "/work/main/bench/adapters"); sys.path.insert(0, os.environ.get("LAMINA_PY", "/work/main/python"))
import dbm_bench
mod = __import__(sys.argv[1], fromlist=["open"]); order = sys.argv[2]; reps = int(sys.argv[3])
S = int(os.environ.get("S", "100000")); data = dbm_bench.Data(1000, 16, S)
d = tempfile.mkdtemp(); p = os.path.join(d, "db")
db = mod.open(p, "c"); pos = 0; buf = data.buffer
for k in data.keys:
    db[k] = buf[pos:pos+S]; pos += S
    if pos + S > len(buf): pos = 0
db.close()
keys = data.shuffled if order == "random" else data.keys
rates = []
for _ in range(reps):
    db = mod.open(p, "r")
    t = time.perf_counter()
    for k in keys: db[k]
    rates.append(len(keys) / (time.perf_counter() - t))
    db.close()
shutil.rmtree(d)
print(sys.argv[1], order, f"median {statistics.median(rates)/1e3:.0f} K/s  min {min(rates)/1e3:.0f}  max {max(rates)/1e3:.0f}")
