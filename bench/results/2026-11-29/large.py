# large.py PASSES: N (default 1,000) values of 100,000 bytes, then PASSES passes of reads in one shuffled
# order over one open database (LMDB=1: LMDB instead). The second pass is the first to keep
# values read again (docs/design.md, "Values read again").
import sys, os, time, random, shutil, tempfile
if os.environ.get("LMDB"):
    import lmdb
else:
    sys.path.insert(0, os.environ.get("LAMINA_PY", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../python"))); import lamina
random.seed(100)
n = int(os.environ.get("N", "1000"))
buf = random.randbytes(1 << 20)
keys = [(b"%016d" % i) for i in range(n)]
values = []; pos = 0
for _ in range(n):
    if pos + 100000 > len(buf): pos = 0
    values.append(buf[pos:pos+100000]); pos += 100000
shuffled = keys[:]; random.shuffle(shuffled)
d = tempfile.mkdtemp(dir=None)
p = os.path.join(d, "db")
if os.environ.get("LMDB"):
    env = lmdb.open(p, map_size=1<<31)
    with env.begin(write=True) as t:
        for k, v in zip(keys, values): t.put(k, v)
    env.close()
    class DB:
        def __init__(s): s.env = lmdb.open(p, readonly=True, map_size=1<<31); s.t = s.env.begin()
        def __getitem__(s, k): return s.t.get(k)
        def close(s): s.env.close()
    db = DB()
else:
    db = lamina.open(p, "c")
    for k, v in zip(keys, values): db[k] = v
    db.close()
    db = lamina.open(p, "r")
if os.environ.get('MARK'):
    open(os.environ['MARK'],'w').write(str(os.getpid())); time.sleep(1.5)
for r in range(int(sys.argv[1])):
    t = time.perf_counter()
    for k in shuffled: db[k]
    dt = time.perf_counter() - t
    print(f"large {n/dt/1e3:.0f} K/s", flush=True)
db.close()
shutil.rmtree(d)
