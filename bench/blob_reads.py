"""CPU time of one read of a large value from Python, in microseconds.

    .venv/bin/python bench/blob_reads.py [-n 1000] [-s 100000] [-r 5]

Writes N values of S bytes (so they live in blob files), reopens, then times
three loops with `time.process_time` (this process's user and system time,
so the kernel's share of a `pread` counts and other processes' load mostly
does not): `hot` reads one key N times, `spread` reads every key in a
shuffled order, `del` deletes every key (`del db[k]`). Each loop runs R
times; the least time is printed, per operation.
"""
import argparse
import os
import random
import tempfile
import time

import lamina


def per_op(fn, ops, rounds):
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best / ops * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-s", type=int, default=100_000)
    ap.add_argument("-r", type=int, default=5)
    a = ap.parse_args()
    path = os.path.join(tempfile.mkdtemp(), "db")
    keys = [b"%016d" % (i * 7919 % 10**16) for i in range(a.n)]
    rng = random.Random(1)
    value = bytes(rng.getrandbits(8) for _ in range(a.s))
    db = lamina.open(path, "c")
    for k in keys:
        db[k] = value
    db.close()
    db = lamina.open(path, "w")
    for k in keys:
        assert db[k] == value
    order = keys[:]
    rng.shuffle(order)
    hot = keys[0]

    def read_hot():
        for _ in range(a.n):
            db[hot]

    def read_spread():
        for k in order:
            db[k]

    print(f"n={a.n} s={a.s} rounds={a.r} (CPU us per op, least of the rounds)")
    print(f"  read_hot     {per_op(read_hot, a.n, a.r):8.2f}")
    print(f"  read_spread  {per_op(read_spread, a.n, a.r):8.2f}")
    dels = []
    for _ in range(a.r):
        for k in keys:
            db[k] = value
        t = time.process_time()
        for k in keys:
            del db[k]
        dels.append(time.process_time() - t)
    print(f"  del          {min(dels) / a.n * 1e6:8.2f}")
    db.close()


if __name__ == "__main__":
    main()
