"""Reads of large values right after open, pass by pass, from Python.

    .venv/bin/python bench/blob_first_pass.py [-n 1000] [-s 100000] [-o 3] [-p 3]

Writes N values of S bytes (`lamina.open(path, 'c')`, then `flush()`, so
every value is in a blob file), then opens the database O times read-only
and reads every key in a shuffled order P times per open, printing each
pass's ops/s. The first pass after an open pays for mapping the blob files'
pages (the dbm benchmark's read_cold, read_sequential and read_random each open the
database afresh); the later passes show the copy and checksum alone.
"""
import argparse
import os
import random
import shutil
import tempfile
import time

import lamina


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-s", type=int, default=100_000)
    ap.add_argument("-o", type=int, default=3, help="opens")
    ap.add_argument("-p", type=int, default=3, help="passes per open")
    a = ap.parse_args()
    base = tempfile.mkdtemp(prefix="lamina-first-pass-")
    path = os.path.join(base, "db")
    random.seed(100)
    buf = random.randbytes(1 << 20)
    keys = [b"%016d" % i for i in range(a.n)]
    try:
        db = lamina.open(path, "c")
        for i, k in enumerate(keys):
            at = (i * a.s) % (len(buf) - a.s)
            db[k] = buf[at : at + a.s]
        db.flush()
        db.close()
        random.shuffle(keys)
        for o in range(a.o):
            db = lamina.open(path, "r")
            rates = []
            for _ in range(a.p):
                t = time.perf_counter()
                for k in keys:
                    db[k]
                rates.append(a.n / (time.perf_counter() - t))
            db.close()
            print(f"open {o + 1}: " + "  ".join(f"pass {i + 1} {r:9,.0f}/s" for i, r in enumerate(rates)))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
