# fillclose.py N [COMPRESSION]: three passes of open, fill N keys ("%016d", 100-byte values) in order,
# close; prints the fill rate, the rate with the close, and the close. LAMINA_PY: the package.
import sys, os, time, random, shutil, tempfile
sys.path.insert(0, os.environ.get("LAMINA_PY", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../python")))
import lamina
n = int(sys.argv[1]); comp = sys.argv[2] if len(sys.argv) > 2 else None
random.seed(100)
buf = random.randbytes(1 << 20)
keys = [(b"%016d" % i) for i in range(n)]
vals = [buf[(i*100) % (len(buf)-100):(i*100) % (len(buf)-100)+100] for i in range(n)]
for r in range(3):
    d = tempfile.mkdtemp(); p = os.path.join(d, "db")
    kw = {"compression": comp} if comp else {}
    db = lamina.open(p, "c", **kw)
    t = time.perf_counter()
    for k, v in zip(keys, vals): db[k] = v
    t1 = time.perf_counter()
    db.close()
    t2 = time.perf_counter()
    print(f"{comp} fill {n/(t1-t):,.0f}/s  fill+close {n/(t2-t):,.0f}/s  close {1000*(t2-t1):.0f} ms", flush=True)
    shutil.rmtree(d)
