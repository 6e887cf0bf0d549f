#!/usr/bin/env python3
"""TokuDB's example workloads on Berkeley DB 5.3 through its Python binding (`berkeleydb`).

  tokudb_bdb.py insert [-n BATCHES] [-x] [--cachesize BYTES] [--bounded] [--dir DIR]
  tokudb_bdb.py scan DIR
  tokudb_bdb.py update [--ops N] [--cachesize BYTES]
  tokudb_bdb.py insert-multiple [--rows N] [--cachesize BYTES]

Each follows bench/README.md's definition and prints the original program's columns:

insert  8-byte big-endian keys and 8-byte values (the key's bytes); each batch is 2^20 serial
        inserts (key = i*64, i continuing across batches) then 2^20 random inserts (random
        64-bit keys; --bounded draws them below the serial keys' bound instead, as TokuDB's C
        program does: llrandom() % ((i+2^20)*64)); 4 batches by default; cache 1 GiB; no
        transactions unless -x (then a durable commit every 16,384 puts). Per batch: serial
        time and rate, random time and rate, cumulative time and rate; then the shutdown time
        and `Total time ... for N insertions = R/s`, the total including close.
scan    reads every row in key order with a cursor, twice, inside one read transaction when the
        environment has transactions; prints bytes (key + value lengths), rows, seconds, MB/s.
update  key = two 4-byte big-endian ints, each random() % 1,000,000; value = 8-byte counter
        (little-endian u64, as lamina's `add` merge operand); each op adds 1 by get + put;
        100 ops per durable commit; default 10^9 ops (--ops); prints every 100,000 ops:
        ops done, seconds for the interval, interval rate, overall rate.
insert-multiple  primary key = row number (8 bytes big-endian), value = three random values in
        0..100,000 (3 x 8 bytes big-endian); three secondary indexes keyed on each value + the
        primary key (empty values); all four written in one durable transaction per 1000 rows;
        default 10^8 rows; reports every 100,000 rows.

The Python layer adds its own cost per operation (about a microsecond): those figures are a floor
for Berkeley DB. `--impl c` runs insert and update as a C program instead (bench/tokudb_bdb.c,
compiled here against Debian's libdb5.3-dev): Berkeley DB's own speed, the figure to compare
with. Run under `bench/memlimit 512M` (a cgroup memory cap) to see the data outgrow memory, the
point of TokuDB's examples; --csv appends the rows printed.
"""
import argparse
import csv
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

try:
    from berkeleydb import db
except ImportError:
    db = None

BATCH = 1 << 20
SERIAL_SPACING = 1 << 6
ITEMS_PER_TRANSACTION = 1 << 14
INSERT_CSV = ["engine", "batch", "serial_s", "serial_per_s", "random_s", "random_per_s",
              "cumulative_s", "cumulative_per_s", "memlimit"]
UPDATE_CSV = ["engine", "ops", "interval_s", "interval_per_s", "overall_per_s", "memlimit"]


def make_env(home, cachesize, txn):
    env = db.DBEnv()
    env.set_cachesize(cachesize // (1 << 30), cachesize % (1 << 30), 1)
    if txn:
        env.set_lk_max_locks(ITEMS_PER_TRANSACTION * 2)
        env.set_lk_max_objects(ITEMS_PER_TRANSACTION * 2)
    flags = db.DB_CREATE | db.DB_PRIVATE | db.DB_INIT_MPOOL
    if txn:
        flags |= db.DB_INIT_TXN | db.DB_INIT_LOG | db.DB_INIT_LOCK
    env.open(home, flags, 0o644)
    return env


def open_db(env, name, txn=None):
    d = db.DB(env)
    d.open(name, None, db.DB_BTREE, db.DB_CREATE, 0o644, txn=txn)
    return d


def fresh_dir(path, prefix):
    if path:
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path
    return tempfile.mkdtemp(prefix=prefix)


class Csv:
    def __init__(self, path, header):
        self.f = None
        if path:
            new = not os.path.exists(path) or os.path.getsize(path) == 0
            self.f = open(path, "a", newline="")
            self.w = csv.writer(self.f)
            if new:
                self.w.writerow(header)

    def row(self, *values):
        if self.f:
            self.w.writerow(values)
            self.f.flush()


# ----------------------------------------------------------------------------- the C program

def build_c(build_dir):
    cc = shutil.which("cc") or shutil.which("gcc")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokudb_bdb.c")
    if not cc:
        return None, "no C compiler"
    exe = os.path.join(build_dir, "tokudb_bdb")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        os.makedirs(build_dir, exist_ok=True)
        r = subprocess.run([cc, "-O2", "-o", exe, src, "-ldb-5.3"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            return None, "tokudb_bdb.c did not compile (libdb5.3-dev?): " + r.stderr.strip()[-300:]
    return exe, None


def run_c(a, args, on_line):
    exe, why = build_c(a.build_dir)
    if not exe:
        print(f"skipped the C program: {why}")
        return 0
    p = subprocess.Popen([exe] + [str(x) for x in args], stdout=subprocess.PIPE, text=True)
    for line in p.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        on_line(line.rstrip("\n"))
    return p.wait()


def insert_c(a):
    home = fresh_dir(a.dir, "db-insert.bdb-c.")
    out = Csv(a.csv, INSERT_CSV)
    cum = re.compile(r"^serial\s+([\d.]+)s\s+(\d+)/s\s+random\s+([\d.]+)s\s+(\d+)/s\s+"
                     r"cumulative\s+([\d.]+)s\s+(\d+)/s")
    batch = [0]

    def on_line(line):
        m = cum.match(line)
        if m:
            out.row("bdb-c", batch[0], *m.groups(), a.memlimit_note or "")
            batch[0] += 1
        elif line.startswith("Shutdown"):
            out.row("bdb-c", "shutdown", "", "", "", "", line.split()[1].rstrip("s"), "",
                    a.memlimit_note or "")
        elif line.startswith("Total time"):
            f = line.split()
            out.row("bdb-c", "total", "", "", "", "", f[2].rstrip("s"),
                    f[-1].rstrip("/s"), a.memlimit_note or "")
    rc = run_c(a, ["insert", home, a.n, a.batch, a.cachesize, int(a.x), int(a.bounded), a.seed],
               on_line)
    report_files(home)
    if not a.dir:
        shutil.rmtree(home, ignore_errors=True)
    return rc


def update_c(a):
    home = fresh_dir(a.dir, "db-update.bdb-c.")
    out = Csv(a.csv, UPDATE_CSV)

    def on_line(line):
        f = line.split()
        if len(f) == 4 and f[0].isdigit():
            out.row("bdb-c", f[0], f[1], f[2].rstrip("/s"), f[3].rstrip("/s"),
                    a.memlimit_note or "")
        elif line.startswith("total "):
            out.row("bdb-c", f"total {f[1]}", f[2], "", f[3].rstrip("/s"), a.memlimit_note or "")
    rc = run_c(a, ["update", home, a.ops, a.cachesize, a.rows_per_txn, a.report, a.seed,
                   a.max_seconds or 0], on_line)
    if not a.dir:
        shutil.rmtree(home, ignore_errors=True)
    return rc


def report_files(home):
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(home) for f in fs)
    print(f"files: {size / 1e6:,.1f} MB in {home}")


# ----------------------------------------------------------------------------- db-insert

def cmd_insert(a):
    if a.impl == "c":
        return insert_c(a)
    home = fresh_dir(a.dir, "db-insert.bdb.")
    out = Csv(a.csv, INSERT_CSV)
    rng = random.Random(a.seed)
    env = make_env(home, a.cachesize, a.x)
    tid = env.txn_begin() if a.x else None
    d = open_db(env, "bench.db", tid)
    if tid:
        tid.commit()
    print(f"serial and random insertions of {a.batch} per batch"
          + (" (with transactions)" if a.x else "")
          + f" [Berkeley DB {'.'.join(map(str, db.version()))} via Python, "
          f"cache {a.cachesize:,} B, random keys {'bounded' if a.bounded else '64-bit'}]",
          flush=True)
    run = phase_runner(env, d.put, a.x)
    t_start = time.perf_counter()
    excluded = 0.0  # time spent making keys: the C program's random() is too cheap to count
    for it in range(a.n):
        excluded = insert_batch(a, it, run, rng, out, t_start, excluded)
    t2 = time.perf_counter()
    d.close()
    env.close()
    t3 = time.perf_counter()
    total = 2 * a.batch * a.n
    elapsed = t3 - t_start - excluded
    print(f"Shutdown {t3 - t2:9.6f}s")
    print(f"Total time {elapsed:9.6f}s for {total} insertions = {total / elapsed:8.0f}/s")
    out.row("bdb-python", "shutdown", "", "", "", "", f"{t3 - t2:.6f}", "", a.memlimit_note or "")
    out.row("bdb-python", "total", "", "", "", "", f"{elapsed:.6f}",
            f"{total / elapsed:.0f}", a.memlimit_note or "")
    report_files(home)
    if not a.dir:
        shutil.rmtree(home, ignore_errors=True)
    return 0


def phase_runner(env, put, transactions):
    """The function that runs one phase: its argument is 8-byte big-endian keys back to back,
    each put with itself as value; with `transactions`, a durable commit every
    ITEMS_PER_TRANSACTION puts, counted across phases."""
    state = {"txn": None, "since": 0}

    def run(keys):
        if not transactions:
            for j in range(0, len(keys), 8):
                k = keys[j:j + 8]
                put(k, k)
            return
        txn = env.txn_begin()
        for j in range(0, len(keys), 8):
            k = keys[j:j + 8]
            put(k, k, txn=txn)
            state["since"] += 1
            if state["since"] >= ITEMS_PER_TRANSACTION:
                txn.commit()
                txn = env.txn_begin()
                state["since"] = 0
        txn.commit()

    return run


def batch_keys(rng, first, batch, bounded):
    """Batch `first / batch`'s keys, 8 bytes big-endian back to back: the serial ones
    (first .. first+batch, spaced SERIAL_SPACING apart) and the random ones."""
    serial = struct.pack(f">{batch}Q", *range(first * SERIAL_SPACING,
                                              (first + batch) * SERIAL_SPACING,
                                              SERIAL_SPACING))
    if bounded:
        bound = (first + batch) * SERIAL_SPACING
        rnd = struct.pack(f">{batch}Q", *(rng.getrandbits(63) % bound for _ in range(batch)))
    else:
        rnd = rng.getrandbits(64 * batch).to_bytes(8 * batch, "big")
    return serial, rnd


def insert_batch(a, it, run, rng, out, t_start, excluded):
    """Batch `it`: its serial phase then its random phase, each timed, printed and written to
    the CSV. `excluded` is the time spent making keys so far; returns it with this batch's
    added."""
    batch = a.batch
    g0 = time.perf_counter()
    serial, rnd = batch_keys(rng, it * batch, batch, a.bounded)
    t1 = time.perf_counter()
    excluded += t1 - g0
    run(serial)
    t2 = time.perf_counter()
    s_secs = t2 - t1
    print(f"serial {s_secs:9.6f}s {batch / s_secs:8.0f}/s    ", end="", flush=True)
    t1 = time.perf_counter()
    run(rnd)
    t2 = time.perf_counter()
    r_secs = t2 - t1
    cum = t2 - t_start - excluded
    print(f"random {r_secs:9.6f}s {batch / r_secs:8.0f}/s    "
          f"cumulative {cum:9.6f}s {batch * 2.0 * (it + 1) / cum:8.0f}/s", flush=True)
    out.row("bdb-python", it, f"{s_secs:.6f}", f"{batch / s_secs:.0f}", f"{r_secs:.6f}",
            f"{batch / r_secs:.0f}", f"{cum:.6f}", f"{batch * 2.0 * (it + 1) / cum:.0f}",
            a.memlimit_note or "")
    return excluded


# ----------------------------------------------------------------------------- db-scan

def cmd_scan(a):
    if not os.path.exists(os.path.join(a.path, "bench.db")):
        print(f"no bench.db in {a.path}: run `insert --dir {a.path}` first", file=sys.stderr)
        return 2
    env = make_env(a.path, a.cachesize, a.txn)
    d = db.DB(env)
    d.open("bench.db", None, db.DB_BTREE, db.DB_RDONLY)
    for _ in range(2):
        txn = env.txn_begin() if a.txn else None
        t0 = time.perf_counter()
        c = d.cursor(txn=txn)
        rows = nbytes = 0
        rec = c.first()
        while rec is not None:
            rows += 1
            nbytes += len(rec[0]) + len(rec[1])
            rec = c.next()
        c.close()
        if txn:
            txn.commit()
        secs = time.perf_counter() - t0
        print(f"Scan    {nbytes} bytes ({rows} rows) in {secs:9.6f}s at {nbytes / secs / 1e6:9f}MB/s")
    d.close()
    env.close()
    return 0


# ----------------------------------------------------------------------------- db-update

def cmd_update(a):
    if a.impl == "c":
        return update_c(a)
    home = fresh_dir(a.dir, "db-update.bdb.")
    out = Csv(a.csv, UPDATE_CSV)
    env = make_env(home, a.cachesize, True)
    txn = env.txn_begin()
    d = open_db(env, "update.db", txn)
    txn.commit()
    print(f"db-update: Berkeley DB {'.'.join(map(str, db.version()))} via Python, get + put, "
          f"{a.rows_per_txn} ops per durable commit, cache {a.cachesize:,} B", flush=True)
    rng = random.Random(a.seed)
    rnd = rng.randrange
    get, put = d.get, d.put
    pack = struct.Struct(">ii").pack
    counter = struct.Struct("<Q")
    one = counter.pack(1)
    t_start = t_last = time.perf_counter()
    txn = env.txn_begin()
    in_txn = 0
    done = a.ops
    for i in range(a.ops):
        key = pack(rnd(1000000), rnd(1000000))
        old = get(key, txn=txn)
        put(key, one if old is None else counter.pack(counter.unpack(old)[0] + 1), txn=txn)
        in_txn += 1
        if in_txn == a.rows_per_txn:
            txn.commit()  # DB_TXN_SYNC: the environment's default is a durable commit
            txn = env.txn_begin()
            in_txn = 0
        if (i + 1) % a.report == 0:
            now = time.perf_counter()
            last, total = now - t_last, now - t_start
            print(f"{i + 1} {last:.3f} {a.report / last:.0f}/s {(i + 1) / total:.0f}/s",
                  flush=True)
            out.row("bdb-python", i + 1, f"{last:.3f}", f"{a.report / last:.0f}",
                    f"{(i + 1) / total:.0f}", a.memlimit_note or "")
            t_last = now
            if a.max_seconds and total > a.max_seconds:
                done = i + 1
                print(f"stopped after {total:.0f} s (--max-seconds)")
                break
    txn.commit()
    now = time.perf_counter()
    print(f"total {done} {now - t_start:.3f} {done / (now - t_start):.0f}/s")
    out.row("bdb-python", f"total {done}", f"{now - t_start:.3f}", "",
            f"{done / (now - t_start):.0f}", a.memlimit_note or "")
    d.close()
    env.close()
    if not a.dir:
        shutil.rmtree(home, ignore_errors=True)
    return 0


# ----------------------------------------------------------------------------- db-insert-multiple

def cmd_insert_multiple(a):
    home = fresh_dir(a.dir, "db-insert-multiple.bdb.")
    out = Csv(a.csv, ["engine", "rows", "interval_s", "interval_per_s", "overall_per_s",
                      "memlimit"])
    env = make_env(home, a.cachesize, True)
    txn = env.txn_begin()
    dbs = [open_db(env, f"test{i}", txn) for i in range(4)]
    txn.commit()
    print(f"db-insert-multiple: Berkeley DB {'.'.join(map(str, db.version()))} via Python, "
          f"1 primary + 3 secondary btrees, {a.rows_per_txn} rows per durable commit", flush=True)
    rng = random.Random(a.seed)
    rnd = rng.randrange
    q = struct.Struct(">Q").pack
    qqq = struct.Struct(">QQQ").pack
    p0, p1, p2, p3 = (x.put for x in dbs)
    t_start = t_last = time.perf_counter()
    txn = env.txn_begin()
    in_txn = 0
    for row in range(a.rows):
        pk = q(row)
        b, c, dd = rnd(100000), rnd(100000), rnd(100000)
        p0(pk, qqq(b, c, dd), txn=txn)
        p1(q(b) + pk, b"", txn=txn)
        p2(q(c) + pk, b"", txn=txn)
        p3(q(dd) + pk, b"", txn=txn)
        in_txn += 1
        if in_txn == a.rows_per_txn:
            txn.commit()
            txn = env.txn_begin()
            in_txn = 0
        if (row + 1) % a.report == 0:
            now = time.perf_counter()
            last, total = now - t_last, now - t_start
            print(f"{row + 1} {last:.3f} {a.report / last:.0f}/s {(row + 1) / total:.0f}/s",
                  flush=True)
            out.row("bdb-python", row + 1, f"{last:.3f}", f"{a.report / last:.0f}",
                    f"{(row + 1) / total:.0f}", a.memlimit_note or "")
            t_last = now
    txn.commit()
    now = time.perf_counter()
    print(f"total {a.rows} {now - t_start:.3f} {a.rows / (now - t_start):.0f}/s")
    out.row("bdb-python", f"total {a.rows}", f"{now - t_start:.3f}", "",
            f"{a.rows / (now - t_start):.0f}", a.memlimit_note or "")
    for x in dbs:
        x.close()
    env.close()
    if not a.dir:
        shutil.rmtree(home, ignore_errors=True)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp, cache, impl=False):
        if impl:
            sp.add_argument("--impl", choices=["python", "c"], default="python",
                            help="the Python binding (default) or the C program")
            sp.add_argument("--build-dir", default=os.path.join(tempfile.gettempdir(),
                                                                "lamina-bench"))
        sp.add_argument("--cachesize", type=int, default=cache, help=f"bytes (default {cache:,})")
        sp.add_argument("--dir", help="environment directory (default: a fresh one in /tmp, "
                        "removed afterwards; given, it is emptied first and kept)")
        sp.add_argument("--seed", type=int, default=1)
        sp.add_argument("--csv", help="append the rows printed to this CSV file")
        sp.add_argument("--memlimit-note", help="memory cap in force, recorded in the CSV")

    s = sub.add_parser("insert", help="db-insert")
    s.add_argument("-n", type=int, default=4, help="batches (default 4)")
    s.add_argument("-x", action="store_true", help="transactions: durable commit every 16,384")
    s.add_argument("--batch", type=int, default=BATCH,
                   help=argparse.SUPPRESS)  # inserts per phase; only the harness tests change it
    s.add_argument("--bounded", action="store_true",
                   help="random keys below the serial keys' bound, as TokuDB's C program")
    common(s, 1 << 30, impl=True)

    s = sub.add_parser("scan", help="db-scan (of an insert --dir DIR)")
    s.add_argument("path")
    s.add_argument("--cachesize", type=int, default=1 << 30)
    s.add_argument("--txn", action="store_true", help="the environment has transactions")

    s = sub.add_parser("update", help="db-update")
    s.add_argument("--ops", type=int, default=10 ** 9)
    s.add_argument("--max-seconds", type=float,
                   help="stop at the first report past this many seconds")
    s.add_argument("--rows-per-txn", type=int, default=100)
    s.add_argument("--report", type=int, default=100000)
    common(s, 1 << 30, impl=True)

    s = sub.add_parser("insert-multiple", help="db-insert-multiple")
    s.add_argument("--rows", type=int, default=10 ** 8)
    s.add_argument("--rows-per-txn", type=int, default=1000)
    s.add_argument("--report", type=int, default=100000)
    common(s, 1 << 30)

    a = p.parse_args(argv)
    if db is None:
        print("skipped Berkeley DB: the Python module berkeleydb is not installed "
              "(bench/setup installs it)")
        return 0
    return {"insert": cmd_insert, "scan": cmd_scan, "update": cmd_update,
            "insert-multiple": cmd_insert_multiple}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
