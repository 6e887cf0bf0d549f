# rr.py PATH ROUNDS [N]: read every key of an existing phase.py-style db once, shuffled, ROUNDS times
# (reopening each time); with MAKE=1, create it first (BS: a data block size). LAMINA_PY: the package's directory.
# Reading one db made once lets two builds be run in turn every few seconds (abrr.sh, abbs.sh, abdb.sh).
import sys, os, time, random
sys.path.insert(0, os.environ["LAMINA_PY"])
import lamina
p = sys.argv[1]; rounds = int(sys.argv[2]); n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
random.seed(100)
buf = random.randbytes(1 << 20)
keys = [(b"%016d" % i) for i in range(n)]
if os.environ.get("MAKE"):
    db = lamina.open(p, "c", **({"block_size": int(os.environ["BS"])} if os.environ.get("BS") else {}))
    pos = 0
    for k in keys:
        if pos + 100 > len(buf): pos = 0
        db[k] = buf[pos:pos+100]; pos += 100
    db.close()
    sys.exit(0)
random.sample(keys, max(1, n // 100))  # as phase.py draws it, so the shuffle is phase.py's
shuffled = keys[:]; random.shuffle(shuffled)
out = []
for r in range(rounds):
    db = lamina.open(p, "r")
    t = time.perf_counter()
    for k in shuffled: db[k]
    dt = time.perf_counter() - t
    out.append(f"{n/dt/1e3:.0f}")
    db.close()
print(" ".join(out), flush=True)
