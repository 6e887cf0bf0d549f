import sys, os, time, random, shutil, tempfile
sys.path.insert(0, os.environ.get("LAMINA_PY", "/work/main/python"))
if os.environ.get("LMDB"):
    sys.path.insert(0, "/work/main/python/tests"); import peers
    lamina = peers.load("lmdb") if hasattr(peers, "load") else None
import lamina as lam
n = int(sys.argv[1]); rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
random.seed(100)
buf = random.randbytes(1 << 20)
keys = [(b"%016d" % i) for i in range(n)]
vals = [buf[(i*100) % (len(buf)-100):(i*100) % (len(buf)-100)+100] for i in range(n)]
for r in range(rounds):
    d = tempfile.mkdtemp(); p = os.path.join(d, "db")
    db = lam.open(p, "c")
    for k, v in zip(keys, vals): db[k] = v
    db.close()
    if os.environ.get('MARK') and r == rounds - 1:
        open(os.environ['MARK'],'w').write(str(os.getpid())); time.sleep(1.5)
    db = lam.open(p, "c")
    t = time.perf_counter()
    for k in keys: del db[k]
    dt = time.perf_counter() - t
    db.close()
    print(f"delete {n} {n/dt/1e3:.0f} K/s", flush=True)
    shutil.rmtree(d)
