"""Single loops of dbm-benchmark-style point operations from Python, for A/B
comparisons of two builds and for profiling one loop at a time.

  python bench/point_loops.py reads [--flush] [-n N]
      fills N keys ('%016d' % i, 100-byte values) in order, closes (with
      --flush: flushes the memtable first, so no WAL is replayed on open),
      then after each fresh read-only open reads every key once: in order
      twice (cold, sequential), then shuffled; prints ops/s of each pass.
  python bench/point_loops.py fill {sequential,random} [-n N] [--rounds R]
      times R fills of N keys into a fresh database; prints ops/s of each.
  python bench/point_loops.py read-loop [-n N] [--rounds R]
      fills, reopens read-only and reads every key in order R times (one
      long loop to put under `perf record`).
  python bench/point_loops.py table-reads [-n N] [--rounds R] [--shuffle]
      fills N keys in order and closes; then R times: opens read-only and
      reads, in order (or shuffled), only the keys the tables hold (the
      oldest ones: as many as the tables' entries; the others are replayed
      into the memtable); prints ops/s and ns per read of each pass.
  python bench/point_loops.py first-read [-n N] [--rounds R]
      R times: fills N keys in order into a fresh database and, without
      closing it, times its first point read (which builds the memtable's
      hash index: no lookup came before) and the next one; prints both
      and the entries then in the memtable.
  python bench/point_loops.py scan [-n N] [--rounds R]
      puts N keys in a random order into a fresh database (with the default
      64 MiB memtable, 300,000 keys stay in the memtable, in six skip
      lists), then iterates db.items() R times; prints pairs/s of each.
  python bench/point_loops.py delete [-n N] [--rounds R]
      R times: fills N keys in order into a fresh database, closes, reopens
      it ('w'), reads every key once, then times `del db[k]` of every key in
      order (the dbm benchmark's delete_sequential); prints ops/s.
  python bench/point_loops.py large [-n N] [--rounds R] [--hot R2]
      the dbm benchmark's large values (N keys, default 1,000, of 100,000 bytes,
      slices of one random MiB): R times, fills a fresh database and prints
      the milliseconds of the fill and of close(); with --hot, then reopens
      read-only and reads a random 1% of the keys 100 times, R2 times over,
      printing ops/s of each pass.

The module imported is whatever python/lamina holds, so two builds are
compared by copying each one's _lamina.abi3.so there in turn.
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


def fill(path, keys):
    db = lamina.open(path, "c")
    t0 = time.perf_counter()
    for k in keys:
        db[k] = VALUE
    rate = len(keys) / (time.perf_counter() - t0)
    return db, rate


def reads(args, keys, work):
    db, _ = fill(work + "/db", keys)
    if args.flush:
        db.flush()
    db.close()
    shuffled = keys[:]
    random.Random(1).shuffle(shuffled)
    out = []
    for name, ks in (("cold", keys), ("sequential", keys), ("random", shuffled)):
        db = lamina.open(work + "/db", "r")
        t0 = time.perf_counter()
        for k in ks:
            db[k]
        out.append(f"{name} {len(ks) / (time.perf_counter() - t0):,.0f}")
        db.close()
    print("  ".join(out))


def fills(args, keys, work):
    if args.order == "random":
        random.Random(2).shuffle(keys)
    for r in range(args.rounds):
        db, rate = fill(f"{work}/db{r}", keys)
        db.close()
        print(f"fill_{args.order} {rate:,.0f}")


def read_loop(args, keys, work):
    db, _ = fill(work + "/db", keys)
    db.close()
    db = lamina.open(work + "/db", "r")
    t0 = time.perf_counter()
    for _ in range(args.rounds):
        for k in keys:
            db[k]
    print(f"read loop {args.rounds * len(keys) / (time.perf_counter() - t0):,.0f}")
    db.close()


def table_reads(args, keys, work):
    db, _ = fill(work + "/db", keys)
    db.close()
    for r in range(args.rounds):
        db = lamina.open(work + "/db", "r")
        if r == 0:
            in_tables = sum(level["entries"] for level in db.stats()["levels"])
            ks = keys[:in_tables]
            if args.shuffle:
                random.Random(3).shuffle(ks)
        t0 = time.perf_counter()
        for k in ks:
            db[k]
        dt = time.perf_counter() - t0
        print(f"table reads {len(ks) / dt:,.0f}  {dt / len(ks) * 1e9:.0f} ns ({len(ks):,} keys)")
        db.close()


def first_read(args, keys, work):
    for r in range(args.rounds):
        db, _ = fill(f"{work}/db{r}", keys)
        t0 = time.perf_counter()
        db[keys[-1]]
        t1 = time.perf_counter()
        db[keys[-2]]
        t2 = time.perf_counter()
        in_tables = sum(level["entries"] for level in db.stats()["levels"])
        print(f"first read {(t1 - t0) * 1e3:.1f} ms  next {(t2 - t1) * 1e6:.1f} us"
              f"  ({len(keys) - in_tables:,} entries in memtables)")
        db.close()


def scan(args, keys, work):
    random.Random(5).shuffle(keys)
    db, _ = fill(work + "/db", keys)
    out = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        count = sum(1 for _ in db.items())
        out.append(f"{count / (time.perf_counter() - t0):,.0f}")
    print("scan " + " ".join(out))
    db.close()


def deletes(args, keys, work):
    for r in range(args.rounds):
        db, _ = fill(f"{work}/db{r}", keys)
        db.close()
        db = lamina.open(f"{work}/db{r}", "w")
        for k in keys:
            db[k]
        t0 = time.perf_counter()
        for k in keys:
            del db[k]
        print(f"delete_sequential {len(keys) / (time.perf_counter() - t0):,.0f}")
        db.close()


def large(args, keys, work):
    buf = random.Random(100).randbytes(1 << 20)
    span = (1 << 20) - 100_000
    values = [buf[(i * 100_000) % span:][:100_000] for i in range(len(keys))]
    for r in range(args.rounds):
        db = lamina.open(f"{work}/db{r}", "c")
        t0 = time.perf_counter()
        for k, v in zip(keys, values):
            db[k] = v
        t1 = time.perf_counter()
        db.close()
        t2 = time.perf_counter()
        print(f"fill {(t1 - t0) * 1000:.1f} ms  close {(t2 - t1) * 1000:.1f} ms")
    if args.hot:
        db = lamina.open(f"{work}/db0", "r")
        hot = random.Random(1).sample(keys, max(1, len(keys) // 100)) * 100
        for _ in range(args.hot):
            t0 = time.perf_counter()
            for k in hot:
                db[k]
            print(f"read_hot {len(hot) / (time.perf_counter() - t0):,.0f}")
        db.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reads")
    r.add_argument("--flush", action="store_true")
    f = sub.add_parser("fill")
    f.add_argument("order", choices=["sequential", "random"])
    f.add_argument("--rounds", type=int, default=1)
    loop = sub.add_parser("read-loop")
    loop.add_argument("--rounds", type=int, default=25)
    big = sub.add_parser("large")
    big.add_argument("--rounds", type=int, default=3)
    big.add_argument("--hot", type=int, default=0)
    big.add_argument("-n", type=int, default=1_000)
    sc = sub.add_parser("scan")
    sc.add_argument("--rounds", type=int, default=3)
    sc.add_argument("-n", type=int, default=300_000)
    tr = sub.add_parser("table-reads")
    tr.add_argument("--rounds", type=int, default=3)
    tr.add_argument("--shuffle", action="store_true")
    fr = sub.add_parser("first-read")
    fr.add_argument("--rounds", type=int, default=3)
    de = sub.add_parser("delete")
    de.add_argument("--rounds", type=int, default=3)
    for p in (r, f, loop, tr, fr, de):
        p.add_argument("-n", type=int, default=1_000_000)
    args = ap.parse_args()
    keys = [b"%016d" % i for i in range(args.n)]
    work = tempfile.mkdtemp(prefix="point_loops_")
    try:
        {"reads": reads, "fill": fills, "read-loop": read_loop, "scan": scan,
         "delete": deletes, "large": large, "table-reads": table_reads, "first-read": first_read}[args.cmd](
            args, keys, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
