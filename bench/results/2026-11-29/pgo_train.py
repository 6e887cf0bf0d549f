# A general mix of calls from Python: fills in order and at random, reads of present and absent
# keys, existence checks, deletes, iteration, batches; small and large values.
import os, random, shutil, sys, tempfile
import lamina
rng = random.Random(7)
def run(n, vsize, klen):
    d = tempfile.mkdtemp()
    p = os.path.join(d, "db")
    vals = [rng.randbytes(vsize) for _ in range(64)]
    keys = [("k%0*d" % (klen - 1, i)).encode() for i in range(n)]
    rkeys = [rng.randbytes(klen) for _ in range(n // 2)]
    db = lamina.open(p, "c")
    for i, k in enumerate(keys):
        db[k] = vals[i % 64]
    for k in rkeys:
        db[k] = vals[k[0] % 64]
    db.close()
    db = lamina.open(p, "r")
    sh = keys[:]; rng.shuffle(sh)
    for k in keys: db[k]
    for k in sh: db[k]
    for k in sh[: n // 4]: db.get(k + b"x")
    for k in sh[: n // 4]: k in db
    for k in sh[: n // 100] * 20: db[k]
    for _ in db.keys(): pass
    db.close()
    db = lamina.open(p, "w")
    for k in keys[: n // 2]: del db[k]
    for k in rkeys[: n // 4]: db.pop(k, None)
    with db.batch() as b:
        for k in keys[n // 2 : n // 2 + 1000]: b[k] = b"v"
    db.close()
    shutil.rmtree(d)
for n, v, k in [(300000, 100, 16), (100000, 20, 12), (50000, 1000, 24), (1000, 100000, 16)]:
    run(n, v, k)
