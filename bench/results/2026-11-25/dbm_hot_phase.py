"""dbm_bench.py's large read_hot phase alone, for lamina: the same data
(n=1000, k=16, s=100000), filled sequentially and closed, then the hot list
(10 keys, repeated 100 times) read from a handle opened afresh, ROUNDS times
(one handle per round, as the benchmark opens one per phase)."""
import os, sys, time, tempfile, shutil
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, "bench")
import dbm_bench
import lamina
data = dbm_bench.Data(1000, 16, 100000)
base = tempfile.mkdtemp(); path = os.path.join(base, "db")
db = lamina.open(path, "c")
pos = 0
for k in data.keys:
    db[k] = data.buffer[pos:pos + 100000]
    pos += 100000
    if pos + 100000 > len(data.buffer):
        pos = 0
db.close()
best = []
for r in range(int(os.environ.get("ROUNDS", "5"))):
    db = lamina.open(path, "r")
    t = time.perf_counter()
    for k in data.hot:
        db[k]
    best.append(time.perf_counter() - t)
    db.close()
best.sort()
print(f"{len(data.hot) / best[len(best) // 2]:,.0f} reads/s", file=sys.stderr)
shutil.rmtree(base)
