#!/usr/bin/env python3
"""Resident memory of a Python process using lamina under a memory budget.

    make py-build
    .venv/bin/python bench/py_memory_budget.py --budget 128M --writes 4000000 --reads 1000000

Opens a new database with `memory_budget`, writes `--writes` records with
random 16-byte keys and 100-byte values, then reads `--reads` random keys
(about two in three of them present, as in db_bench), and prints the
process's resident set before opening, its peak (`ru_maxrss`), the peak's
growth and that growth as a multiple of the budget, with what `stats()`
says the budget charged. Exits 1 when the growth passes `--limit` times
the budget (default 1.25).
"""

import argparse
import os
import random
import resource
import shutil
import sys
import tempfile
import time

import lamina


def size(s):
    """`128M`, `1G`, `512K` or a plain number of bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper().rstrip("B").rstrip("I")
    if s and s[-1] in units:
        return int(float(s[:-1]) * units[s[-1]])
    return int(s)


def rss_now():
    """Resident set of this process now, in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss():
    """Peak resident set of this process so far, in bytes (Linux: KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=size, default=128 << 20)
    p.add_argument("--writes", type=int, default=4_000_000)
    p.add_argument("--reads", type=int, default=1_000_000)
    p.add_argument("--dir", help="where to make the database (default: a temporary directory)")
    p.add_argument("--limit", type=float, default=1.25)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    value = rng.randbytes(50) * 2
    base = a.dir or tempfile.mkdtemp(prefix="lamina-mem-")
    path = os.path.join(base, "db.lamina")
    shutil.rmtree(path, ignore_errors=True)
    # Everything the run needs is allocated before the baseline is taken.
    space = a.writes * 3 // 2
    before = rss_now()
    t = time.time()
    db = lamina.open(path, "n", memory_budget=a.budget, durability="none")
    for _ in range(a.writes):
        db[rng.randrange(space).to_bytes(16, "big")] = value
    t_write = time.time() - t
    found = 0
    t = time.time()
    for _ in range(a.reads):
        if db.get(rng.randrange(space).to_bytes(16, "big")) is not None:
            found += 1
    t_read = time.time() - t
    s = db.stats()
    db.close()
    peak = peak_rss()
    growth = peak - before
    ratio = growth / a.budget
    print(f"budget           {a.budget / 2**20:.1f} MiB")
    print(f"writes           {a.writes:,} in {t_write:.1f} s; reads {a.reads:,} "
          f"({found:,} found) in {t_read:.1f} s")
    print(f"rss before open  {before / 2**20:.1f} MiB")
    print(f"peak rss         {peak / 2**20:.1f} MiB")
    print(f"peak growth      {growth / 2**20:.1f} MiB = {ratio:.2f}x the budget (limit {a.limit}x)")
    print(f"stats            cache capacity {s['cache_capacity'] / 2**20:.1f} MiB, "
          f"charged {s['memory_charged_bytes'] / 2**20:.1f} MiB, "
          f"delayed {s['write_delay_micros'] / 1e6:.1f} s, stops {s['write_stops']}")
    if not a.dir:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if ratio > a.limit else 0)


if __name__ == "__main__":
    main()
