import os, sys, time, tempfile, shutil
import lamina
n = 1_000_000
keys = [b"%016d" % i for i in range(n)]
V = os.urandom(100)
base = tempfile.mkdtemp(); path = os.path.join(base, "db")
db = lamina.open(path, "c")
for k in keys:
    db[k] = V
os.write(2, b"CLOSE START\n")
t1 = time.perf_counter()
db.close()
print(f"close {time.perf_counter()-t1:.3f}", file=sys.stderr)
shutil.rmtree(base)
