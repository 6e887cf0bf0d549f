# phase.py WHAT N [ROUNDS]: fills N keys ("%016d", 100-byte values) in order, closes, then
# times WHAT (read_random: every key once, shuffled; read_seq; read_hot), reopening read-only
# for each round. LAMINA_PY: where the lamina package is; GNU=1: dbm.gnu instead; MT: a
# memtable size; BS: a data block size; MARK: a file the process writes its pid to before the reads (for perf -p).
import sys, os, time, random, shutil, tempfile
sys.path.insert(0, os.environ.get("LAMINA_PY", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../python")))
if os.environ.get("GNU"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../python/tests")); from peers import load_gnu; lamina = load_gnu()
else:
    import lamina
what = sys.argv[1]; n = int(sys.argv[2]); rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
random.seed(100)
buf = random.randbytes(1 << 20)
keys = [(b"%016d" % i) for i in range(n)]
values = []; pos = 0
for _ in range(n):
    if pos + 100 > len(buf): pos = 0
    values.append(buf[pos:pos+100]); pos += 100
hot = random.sample(keys, max(1, n // 100)) * 100
shuffled = keys[:]; random.shuffle(shuffled)
d = tempfile.mkdtemp(dir=None)
p = os.path.join(d, "db")
kw = {}
if not os.environ.get("GNU"):
    kw.update({"memtable_size": int(os.environ["MT"])} if os.environ.get("MT") else {})
    kw.update({"block_size": int(os.environ["BS"])} if os.environ.get("BS") else {})
db = lamina.open(p, "c", **kw)
for k, v in zip(keys, values): db[k] = v
db.close()
if os.environ.get('MARK'):
    open(os.environ['MARK'],'w').write(str(os.getpid())); time.sleep(1.5)
for r in range(rounds):
    db = lamina.open(p, "r", **kw)
    ks = {"read_random": shuffled, "read_seq": keys, "read_hot": hot}[what]
    t = time.perf_counter()
    for k in ks: db[k]
    dt = time.perf_counter() - t
    print(f"{what} {n} {len(ks)/dt/1e3:.0f} K/s", flush=True)
    db.close()
shutil.rmtree(d)
