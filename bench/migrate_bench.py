#!/usr/bin/env python3
"""Migration into lamina: a gdbm file and a Berkeley DB file loaded directly, beside a dump
piped into `lamina load`.

  migrate_bench.py [-n N] [--lamina PATH] [--tmpdir DIR] [--csv FILE]

Makes a gdbm database and a Berkeley DB btree database of N records (default 2^20; key i =
'%016d' % i, a 100-byte value cut from one random buffer) with the libraries' own loaders
(`gdbm_load`, `db5.3_load`, from a generated dump; not timed), then times, each into a fresh
lamina database:

  gdbm direct        lamina load DB x.gdbm        (lamina runs gdbm_dump itself)
  gdbm pipe          gdbm_dump x.gdbm | lamina load DB
  bdb direct         lamina load DB x.db          (db5.3_dump, run by lamina)
  bdb pipe           db5.3_dump x.db | lamina load DB
  gdbm migrate()     lamina.migrate('x.gdbm', DB) from Python, where lamina and dbm.gnu import

and checks that every lamina database holds N records (`lamina count`). Prints seconds and
records per second of each. A row whose tools are missing is skipped with a message (Debian:
gdbmtool, db5.3-util; `make test-deps` installs them). Run it alone on the machine.
"""
import argparse
import base64
import csv
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "adapters"))


def records(n):
    buf = random.Random(100).randbytes(1 << 20)
    for i in range(n):
        at = (i * 100) % ((1 << 20) - 100)
        yield b"%016d" % i, buf[at:at + 100]


def gdbm_dump_text(n, out):
    out.write(b"# GDBM dump file created by migrate_bench.py\n#:version=1.1\n"
              b"#:format=standard\n# End of header\n")
    for k, v in records(n):
        for d in (k, v):
            out.write(b"#:len=%d\n%s\n" % (len(d), base64.b64encode(d)))
    out.write(b"#:count=%d\n# End of data\n" % n)


def bdb_dump_text(n, out):
    out.write(b"VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n")
    for k, v in records(n):
        out.write(b" %s\n %s\n" % (k.hex().encode(), v.hex().encode()))
    out.write(b"DATA=END\n")


def make_file(tool_args, writer, n, work, name):
    """Writes a dump with `writer`, loads it with the tool; returns the file's path."""
    dump = os.path.join(work, name + ".dump")
    with open(dump, "wb") as f:
        writer(n, f)
    path = os.path.join(work, name)
    with open(dump, "rb") as f:
        subprocess.run(tool_args + [path] if tool_args[0] != "gdbm_load"
                       else tool_args + [dump, path], stdin=f, check=True)
    os.remove(dump)
    return path


def timed(shell_cmd):
    t0 = time.perf_counter()
    subprocess.run(shell_cmd, shell=True, check=True, executable="/bin/bash")
    return time.perf_counter() - t0


def count(lamina, db):
    out = subprocess.run([lamina, "count", db], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0].replace(",", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=1 << 20)
    ap.add_argument("--lamina", default=shutil.which("lamina") or "target/release/lamina")
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()
    lamina = os.path.abspath(args.lamina)
    if not os.access(lamina, os.X_OK):
        ap.error(f"no lamina binary at {args.lamina}; build it (cargo build --release -p "
                 "lamina-cli) or give --lamina PATH")
    work = tempfile.mkdtemp(dir=args.tmpdir)
    rows = []
    try:
        q = f"{lamina} -q load"
        sources = []
        if shutil.which("gdbm_load") and shutil.which("gdbm_dump"):
            g = make_file(["gdbm_load"], gdbm_dump_text, args.n, work, "x.gdbm")
            sources.append(("gdbm", g, "gdbm_dump"))
        else:
            print("skipped: gdbm rows (gdbm_load, gdbm_dump: Debian package gdbmtool)")
        if shutil.which("db5.3_load") and shutil.which("db5.3_dump"):
            b = make_file(["db5.3_load"], bdb_dump_text, args.n, work, "x.db")
            sources.append(("bdb", b, "db5.3_dump"))
        else:
            print("skipped: bdb rows (db5.3_load, db5.3_dump: Debian package db5.3-util)")
        for name, src, dump in sources:
            for how, cmd in (("direct", f"{q} {{db}} {src}"),
                             ("pipe", f"{dump} {src} | {q} {{db}}")):
                db = os.path.join(work, f"{name}-{how}.lamina")
                secs = timed(cmd.format(db=db))
                assert count(lamina, db) == args.n, f"{name} {how}: not {args.n} records"
                rows.append((f"{name} {how}", secs))
                shutil.rmtree(db)
        gnu_src = next((s for n, s, _ in sources if n == "gdbm"), None)
        if gnu_src:
            try:
                import gdbm_dbm  # noqa: F401  (makes dbm.gnu importable where Debian has it)
                import lamina as lam
            except ImportError as e:
                print(f"skipped: gdbm migrate() ({e})")
            else:
                db = os.path.join(work, "gdbm-migrate.lamina")
                t0 = time.perf_counter()
                lam.migrate(gnu_src, db)
                rows.append(("gdbm migrate()", time.perf_counter() - t0))
                assert count(lamina, db) == args.n
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"migration of {args.n:,} records into lamina")
    print(f"{'source':<16} {'seconds':>9} {'records/s':>12}")
    for name, secs in rows:
        print(f"{name:<16} {secs:>9.2f} {args.n / secs:>12,.0f}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["source", "seconds", "records_per_second"])
            w.writerows((n, f"{s:.3f}", f"{args.n / s:.0f}") for n, s in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
