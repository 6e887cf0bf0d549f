#!/usr/bin/env python3
"""The shelve-style loop from Python: open, one put, close, over and over.

  open_loop.py [-d MODULE ...] [--rounds R] [--tmpdir DIR] [--csv FILE]

R times (default 500) per module: `db = module.open(path, 'w')` (the database was created by
one 'c' open before the loop), `db[b'a'] = b'1'`, `db.close()`; each phase is timed
separately with time.perf_counter(). Prints, per module, the median and 90th percentile of a
whole round and the medians of open, put and close, in milliseconds, then the bytes the
database takes on disk after the loop (every file under its path). The ratio column is the
round's median over dbm.gnu's.

Modules are named as in dbm_bench.py (`lamina`, `gdbm`, `lmdb`, `sqlite`, `bdb_hash`, ...;
the adapters in bench/adapters); the default is lamina, gdbm, lmdb and sqlite. Each runs in a
child process of its own, one after another; a module that cannot be imported is skipped with
a message. Run it alone on the machine: a round is milliseconds, and a build beside it
shows in every figure.
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "adapters"))

import dbm_bench  # noqa: E402

DEFAULT = ["lamina", "gdbm", "lmdb", "sqlite"]


def disk_bytes(path):
    """Bytes of the file at `path`, or of every file under it (and of `path`.* beside it)."""
    total = 0
    candidates = [path] + [os.path.join(os.path.dirname(path), n)
                           for n in os.listdir(os.path.dirname(path))
                           if n.startswith(os.path.basename(path) + ".")]
    for c in candidates:
        if os.path.isdir(c):
            for root, _, files in os.walk(c):
                total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        elif os.path.exists(c):
            total += os.path.getsize(c)
    return total


def one_module(modname, rounds, tmpdir):
    """Runs the loop in this process; returns its figures (seconds)."""
    module = __import__(modname, fromlist=["open"])
    work = tempfile.mkdtemp(dir=tmpdir)
    try:
        path = os.path.join(work, "db")
        db = module.open(path, "c")
        db[b"a"] = b"1"
        db.close()
        opens, puts, closes, totals = [], [], [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            db = module.open(path, "w")
            t1 = time.perf_counter()
            db[b"a"] = b"1"
            t2 = time.perf_counter()
            db.close()
            t3 = time.perf_counter()
            opens.append(t1 - t0)
            puts.append(t2 - t1)
            closes.append(t3 - t2)
            totals.append(t3 - t0)
        return {"open": statistics.median(opens), "put": statistics.median(puts),
                "close": statistics.median(closes), "round": statistics.median(totals),
                "p90": sorted(totals)[int(0.9 * (len(totals) - 1))],
                "bytes": disk_bytes(path)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-d", dest="modules", action="append", help="a module (repeatable)")
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.child:
        print(json.dumps(one_module(args.child, args.rounds, args.tmpdir)))
        return 0
    rows = []
    for name in args.modules or DEFAULT:
        label, modname = dbm_bench.resolve(name)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", modname,
               "--rounds", str(args.rounds)]
        if args.tmpdir:
            cmd += ["--tmpdir", args.tmpdir]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["failed"])[-1]
            print(f"skipped: {label} ({last})")
            continue
        rows.append(dict(json.loads(r.stdout), module=label))
    gnu = next((r["round"] for r in rows if r["module"] == "gdbm"), None)
    print(f"open, one put, close: {args.rounds} rounds per module (ms, medians)")
    print(f"{'module':<10} {'round':>8} {'p90':>8} {'open':>8} {'put':>8} {'close':>8} "
          f"{'bytes':>10} {'/gdbm':>7}")
    for r in rows:
        ratio = f"{r['round'] / gnu:.2f}x" if gnu else "-"
        print(f"{r['module']:<10} {r['round'] * 1e3:>8.3f} {r['p90'] * 1e3:>8.3f} "
              f"{r['open'] * 1e3:>8.3f} {r['put'] * 1e3:>8.3f} {r['close'] * 1e3:>8.3f} "
              f"{r['bytes']:>10,} {ratio:>7}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, ["module", "round", "p90", "open", "put", "close", "bytes"])
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
