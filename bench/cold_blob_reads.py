"""First and second reads of large values after a reopen, by memtable size.

    .venv/bin/python bench/cold_blob_reads.py [-n 1000] [-s 100000] [--memtable 64 512 ...]

For each memtable size (MiB, alternating over --rounds): puts N values of S
bytes (the dbm benchmark's large values: slices of one random MiB) into a fresh
database opened with that `memtable_size`, closes it, reopens it read-only,
then reads every key in order twice and prints ops/s of each pass. With
64 MiB memtables, the dbm benchmark's 100 MB of values end up in a sealed blob file
behind a flushed table as well as in the blob file of the memtable
replayed at open; with 512 MiB, all in the latter.
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


def one(n, size, memtable_mib):
    buf = random.Random(100).randbytes(1 << 20) * 2
    values = [buf[(i * 1000) % (1 << 20):][:size] for i in range(n)]
    keys = [b"%016d" % i for i in range(n)]
    work = tempfile.mkdtemp()
    try:
        db = lamina.open(work + "/db", "c", memtable_size=memtable_mib << 20)
        for k, v in zip(keys, values):
            db[k] = v
        db.close()
        db = lamina.open(work + "/db", "r")
        rates = []
        for _ in range(2):
            t0 = time.perf_counter()
            for k in keys:
                db[k]
            rates.append(n / (time.perf_counter() - t0))
        db.close()
        return rates
    finally:
        shutil.rmtree(work)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", type=int, default=1000)
    p.add_argument("-s", type=int, default=100000)
    p.add_argument("--memtable", type=int, nargs="+", default=[64, 512], help="memtable sizes in MiB")
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    for _ in range(a.rounds):
        for m in a.memtable:
            first, second = one(a.n, a.s, m)
            print(f"memtable {m} MiB: first read {first:,.0f} ops/s, second {second:,.0f} ops/s", flush=True)


if __name__ == "__main__":
    main()
