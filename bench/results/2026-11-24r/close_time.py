import os, sys, time, tempfile, shutil
import lamina
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
keys = [b"%016d" % i for i in range(n)]
V = os.urandom(100)
for r in range(3):
    base = tempfile.mkdtemp(); path = os.path.join(base, "db")
    db = lamina.open(path, "c")
    t0 = time.perf_counter()
    for k in keys:
        db[k] = V
    t1 = time.perf_counter()
    s = db.stats()
    db.close()
    t2 = time.perf_counter()
    db = lamina.open(path, "r"); t3 = time.perf_counter(); db.close()
    print(f"fill {t1-t0:.3f} s  close {t2-t1:.3f} s  reopen {t3-t2:.3f} s  flushes {s['flushes']}")
    shutil.rmtree(base)
