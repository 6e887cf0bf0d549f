#!/usr/bin/env python3
"""semidbm's benchmark of dbm modules, for lamina and its peers.

The dbm workloads of bench/README.md, in this order, each on a
database opened afresh with ``module.open(path, flag)``; only the loop is
timed, ``ops/s = n / seconds``:

  fill_random        c  db[k] = v for n keys of 16 random printable characters (then deleted)
  fill_sequential    c  db[key_i] = value_i
  read_cold          r  db[key_i] (first read after the fill)
  read_sequential    r  the same again
  read_hot           r  a random 1% of the keys, that list repeated 100 times
  read_random        r  every key once, shuffled
  delete_sequential  c  del db[key_i]

Keys are ``'%016d' % i``; values are consecutive slices of one 1 MiB random
buffer (``random.seed(100)``). Besides semidbm's figures, the two fills are
also reported with the time of ``close()`` included (``+close`` rows).

    .venv/bin/python python/bench_dbm.py -n 1000000 -d lamina -d dbm.gnu -d semidbm
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import random
import shutil
import string
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))

WORKLOADS = [
    "fill_random",
    "fill_random+close",
    "fill_sequential",
    "fill_sequential+close",
    "read_cold",
    "read_sequential",
    "read_hot",
    "read_random",
    "delete_sequential",
]


def load(name: str):
    if name == "dbm.gnu":
        from peers import load_gnu

        mod = load_gnu()
        if mod is None:
            raise ImportError("dbm.gnu needs the _gdbm extension (Debian: python3-gdbm)")
        return mod
    return importlib.import_module(name)


def make_data(n: int, key_size: int, value_size: int):
    random.seed(100)
    buf = random.randbytes(1 << 20)
    keys = [(b"%0*d" % (key_size, i)) for i in range(n)]
    values = []
    pos = 0
    for _ in range(n):
        if pos + value_size > len(buf):
            pos = 0
        values.append(buf[pos : pos + value_size])
        pos += value_size
    printable = string.printable
    random_keys = ["".join(random.choice(printable) for _ in range(key_size)).encode() for _ in range(n)]
    hot = random.sample(keys, max(1, n // 100)) * 100
    shuffled = keys[:]
    random.shuffle(shuffled)
    return keys, values, random_keys, hot, shuffled


def timed(loop) -> float:
    gc.disable()
    try:
        t0 = time.perf_counter()
        loop()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def run_module(mod, workdir: str, data) -> dict[str, float]:
    keys, values, random_keys, hot, shuffled = data
    n = len(keys)
    path = os.path.join(workdir, "db")
    out: dict[str, float] = {}

    def fill(ks):
        def loop():
            for k, v in zip(ks, values):
                db[k] = v

        return loop

    def reads(ks):
        def loop():
            for k in ks:
                db[k]

        return loop

    def deletes():
        for k in keys:
            del db[k]

    # fill_random, then the database is deleted
    db = mod.open(path, "c")
    secs = timed(fill(random_keys))
    t0 = time.perf_counter()
    db.close()
    close = time.perf_counter() - t0
    out["fill_random"] = n / secs
    out["fill_random+close"] = n / (secs + close)
    clean(workdir)

    db = mod.open(path, "c")
    secs = timed(fill(keys))
    t0 = time.perf_counter()
    db.close()
    close = time.perf_counter() - t0
    out["fill_sequential"] = n / secs
    out["fill_sequential+close"] = n / (secs + close)

    for name, ks in (("read_cold", keys), ("read_sequential", keys), ("read_hot", hot), ("read_random", shuffled)):
        db = mod.open(path, "r")
        out[name] = len(ks) / timed(reads(ks))
        db.close()

    db = mod.open(path, "c")
    out["delete_sequential"] = n / timed(deletes)
    db.close()
    clean(workdir)
    return out


def clean(workdir: str) -> None:
    for entry in os.listdir(workdir):
        p = os.path.join(workdir, entry)
        if os.path.isdir(p):
            shutil.rmtree(p)
        else:
            os.remove(p)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=1_000_000, help="number of keys (default 1,000,000)")
    ap.add_argument("-k", type=int, default=16, help="key size (default 16)")
    ap.add_argument("-s", type=int, default=100, help="value size (default 100)")
    ap.add_argument("-d", action="append", help="a module with a dbm-style open() (repeatable)")
    ap.add_argument("--dir", default=None, help="where to put the databases (default: a temp dir)")
    args = ap.parse_args()
    names = args.d or ["lamina", "dbm.gnu", "semidbm"]

    data = make_data(args.n, args.k, args.s)
    results: dict[str, dict[str, float]] = {}
    for name in names:
        try:
            mod = load(name)
        except ImportError as e:
            print(f"skipping {name}: {e}", file=sys.stderr)
            continue
        workdir = tempfile.mkdtemp(prefix=f"bench-{name}-", dir=args.dir)
        try:
            print(f"running {name} ...", file=sys.stderr, flush=True)
            results[name] = run_module(mod, workdir, data)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    print(f"n={args.n}, key {args.k} B, value {args.s} B; ops/s (higher is better)\n")
    cols = list(results)
    peers = [c for c in cols if c != "lamina"]
    header = "| workload | " + " | ".join(cols) + (" | lamina / best peer |" if "lamina" in cols and peers else " |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for w in WORKLOADS:
        row = [f"{results[c][w]:,.0f}" for c in cols]
        line = f"| {w} | " + " | ".join(row) + " |"
        if "lamina" in cols and peers:
            best = max(results[p][w] for p in peers)
            line += f" {results['lamina'][w] / best:.2f}x |"
        print(line)


if __name__ == "__main__":
    main()
