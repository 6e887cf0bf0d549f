"""Opens PATH read-only ROUNDS times and reads keys 0..N-1 once each time, in order (seq) or
shuffled (random); prints reads/s and ns a read.  usage: reads.py PATH N seq|random ROUNDS"""
import sys, random, time
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
import lamina
path, n, mode, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
keys = [b"%016d" % i for i in range(n)]
if mode == "random":
    random.Random(5).shuffle(keys)
for r in range(rounds):
    db = lamina.open(path, "r")
    t = time.perf_counter()
    for k in keys:
        db[k]
    dt = time.perf_counter() - t
    db.close()
    print(f"{mode} {n/dt:,.0f}/s {dt/n*1e9:.0f} ns")
