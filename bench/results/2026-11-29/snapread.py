# snapread.py: 200,000 keys of 100-byte values put (in the memtable), one snapshot, then three
# rounds of snapshot[k] and "k in snapshot" over every key. LAMINA_PY: where the lamina package is.
import sys, os, time, tempfile, shutil
sys.path.insert(0, os.environ.get("LAMINA_PY", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../python"))); import lamina
d = tempfile.mkdtemp(); db = lamina.open(os.path.join(d, "db"), "c")
keys = [b"%016d" % i for i in range(200000)]
for k in keys: db[k] = b"v" * 100
s = db.snapshot()
for r in range(3):
    t = time.perf_counter()
    for k in keys: s[k]
    a = time.perf_counter() - t
    t = time.perf_counter()
    for k in keys: k in s
    b = time.perf_counter() - t
    print(f"snapshot getitem {len(keys)/a/1e3:.0f} K/s, contains {len(keys)/b/1e3:.0f} K/s")
s.close() if hasattr(s, "close") else None
db.close(); shutil.rmtree(d)
