# fill N x 100 KB, then ROUNDS x (open, read every key once shuffled, close); MARK: pid file before reads
import sys, os, time, random, shutil, tempfile
LM = os.environ.get("LMDB")
if LM:
    import lmdb
else:
    sys.path.insert(0, os.environ.get("LAMINA_PY", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../python"))); import lamina
random.seed(100)
n = 1000; rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
buf = random.randbytes(1 << 20)
keys = [(b"%016d" % i) for i in range(n)]
values = [buf[(i*100000) % (len(buf)-100000):(i*100000) % (len(buf)-100000)+100000] for i in range(n)]
sh = keys[:]; random.shuffle(sh)
d = tempfile.mkdtemp(); p = os.path.join(d, "db")
if LM:
    env = lmdb.open(p, map_size=1 << 30)
    with env.begin(write=True) as t:
        for k, v in zip(keys, values): t.put(k, v)
    env.close()
else:
    db = lamina.open(p, "c")
    for k, v in zip(keys, values): db[k] = v
    db.close()
if os.environ.get('MARK'):
    open(os.environ['MARK'],'w').write(str(os.getpid())); time.sleep(1.5)
for r in range(rounds):
    if LM:
        env = lmdb.open(p, map_size=1 << 30, readonly=True); t = env.begin(); g = t.get
        t0 = time.perf_counter()
        for k in sh: g(k)
        dt = time.perf_counter() - t0
        t.abort(); env.close()
    else:
        db = lamina.open(p, "r")
        t0 = time.perf_counter()
        for k in sh: db[k]
        dt = time.perf_counter() - t0
        db.close()
    print(f"{'lmdb' if LM else 'lamina'} {n/dt/1e3:.0f} K/s", flush=True)
shutil.rmtree(d)
