"""dbm-benchmark-style random fills and reads from Python with the memtable size
forced to each of several sizes, interleaved over rounds.

  python bench/memtable_sizes.py [-n N] [--rounds R] [--sizes 4M,16M,64M]

Each round, for each size: fills N random keys ('%016d', 100-byte values,
the order of dbm_bench.py's fill_random) into a fresh database opened with
`memtable_size=SIZE`, closes it, reopens it read-only and reads every key
in a shuffled order. Prints ops/s of the fill (close() not timed), of
close() and reopen together, and of the reads, one row per run.
"""

import argparse
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import lamina  # noqa: E402

VALUE = random.Random(100).randbytes(100)


def size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def run(path, keys, shuffled, memtable):
    db = lamina.open(path, "c", memtable_size=memtable)
    t0 = time.perf_counter()
    for k in keys:
        db[k] = VALUE
    fill = len(keys) / (time.perf_counter() - t0)
    t1 = time.perf_counter()
    db.close()
    db = lamina.open(path, "r")
    reopen = time.perf_counter() - t1
    t2 = time.perf_counter()
    for k in shuffled:
        db[k]
    read = len(shuffled) / (time.perf_counter() - t2)
    db.close()
    return fill, reopen, read


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--sizes", default="4M,8M,16M,32M,64M")
    args = p.parse_args()
    sizes = [size(s) for s in args.sizes.split(",")]
    rng = random.Random(100)
    keys = [b"%016d" % i for i in range(args.n)]
    rng.shuffle(keys)
    shuffled = keys[:]
    random.Random(1).shuffle(shuffled)
    print(f"{'round':>5} {'memtable':>9} {'fill ops/s':>11} {'close+open s':>12} {'read ops/s':>11}")
    for r in range(args.rounds):
        for m in sizes[r % len(sizes):] + sizes[: r % len(sizes)]:
            work = tempfile.mkdtemp(prefix="lamina-memtable-")
            try:
                fill, reopen, read = run(work + "/db", keys, shuffled, m)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            print(f"{r + 1:>5} {m >> 20:>8}M {fill:>11,.0f} {reopen:>12.3f} {read:>11,.0f}", flush=True)


if __name__ == "__main__":
    main()
