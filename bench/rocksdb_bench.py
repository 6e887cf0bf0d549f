#!/usr/bin/env python3
"""RocksDB's own db_bench (Debian rocksdb-tools) on the workloads lamina is compared with.

Runs `db_bench --benchmarks=fillseq,fillrandom,readrandom,overwrite --num=N` once per key/value
size pair (default 16/100, the dbm workloads' sizes, and 8/8, db-insert's), parses its result
lines and prints a table; --csv appends them. db_bench's other options are its defaults (Snappy
compression, values half compressible, WAL on without fsync, 8 MiB block cache); pass more after
`--`. fillseq and fillrandom each start from an empty database; readrandom reads and overwrite
rewrites the database fillrandom made (random keys drawn with replacement, so about 63% of
readrandom's lookups find a key).

Note: Debian's db_bench is built with assertions enabled and says so ("benchmarks unnecessarily
slow"); its figures understate a release build of RocksDB.
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MEMLIMIT = os.environ.get("LAMINA_MEMLIMIT") or os.path.join(HERE, "memlimit")

LINE = re.compile(r"^(?P<name>\w+)\s*:\s*(?P<us>[\d.]+) micros/op (?P<ops_s>\d+) ops/sec"
                  r"(?: (?P<secs>[\d.]+) seconds (?P<ops>\d+) operations;)?"
                  r"(?:\s*(?P<mbs>[\d.]+) MB/s)?(?:.*?\((?P<found>\d+) of (?P<of>\d+) found\))?")
VERSION = re.compile(r"^RocksDB:\s+version\s+(\S+)")


def find_db_bench():
    for name in ("db_bench", "rocksdb_bench"):
        p = shutil.which(name)
        if p:
            return p
    return None


def parse(text):
    version = None
    rows = []
    for ln in text.splitlines():
        m = VERSION.match(ln)
        if m:
            version = m.group(1)
        m = LINE.match(ln)
        if m:
            d = m.groupdict()
            rows.append({"benchmark": d["name"], "micros_per_op": float(d["us"]),
                         "ops_per_s": int(d["ops_s"]),
                         "seconds": float(d["secs"]) if d["secs"] else None,
                         "ops": int(d["ops"]) if d["ops"] else None,
                         "mb_per_s": float(d["mbs"]) if d["mbs"] else None,
                         "found": int(d["found"]) if d["found"] else None})
    return version, rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num", type=int, default=1000000)
    p.add_argument("--sizes", default="16/100,8/8",
                   help="comma-separated key/value byte sizes (default 16/100,8/8)")
    p.add_argument("--benchmarks", default="fillseq,fillrandom,readrandom,overwrite")
    p.add_argument("--cache-size", type=int, help="block cache bytes (db_bench --cache_size)")
    p.add_argument("--memlimit", help="cap db_bench's memory at SIZE (bench/memlimit, a cgroup memory cap)")
    p.add_argument("--db-bench", help="db_bench binary (default: db_bench on PATH)")
    p.add_argument("--tmpdir", help="where the database goes (/tmp)")
    p.add_argument("--csv", help="append results to this CSV file")
    p.add_argument("extra", nargs="*", help="more db_bench options, after --")
    args = p.parse_args(argv)

    exe = args.db_bench or find_db_bench()
    if not exe:
        print("skipped RocksDB db_bench: not found (Debian rocksdb-tools; bench/setup installs it)")
        return 0
    results = []
    version = None
    for pair in args.sizes.split(","):
        k, v = (int(x) for x in pair.split("/"))
        dbdir = tempfile.mkdtemp(prefix="db_bench.", dir=args.tmpdir)
        cmd = [exe, f"--benchmarks={args.benchmarks}", f"--key_size={k}", f"--value_size={v}",
               f"--num={args.num}", f"--db={dbdir}", "--progress_reports=false"]
        if args.cache_size:
            cmd.append(f"--cache_size={args.cache_size}")
        cmd += args.extra
        if args.memlimit:
            cmd = [MEMLIMIT, args.memlimit] + cmd
        print(f"db_bench key {k} B, value {v} B, num {args.num:,}"
              + (f", memory capped at {args.memlimit}" if args.memlimit else ""),
              file=sys.stderr, flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ver, rows = parse(proc.stdout + "\n" + proc.stderr)
        version = version or ver
        size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(dbdir) for f in fs)
        shutil.rmtree(dbdir, ignore_errors=True)
        if proc.returncode != 0 or not rows:
            print(f"db_bench failed (status {proc.returncode}): {proc.stderr.strip()[-500:]}",
                  file=sys.stderr)
            continue
        for r in rows:
            r.update(key_size=k, value_size=v, num=args.num, bytes_on_disk=size)
            results.append(r)

    print(f"RocksDB db_bench {version or '?'} (Debian build, assertions enabled)")
    hdr = f"{'key/value':>9}  {'benchmark':<11} {'ops/s':>10} {'micros/op':>10} {'MB/s':>7}  found"
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        found = f"{r['found']:,}/{r['ops']:,}" if r["found"] is not None else ""
        mbs = f"{r['mb_per_s']:.1f}" if r["mb_per_s"] is not None else ""
        print(f"{r['key_size']:>4}/{r['value_size']:<4}  {r['benchmark']:<11} "
              f"{r['ops_per_s']:>10,} {r['micros_per_op']:>10.3f} {mbs:>7}  {found}")
    if args.csv:
        new = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
        with open(args.csv, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(["engine", "version", "key_size", "value_size", "num", "benchmark",
                            "ops_per_s", "micros_per_op", "mb_per_s", "found",
                            "bytes_on_disk_after", "memlimit"])
            for r in results:
                w.writerow(["rocksdb-db_bench", version or "", r["key_size"], r["value_size"],
                            r["num"], r["benchmark"], r["ops_per_s"], r["micros_per_op"],
                            r["mb_per_s"] if r["mb_per_s"] is not None else "",
                            r["found"] if r["found"] is not None else "",
                            r["bytes_on_disk"], args.memlimit or ""])
    return 0


if __name__ == "__main__":
    sys.exit(main())
