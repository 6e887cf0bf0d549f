#!/usr/bin/env python3
"""The TPC-B transaction from Python: lamina (`db.transact`), the standard library's sqlite3
(WAL, synchronous=FULL) and py-lmdb (if importable), each in a process of its own, at 1 and 16
threads; the same data, transaction and invariant as `lamina-bench tpcb` (bench/README.md,
"TPC-B transactions: durable read-modify-write at 1 to 16 threads"), and the same table.

  bench/tpcb.py [--engines lamina,sqlite,lmdb] [--threads 1,16] [--seconds 5] [--branches 10]
                [--accounts-per-branch 10000] [--dir DIR] [--out DIR] [--csv FILE]
                [--no-testfile]

Every commit is durable: lamina with durability='sync', sqlite3 with synchronous=FULL in WAL
mode (BEGIN IMMEDIATE ... COMMIT, a connection per thread, busy timeout 10 s; "database is
locked" is a conflict, run again), LMDB with its default synced commits (one writer at a time).
Python's threads share the GIL: the engines release it while they wait for the disk, so
threads still add up to group commits where the engine makes them. Prints a Markdown table;
--out writes tpcb-python.md and tpcb-python.csv there (default $BENCH_OUT/tpcb, when BENCH_OUT
is set); --csv appends the rows to a file. testfile (bench/testfile.py's loop in Python) runs
for --seconds before the first engine and after each, and each engine's rate is also given as a
multiple of the mean of the two runs around it.
"""
import argparse
import csv
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testfile import python_testfile_run  # noqa: E402

ENGINES = ["lamina", "sqlite", "lmdb"]
RECORD = 100
TELLERS_PER_BRANCH = 10
LOAD_BATCH = 10_000
CSV_HEADER = ["engine", "threads", "txns", "seconds", "txns_per_s", "conflicts", "retried",
              "fsyncs", "written_bytes", "testfile_ops_per_s", "invariant"]


def key(kind, i):
    return kind + struct.pack(">I", i)


def record(balance):
    return struct.pack("<q", balance) + b" " * (RECORD - 8)


def balance(v):
    return struct.unpack_from("<q", v)[0]


def add(v, delta):
    if v is None:
        raise RuntimeError("a row is missing")
    return record(balance(bytes(v)) + delta)


class Draws:
    """One thread's transactions: a random account, branch and teller (each over all of its
    kind, as ex_tpcb draws them), a delta in [-999,999, 999,999], a history row."""

    def __init__(self, seed, scale, rnd, thread):
        self.r = random.Random(seed * 1_000_003 + rnd * 1009 + thread)
        self.branches, self.tellers, self.accounts = scale
        self.prefix = b"h" + struct.pack(">II", rnd, thread)
        self.n = 0

    def next(self):
        a = self.r.randrange(self.accounts)
        b = self.r.randrange(self.branches)
        t = self.r.randrange(self.tellers)
        delta = self.r.randrange(1_999_999) - 999_999
        h = self.prefix + struct.pack(">Q", self.n)
        self.n += 1
        row = struct.pack("<qIII", delta, a, b, t) + b" " * (RECORD - 20)
        return key(b"a", a), key(b"b", b), key(b"t", t), delta, h, row


def load_rows(scale):
    branches, tellers, accounts = scale
    for kind, n in ((b"a", accounts), (b"t", tellers), (b"b", branches)):
        for i in range(n):
            yield key(kind, i), record(0)


def batches(it, n):
    out = []
    for x in it:
        out.append(x)
        if len(out) == n:
            yield out
            out = []
    if out:
        yield out


def verdict(rows, committed):
    s = {b"a"[0]: 0, b"t"[0]: 0, b"b"[0]: 0, b"h"[0]: 0}
    hrows = 0
    for k, v in rows:
        k = bytes(k)
        s[k[0]] += balance(bytes(v))
        hrows += k[0] == b"h"[0]
    a, t, b, h = s[b"a"[0]], s[b"t"[0]], s[b"b"[0]], s[b"h"[0]]
    if a == t == b == h and hrows == committed:
        return "ok"
    return (f"FAILED: accounts {a} tellers {t} branches {b} history {h} "
            f"({hrows} rows; {committed} committed)")


def write_bytes():
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


# ----------------------------------------------------------------------------- the engines

class Lamina:
    describe = "durability='sync'; db.transact(fn) (optimistic; retries with back-off)"

    def __init__(self, path):
        import lamina
        self.db = lamina.open(path, "n", durability="sync")

    def load(self, rows):
        self.db.update(dict(rows))

    def worker(self):
        db = self.db

        def run(t):
            acc, br, te, delta, h, row = t
            calls = [0]

            def body(tx):
                calls[0] += 1
                for k in (acc, br, te):
                    tx[k] = add(tx.get(k), delta)
                tx[h] = row
            db.transact(body)
            return calls[0] - 1
        return run

    def rows(self):
        return self.db.items()

    def fsyncs(self):
        return self.db.stats().get("wal_syncs")

    def close(self):
        self.db.close()


class Sqlite:
    describe = ("stdlib sqlite3 %s: kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID, WAL, "
                "synchronous=FULL, a connection per thread, BEGIN IMMEDIATE ... COMMIT")

    def __init__(self, path):
        os.makedirs(path, exist_ok=True)
        self.path = os.path.join(path, "tpcb.sqlite")
        self.main = self.connect()
        self.main.execute("CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")

    def connect(self):
        import sqlite3
        c = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        mode = c.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise RuntimeError(f"journal_mode is {mode}, not wal")
        c.execute("PRAGMA synchronous=FULL")
        return c

    def load(self, rows):
        c = self.main
        c.execute("BEGIN IMMEDIATE")
        c.executemany("INSERT OR REPLACE INTO kv(k, v) VALUES (?, ?)", rows)
        c.execute("COMMIT")

    def worker(self):
        import sqlite3
        c = self.connect()

        def run(t):
            acc, br, te, delta, h, row = t
            conflicts = 0
            while True:
                try:
                    c.execute("BEGIN IMMEDIATE")
                    for k in (acc, br, te):
                        got = c.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchone()
                        c.execute("INSERT OR REPLACE INTO kv(k, v) VALUES (?, ?)",
                                  (k, add(got and got[0], delta)))
                    c.execute("INSERT INTO kv(k, v) VALUES (?, ?)", (h, row))
                    c.execute("COMMIT")
                    return conflicts
                except sqlite3.OperationalError as e:
                    if c.in_transaction:
                        c.execute("ROLLBACK")
                    if "locked" not in str(e) and "busy" not in str(e):
                        raise
                    conflicts += 1
        return run

    def rows(self):
        return self.main.execute("SELECT k, v FROM kv").fetchall()

    def fsyncs(self):
        return None

    def close(self):
        self.main.close()


class Lmdb:
    describe = "py-lmdb %s: default (synced) commits, one write transaction at a time"

    def __init__(self, path):
        import lmdb
        self.env = lmdb.open(path, map_size=1 << 32)

    def load(self, rows):
        with self.env.begin(write=True) as txn:
            for k, v in rows:
                txn.put(k, v)

    def worker(self):
        env = self.env

        def run(t):
            acc, br, te, delta, h, row = t
            with env.begin(write=True) as txn:
                for k in (acc, br, te):
                    txn.put(k, add(txn.get(k), delta))
                txn.put(h, row)
            return 0
        return run

    def rows(self):
        with self.env.begin() as txn:
            return [(bytes(k), bytes(v)) for k, v in txn.cursor()]

    def fsyncs(self):
        return None

    def close(self):
        self.env.close()


def describe(engine):
    if engine == "lamina":
        import lamina
        return f"lamina (Python, {getattr(lamina, '__version__', '?')}): {Lamina.describe}"
    if engine == "sqlite":
        import sqlite3
        return "sqlite: " + Sqlite.describe % sqlite3.sqlite_version
    import lmdb
    return "lmdb: " + Lmdb.describe % lmdb.__version__


def importable(engine):
    mod = {"lamina": "lamina", "sqlite": "sqlite3", "lmdb": "lmdb"}[engine]
    try:
        __import__(mod)
        return None
    except ImportError as e:
        return f"{engine}: skipped, cannot import {mod} ({e})"


# ----------------------------------------------------------------------------- the child

def child(a, scale):
    path = os.path.join(a.dir, a.child)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(a.dir, exist_ok=True)
    db = {"lamina": Lamina, "sqlite": Sqlite, "lmdb": Lmdb}[a.child](path)
    t0 = time.monotonic()
    for b in batches(load_rows(scale), LOAD_BATCH):
        db.load(b)
    print(f"tpcb.py: {a.child}: loaded in {time.monotonic() - t0:.2f} s", file=sys.stderr)
    committed = 0
    for rnd, threads in enumerate(a.threads):
        counts = [[0, 0, 0] for _ in range(threads)]
        errors = []
        f0, w0 = db.fsyncs(), write_bytes()
        start = time.monotonic()

        def work(i):
            try:
                run = db.worker()
                d = Draws(a.seed, scale, rnd, i)
                c = counts[i]
                while time.monotonic() - start < a.seconds:
                    n = run(d.next())
                    c[0] += 1
                    c[1] += n
                    c[2] += n > 0
            except Exception as e:  # reported, and the row fails
                errors.append(f"{type(e).__name__}: {e}")

        ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        secs = time.monotonic() - start
        if errors:
            print(f"tpcb.py: {a.child}: {errors[0]}", file=sys.stderr)
            return 1
        f1, w1 = db.fsyncs(), write_bytes()
        txns = sum(c[0] for c in counts)
        committed += txns
        inv = verdict(db.rows(), committed)
        fs = "-" if f0 is None or f1 is None else f1 - f0
        wr = "-" if w0 is None or w1 is None else w1 - w0
        print(f"row,{a.child}-python,{threads},{txns},{secs:.6f},{sum(c[1] for c in counts)},"
              f"{sum(c[2] for c in counts)},{fs},{wr},{inv.replace(',', ';')}", flush=True)
    db.close()
    shutil.rmtree(path, ignore_errors=True)
    return 0


# ----------------------------------------------------------------------------- the driver

def parse_row(line):
    if not line.startswith("row,"):
        return None
    f = line[4:].split(",", 8)
    if len(f) != 9:
        return None
    num = lambda s: None if s == "-" else int(s)
    return {"engine": f[0], "threads": int(f[1]), "txns": int(f[2]), "secs": float(f[3]),
            "conflicts": int(f[4]), "retried": int(f[5]), "fsyncs": num(f[6]),
            "written": num(f[7]), "invariant": f[8]}


def testfile_rate(a):
    """testfile (write 256 B + lseek + fsync, in Python) for --seconds, ops/s; None with
    --no-testfile."""
    if a.no_testfile:
        return None
    ops, secs = python_testfile_run(os.path.join(a.dir, "tpcb.testfile"), 256,
                                    seconds=max(a.seconds, 0.1))
    return ops / secs if secs else None


def targets(rows, tf):
    """The issue's targets, as lines."""
    out = []
    lam = {r["threads"]: r for r in rows if r["engine"] == "lamina-python"}
    rate = lambda r: r["txns"] / r["secs"] if r["secs"] else 0.0
    if 1 in lam and tf.get("lamina-python"):
        x = rate(lam[1]) / tf["lamina-python"]
        out.append(f"- lamina at 1 thread / testfile: {x:.2f} (target >= 0.9: "
                   f"{'met' if x >= 0.9 else 'NOT met'})")
    if 1 in lam and 16 in lam and rate(lam[1]) > 0:
        x = rate(lam[16]) / rate(lam[1])
        out.append(f"- lamina at 16 threads / at 1 thread: {x:.2f} (target >= 8: "
                   f"{'met' if x >= 8 else 'NOT met'})")
    for t, l in sorted(lam.items()):
        peers = [r for r in rows if r["threads"] == t and r["engine"] != "lamina-python"]
        if peers:
            best = max(peers, key=rate)
            x = rate(l) / max(rate(best), 1e-300)
            out.append(f"- {t} threads: lamina / best peer ({best['engine']}): {x:.2f} "
                       f"(target >= 1: {'met' if x >= 1 else 'NOT met'})")
    return out


def render(a, scale, rows, described, notes, tf):
    branches, tellers, accounts = scale
    out = [f"# TPC-B (ex_tpcb's transaction) from Python, durable commits\n",
           f"{branches} branches, {tellers} tellers, {accounts} accounts (100-byte rows); one "
           f"transaction: read+update account, branch, teller, put a history row, commit "
           f"durably; {a.seconds} s per thread count; conflicts retried.\n"]
    out += [f"- {d}" for d in described]
    out += ["", "| engine | threads | txn/s | conflicts/txn | retried/txn | fsyncs/txn | "
            "written B/txn | x testfile | invariant |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        n = max(r["txns"], 1)
        rate = r["txns"] / r["secs"] if r["secs"] else 0.0
        fs = "n/a" if r["fsyncs"] is None else f"{r['fsyncs'] / n:.3f}"
        wr = "n/a" if r["written"] is None else f"{r['written'] / n:.0f}"
        x = f"{rate / tf[r['engine']]:.2f}" if tf.get(r["engine"]) else "n/a"
        out.append(f"| {r['engine']} | {r['threads']} | {rate:.0f} | {r['conflicts'] / n:.3f} | "
                   f"{r['retried'] / n:.3f} | {fs} | {wr} | {x} | {r['invariant']} |")
    if tf:
        out += ["", f"testfile (Python: write 256 B + lseek + fsync, {a.seconds} s runs before "
                "the first engine and after each; each engine against the mean of the two "
                "around it):"]
        out += [f"- around {e}: {r:.0f} fsyncs/s" for e, r in tf.items()]
    out += ["", "Targets:"] + targets(rows, tf)
    if notes:
        out += ["", "Notes:"] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--threads", default="1,16")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--branches", type=int, default=10)
    p.add_argument("--accounts-per-branch", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dir", help="where the databases go (default: a temporary directory)")
    p.add_argument("--out", default=(os.path.join(os.environ["BENCH_OUT"], "tpcb")
                                     if os.environ.get("BENCH_OUT") else None))
    p.add_argument("--csv", help="append the rows to this CSV file")
    p.add_argument("--no-testfile", action="store_true",
                   help="skip testfile (the write + fsync loop run around each engine)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    return p


def main(argv=None):
    p = parser()
    a = p.parse_args(argv)
    a.threads = [max(1, int(t)) for t in a.threads.split(",") if t]
    if a.branches < 1 or a.accounts_per_branch < 1:
        p.error("--branches and --accounts-per-branch: at least 1")
    scale = (a.branches, a.branches * TELLERS_PER_BRANCH, a.branches * a.accounts_per_branch)
    if a.child:
        return child(a, scale)
    engines = [e for e in a.engines.split(",") if e]
    for e in engines:
        if e not in ENGINES:
            p.error(f"unknown engine {e}; these are: {', '.join(ENGINES)}")
    tmp = None
    if not a.dir:
        tmp = a.dir = tempfile.mkdtemp(prefix="tpcb-py.")
    os.makedirs(a.dir, exist_ok=True)
    rows, notes, described, tf = [], [], [], {}
    try:
        before = testfile_rate(a)
        for e in engines:
            why = importable(e)
            if why:
                print(f"tpcb.py: {why}", file=sys.stderr)
                notes.append(why)
                continue
            described.append(describe(e))
            rows += run_engine(a, e, notes)
            after = testfile_rate(a)
            if before and after:
                tf[e + "-python"] = (before + after) / 2
            before = after
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    table = render(a, scale, rows, described, notes, tf)
    sys.stdout.write(table)
    write_results(a, table, csv_lines(rows, tf))
    failed = any(r["invariant"] != "ok" for r in rows) or any("failed" in n for n in notes)
    return 1 if failed else 0


def run_engine(a, e, notes):
    """Runs engine `e` at every thread count in a child process; returns its rows, and adds
    a note for a child that failed and for each row whose invariant does not hold."""
    args = [sys.executable, os.path.abspath(__file__), "--child", e, "--threads",
            ",".join(map(str, a.threads)), "--seconds", str(a.seconds), "--branches",
            str(a.branches), "--accounts-per-branch", str(a.accounts_per_branch),
            "--seed", str(a.seed), "--dir", a.dir]
    r = subprocess.run(args, stdout=subprocess.PIPE, text=True)
    got = [x for x in map(parse_row, r.stdout.splitlines()) if x]
    if r.returncode != 0:
        notes.append(f"{e}: failed (exit {r.returncode}) after {len(got)} row(s)")
    for x in got:
        if x["invariant"] != "ok":
            notes.append(f"{e} at {x['threads']} threads: INVARIANT {x['invariant']}")
    return got


def csv_lines(rows, tf):
    """The rows as CSV_HEADER's columns."""
    return [[r["engine"], r["threads"], r["txns"], f"{r['secs']:.6f}",
             f"{r['txns'] / r['secs'] if r['secs'] else 0:.1f}", r["conflicts"], r["retried"],
             "" if r["fsyncs"] is None else r["fsyncs"],
             "" if r["written"] is None else r["written"],
             f"{tf[r['engine']]:.0f}" if tf.get(r["engine"]) else "", r["invariant"]]
            for r in rows]


def write_results(a, table, lines):
    """The table and the CSV rows into --out (tpcb-python.md, .csv), the rows appended to
    --csv (with a header when the file is new or empty)."""
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "tpcb-python.md"), "w") as f:
            f.write(table)
        with open(os.path.join(a.out, "tpcb-python.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(CSV_HEADER)
            w.writerows(lines)
    if a.csv:
        new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
        with open(a.csv, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(CSV_HEADER)
            w.writerows(lines)


if __name__ == "__main__":
    sys.exit(main())
