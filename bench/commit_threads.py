#!/usr/bin/env python3
"""Durable commits from Python threads, against the disk's limit.

For each thread count (default 1, 2, 4, 8, 16, 32), a fresh database opened with
lamina.open(path, 'cs') (synchronous: each `db[k] = v` is a durable commit) and
that many threads, each writing 256-byte values under its own keys for
--seconds. The testfile loop (write 256 zero bytes, lseek 0, fsync; the same
loop as bench/testfile.py, in Python) runs on the disk of --dir for as long
(--seconds, or --testfile-ops operations) right before each thread count and
once after the last: this disk's fsync rate moves within minutes, so each row
is compared with the mean of the two runs around it, and it syncs a burst of
1000 faster than a run of seconds, so testfile runs as long as a row.
Printed per thread count: commits/s, WAL fsyncs (stats()['wal_syncs']), durable
commits per fsync, testfile before and after, commits/s as a multiple of their
mean and of one thread's commits/s, and the share of commits whose wait for
the sync began by yielding the CPU (stats()['commit_waits_yielded']). The
same as `lamina-bench commit`, from Python; --csv appends the rows.

    .venv/bin/python bench/commit_threads.py --dir /path/on/the/disk --seconds 3
"""
import argparse
import csv
import os
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from testfile import python_testfile_run  # noqa: E402

VALUE = bytes(256)


def run_threads(lamina, path, threads, seconds):
    """Commits by `threads` threads for `seconds`; returns (commits, secs, stats)."""
    db = lamina.open(path, "cs")
    counts = [0] * threads
    start = threading.Barrier(threads + 1)
    stop = threading.Event()

    def worker(t):
        n = 0
        start.wait()
        while not stop.is_set():
            db[b"t%02d-%09d" % (t, n)] = VALUE
            n += 1
        counts[t] = n

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    before = db.stats()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    secs = time.perf_counter() - t0
    after = db.stats()
    db.close()
    stats = {k: after.get(k, 0) - before.get(k, 0)
             for k in ("wal_syncs", "sync_commits", "commit_waits_yielded", "commit_waits_slept")}
    return sum(counts), secs, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=".", help="where the files go (the disk measured)")
    ap.add_argument("--threads", default="1,2,4,8,16,32")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--testfile-ops", type=int, default=None,
                    help="testfile's operations (default: it runs for --seconds)")
    ap.add_argument("--csv", help="append the rows to this CSV file")
    args = ap.parse_args()
    try:
        import lamina
    except ImportError:
        sys.exit("the lamina module is not installed (make py-build)")
    work = tempfile.mkdtemp(prefix="lamina-commit-", dir=args.dir)
    rows = []
    try:
        def testfile_rate():
            ops, secs = python_testfile_run(os.path.join(work, "testfile"), 256,
                                            ops=args.testfile_ops, seconds=args.seconds)
            return ops / secs

        length = (f"{args.testfile_ops} ops" if args.testfile_ops is not None
                  else f"{args.seconds:g} s")
        print(f"testfile (Python loop, {length}) right before each thread count "
              f"and after the last")
        print(f"{'threads':>7} {'commits/s':>10} {'fsyncs':>8} {'per fsync':>9} "
              f"{'tf before':>9} {'tf after':>9} {'x testfile':>10} {'x 1 thread':>10} "
              f"{'yielding':>8}")
        one = None
        before = testfile_rate()
        for threads in [int(t) for t in args.threads.split(",")]:
            path = os.path.join(work, f"db-{threads}")
            commits, secs, stats = run_threads(lamina, path, threads, args.seconds)
            shutil.rmtree(path, ignore_errors=True)
            after = testfile_rate()
            testfile = (before + after) / 2
            rate = commits / secs
            one = one or rate
            syncs = stats["wal_syncs"]
            per = stats["sync_commits"] / syncs if syncs else 0.0
            yielded, slept = stats["commit_waits_yielded"], stats["commit_waits_slept"]
            # The share of commits whose wait began by yielding the CPU.
            yielding = yielded / commits if commits else 0.0
            print(f"{threads:7d} {rate:10.0f} {syncs:8d} {per:9.1f} {before:9.0f} {after:9.0f} "
                  f"{rate / testfile:10.2f} {rate / one:10.2f} {yielding:8.2f}")
            rows.append(["lamina-python", threads, commits, f"{secs:.3f}", f"{rate:.1f}",
                         syncs, f"{per:.2f}", f"{testfile:.1f}", f"{rate / testfile:.3f}", "",
                         f"{before:.1f}", f"{after:.1f}", yielded, slept])
            before = after
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.csv:
        new = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(["engine", "threads", "commits", "seconds", "commits_per_s", "fsyncs",
                            "commits_per_fsync", "testfile_ops_per_s", "ratio_to_testfile",
                            "memlimit", "testfile_before_ops_per_s", "testfile_after_ops_per_s",
                            "waits_yielded", "waits_slept"])
            w.writerows(rows)


if __name__ == "__main__":
    main()
