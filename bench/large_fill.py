"""Wall-clock rate of filling large values from Python, round after round.

    .venv/bin/python bench/large_fill.py [-n 1000] [-s 100000] [-r 3]

Each round fills a fresh database (`lamina.open(path, 'c')`, default
durability) with N values of S bytes under random keys, as the dbm benchmark's
`fill_random` with `--large` does, and prints that round's ops/s (the loop
only, wall clock: the page cache's and the disk's work counts) with the
writer's pacing delay from `stats()`. The first round also pays for the
process's first allocations; compare later rounds between builds, several
runs each, as this machine's disk speed moves between minutes.
"""
import argparse
import os
import shutil
import tempfile
import time

import lamina


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-s", type=int, default=100_000)
    ap.add_argument("-r", type=int, default=3)
    a = ap.parse_args()
    base = tempfile.mkdtemp(prefix="lamina-large-fill-")
    path = os.path.join(base, "db")
    keys = [os.urandom(8).hex().encode() for _ in range(a.n)]
    values = [os.urandom(a.s) for _ in range(4)]
    try:
        for rnd in range(a.r):
            shutil.rmtree(path, ignore_errors=True)
            db = lamina.open(path, "c")
            t = time.perf_counter()
            for i, k in enumerate(keys):
                db[k] = values[i % 4]
            secs = time.perf_counter() - t
            delay = db.stats()["write_delay_micros"] / 1e6
            db.close()
            print(f"round {rnd + 1}: {a.n / secs:10,.0f} ops/s  (paced {delay:.2f} s)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
