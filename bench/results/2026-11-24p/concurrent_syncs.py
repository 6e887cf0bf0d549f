import os, sys, threading, time
path = "concsync.dat"
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"\0" * (64 << 20)); os.fsync(fd)
buf = b"x" * 4096
def run(nthreads, secs=1.5):
    counts = [0] * nthreads
    stop = time.perf_counter() + secs
    off = [0]
    lock = threading.Lock()
    def w(i):
        c = 0
        while time.perf_counter() < stop:
            with lock:
                o = off[0]; off[0] = (o + 4096) % (60 << 20)
            os.pwrite(fd, buf, o)
            os.fdatasync(fd)
            c += 1
        counts[i] = c
    ts = [threading.Thread(target=w, args=(i,)) for i in range(nthreads)]
    t0 = time.perf_counter()
    for t in ts: t.start()
    for t in ts: t.join()
    return sum(counts) / (time.perf_counter() - t0)
for n in [1, 2, 3, 4, 1, 2, 4]:
    print(n, "threads", round(run(n)), "syncs/s", flush=True)
