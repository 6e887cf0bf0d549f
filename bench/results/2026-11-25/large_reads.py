import os, sys, time, random, tempfile, shutil
import lamina
base = tempfile.mkdtemp(); path = os.path.join(base, "db")
rnd = random.Random(100)
keys = [rnd.randbytes(8).hex().encode() for _ in range(1000)]
buf = rnd.randbytes(1 << 20)
span = (1 << 20) - 100_000
db = lamina.open(path, "c")
for i, k in enumerate(keys):
    db[k] = buf[(i * 100_000) % span:][:100_000]
db.close()
shuf = keys[:]; rnd.shuffle(shuf)
mode = sys.argv[1] if len(sys.argv) > 1 else "cold"
open("/tmp/large_reads.ready", "w").close()
time.sleep(float(os.environ.get("WAIT", "0")))
tot = 0; n = 0
t = time.perf_counter()
for r in range(int(os.environ.get("ROUNDS", "30"))):
    db = lamina.open(path, "r")
    t0 = time.perf_counter()
    for k in shuf:
        db[k]
    tot += time.perf_counter() - t0; n += len(shuf)
    db.close()
print(f"{n / tot:,.0f} reads/s", file=sys.stderr)
shutil.rmtree(base)
