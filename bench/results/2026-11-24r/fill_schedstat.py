import os, sys, time, shutil, tempfile, threading, random
import lamina
tid = threading.get_native_id()
def ss():
    a = open(f"/proc/self/task/{tid}/schedstat").read().split()
    return int(a[0]), int(a[1]), int(a[2])
def allthreads():
    tot = {}
    for t in os.listdir("/proc/self/task"):
        try:
            name = open(f"/proc/self/task/{t}/comm").read().strip()
            a = open(f"/proc/self/task/{t}/schedstat").read().split()
            tot[t] = (name, int(a[0]), int(a[1]))
        except OSError: pass
    return tot
base = tempfile.mkdtemp(); path = os.path.join(base, "db")
n = 1_000_000
keys = [b"%016d" % i for i in range(n)]
order = sys.argv[1] if len(sys.argv) > 1 else "random"
if order == "random": random.Random(2).shuffle(keys)
V = os.urandom(100)
for r in range(3):
    shutil.rmtree(path, ignore_errors=True)
    db = lamina.open(path, "c")
    a0 = allthreads(); s0 = ss(); t = time.perf_counter(); c = time.thread_time()
    for k in keys: db[k] = V
    w = time.perf_counter() - t; ct = time.thread_time() - c; s1 = ss(); a1 = allthreads()
    print(f"{order} wall {w*1e3:.0f} ms | writer on cpu {(s1[0]-s0[0])/1e6:.0f} ms, runnable-waiting {(s1[1]-s0[1])/1e6:.0f} ms, slices {s1[2]-s0[2]}")
    for k in a1:
        if k in a0 and k != str(tid):
            nm, r1, w1 = a1[k]; _, r0, w0 = a0[k]
            if r1 - r0 > 1e6: print(f"    {nm}: on cpu {(r1-r0)/1e6:.0f} ms, runnable-waiting {(w1-w0)/1e6:.0f} ms")
    db.close()
shutil.rmtree(base)
