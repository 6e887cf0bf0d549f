import os, sys, time, random, tempfile, shutil
import lamina
base = tempfile.mkdtemp(); path = os.path.join(base, "db")
rnd = random.Random(100)
keys = [rnd.randbytes(8).hex().encode() for _ in range(1000)]
db = lamina.open(path, "c")
for i, k in enumerate(keys):
    db[k] = rnd.randbytes(100_000)
db.close()
hot = rnd.sample(keys, 10) * 100
open("/tmp/hot_reads.ready", "w").close()
time.sleep(float(os.environ.get("WAIT", "0")))
db = lamina.open(path, "r")
for k in hot:  # the first pass reads each value from its file
    db[k]
t0 = time.perf_counter()
rounds = int(os.environ.get("ROUNDS", "40"))
for r in range(rounds):
    for k in hot:
        db[k]
print(f"{rounds * len(hot) / (time.perf_counter() - t0):,.0f} reads/s", file=sys.stderr)
db.close()
shutil.rmtree(base)
