#!/usr/bin/env python3
"""testfile, durable commits' hardware limit: write(fd, 256 zero bytes), lseek(fd, 0), fsync(fd),
1000 times.

Runs bench/testfile.c (compiled with cc into --build-dir when a C compiler is present) and the
same loop in Python (os.write, os.lseek, os.fsync); prints ops/s for each and --csv appends
them. The file goes in --dir (default: the current directory), so it measures that disk.
The fsync rate of a shared or virtual disk moves a lot from second to second, so the pair is
run --repeat times (default 5), alternating, and the median is the figure to use.
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def python_testfile(path, nbytes, ops):
    """Seconds taken by `ops` operations."""
    return python_testfile_run(path, nbytes, ops=ops)[1]


def python_testfile_run(path, nbytes, ops=None, seconds=None):
    """testfile for `ops` operations, or else until `seconds` have passed:
    (operations done, seconds taken)."""
    buf = bytes(nbytes)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    done = 0
    try:
        t0 = time.perf_counter()
        while (done < ops) if ops is not None else (time.perf_counter() - t0 < seconds):
            os.write(fd, buf)
            os.lseek(fd, 0, os.SEEK_SET)
            os.fsync(fd)
            done += 1
        secs = time.perf_counter() - t0
    finally:
        os.close(fd)
        os.unlink(path)
    return done, secs


def build_c(build_dir):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    exe = os.path.join(build_dir, "testfile")
    src = os.path.join(HERE, "testfile.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        os.makedirs(build_dir, exist_ok=True)
        r = subprocess.run([cc, "-O2", "-o", exe, src], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"testfile.c did not compile: {r.stderr.strip()}", file=sys.stderr)
            return None
    return exe


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-b", "--bytes", type=int, default=256)
    p.add_argument("-o", "--ops", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=5, help="runs of each (default 5)")
    p.add_argument("--dir", default=".", help="directory whose disk is measured (default .)")
    p.add_argument("--build-dir", default=os.path.join(tempfile.gettempdir(), "lamina-bench"))
    p.add_argument("--csv", help="append results to this CSV file")
    a = p.parse_args(argv)

    rows = []  # (impl, run, seconds)
    exe = build_c(a.build_dir)
    if not exe:
        print("no C compiler: the C testfile is skipped", file=sys.stderr)
    for run in range(a.repeat):
        if exe:
            path = os.path.join(a.dir, f"testfile.{os.getpid()}.data")
            r = subprocess.run([exe, "-b", str(a.bytes), "-o", str(a.ops), "-f", path],
                               capture_output=True, text=True)
            if run == 0:
                sys.stdout.write(r.stdout)
            m = re.search(r"Elapsed time: ([\d.]+) seconds", r.stdout)
            if r.returncode == 0 and m:
                rows.append(("c", run, float(m.group(1))))
            else:
                print(f"testfile (C) failed: {r.stderr.strip()}", file=sys.stderr)
                exe = None
        path = os.path.join(a.dir, f"testfile.{os.getpid()}.py.data")
        rows.append(("python", run, python_testfile(path, a.bytes, a.ops)))

    print(f"{'testfile':<10} {'ops':>6} {'bytes':>6} {'runs':>5} {'median ops/s':>13} "
          f"{'min':>8} {'max':>8}")
    for impl in dict.fromkeys(x[0] for x in rows):
        rates = sorted(a.ops / secs for i, _, secs in rows if i == impl)
        print(f"{impl:<10} {a.ops:>6} {a.bytes:>6} {len(rates):>5} "
              f"{statistics.median(rates):>13,.0f} {rates[0]:>8,.0f} {rates[-1]:>8,.0f}")
    if a.csv:
        new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
        with open(a.csv, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(["impl", "run", "ops", "bytes", "seconds", "ops_per_s", "dir"])
            for impl, run, secs in rows:
                w.writerow([impl, run, a.ops, a.bytes, f"{secs:.6f}", f"{a.ops / secs:.1f}",
                            os.path.abspath(a.dir)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
