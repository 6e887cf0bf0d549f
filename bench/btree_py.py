#!/usr/bin/env python3
"""A B-tree's rows from Python: a work queue drained with popitem(), len() of a large database,
and items(prefix) of 10 items at a random prefix; lamina beside LMDB (py-lmdb), dbm.gnu and
SQLite (sqlite3), as bench/README.md defines them ("A B-tree's rows from Python").

  btree_py.py [-d ENGINE ...] [--pop-items N] [--len-items M] [--lookups L]
              [--value-size S] [--max-seconds T] [--rows pop,len,prefix]
              [--tmpdir DIR] [--out DIR] [--csv FILE] [--json FILE]

Keys are b'%012d' % i (i = 0..count-1), values S bytes (default 100) sliced from one 1 MiB
buffer of seeded random bytes. Loads are not timed (batches of 10,000 pairs, each committed).

  pop     load N items (default 1,000,000), then pop the first item until the database is empty
          (lamina `db.popitem()`; LMDB a write transaction per pop: cursor first, read, delete;
          SQLite `DELETE ... WHERE k = (SELECT min(k) ...) RETURNING k, v`, one statement per
          pop; dbm.gnu `firstkey()`, read, `del`: gdbm keeps no order, so its "first" key is any
          key, still what a dbm user's queue does); pops/s
  len     load M items (default 10,000,000), reopen, and time the first len(db) (LMDB the
          environment's entry count, SQLite `count(*)`); milliseconds
  prefix  in that database, L lookups (default 100,000) of a random prefix b'%011d' % g that
          selects exactly the 10 keys 10g..10g+9 (lamina `db.items(prefix=p)`, LMDB one read
          transaction and cursor: `set_range(p)` and 10 items, SQLite `k >= p AND k < p' ORDER BY
          k LIMIT 10`; dbm.gnu has no ordered reads); lookups/s

Every pop, write or lookup commits without an fsync: it survives the process being killed, not a
power loss (lamina durability 'os', LMDB sync off, SQLite WAL with synchronous=NORMAL, gdbm
without 's'). A row that runs past --max-seconds (default 300; loads too) is stopped and its
rate over what it did is reported, marked *. Every row checks what it read: each pop returns the
next key in order (gdbm: every key once), len() the count loaded, each lookup the 10 keys of its
prefix; complete rows must agree across engines. A failed check prints FAILED and the run exits 1.

Each engine runs in a child process of its own, one after another; one that cannot be imported
is skipped with a message. --out (default $BENCH_OUT/btree-py when BENCH_OUT is set) gets
btree-py.md, btree-py.csv and btree-py.json.
"""
import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER_DIR = os.path.join(HERE, "adapters")

ENGINES = ["lamina", "lmdb", "gdbm", "sqlite"]
ALIASES = {"dbm.gnu": "gdbm", "gnu": "gdbm", "sqlite3": "sqlite", "py-lmdb": "lmdb"}
ROWS = ["pop", "len", "prefix"]
TITLES = {"pop": "popitem() (pops/s)", "len": "len() (ms)",
          "prefix": "items(prefix), 10 items (lookups/s)"}
LOAD_BATCH = 10_000
CHUNK = 1024  # the time limit is checked between chunks of pops or lookups
GROUP = 10  # keys under one prefix


def key(i):
    return b"%012d" % i


def prefix(g):
    return b"%011d" % g


class Values:
    """Value i: S bytes of a seeded random 1 MiB buffer, the same in every child."""

    def __init__(self, size):
        self.buf = random.Random(100).randbytes(1 << 20)
        self.size = size
        self.span = len(self.buf) - size

    def __call__(self, i):
        at = (i * 7919) % self.span
        return self.buf[at:at + self.size]


# ----------------------------------------------------------------------------- the engines

class Lamina:
    describe = ("lamina.open(path, 'c') (durability 'os'); loads through db.batch(); "
                "db.popitem(); len(db); db.items(prefix=p)")

    def __init__(self, path):
        import lamina
        self.mod, self.path = lamina, path
        self.db = lamina.open(path, "c")

    def load(self, pairs):
        with self.db.batch() as b:
            for k, v in pairs:
                b[k] = v

    def reopen(self):
        self.db.close()
        self.db = self.mod.open(self.path, "w")

    def close(self):
        self.db.close()

    def pop(self):
        try:
            return self.db.popitem()
        except KeyError:
            return None

    def length(self):
        return len(self.db)

    def lookup(self, p):
        return self.db.items(prefix=p)


class Lmdb:
    describe = ("py-lmdb %s: sync and metasync off, map size 64 GiB; a pop is a write transaction "
                "(cursor first, item, delete); len the environment's entries; lookups in one read "
                "transaction and cursor (set_range, then 10 items)")
    MAP_SIZE = 1 << 36

    def __init__(self, path):
        import lmdb
        self.mod, self.path = lmdb, path
        self.env = lmdb.open(path, map_size=self.MAP_SIZE, sync=False, metasync=False,
                             max_dbs=0)
        self.read = None

    def load(self, pairs):
        with self.env.begin(write=True) as txn:
            for k, v in pairs:
                txn.put(k, v, append=True)

    def reopen(self):
        self.close()
        self.env = self.mod.open(self.path, map_size=self.MAP_SIZE, sync=False,
                                 metasync=False, max_dbs=0)

    def close(self):
        if self.read is not None:
            self.read.abort()
            self.read = None
        self.env.close()

    def pop(self):
        with self.env.begin(write=True) as txn:
            cur = txn.cursor()
            if not cur.first():
                return None
            item = cur.item()
            cur.delete()
            return item

    def length(self):
        return self.env.stat()["entries"]

    def lookup(self, p):
        if self.read is None:
            self.read = self.env.begin()
            self.cursor = self.read.cursor()
        cur = self.cursor
        out = []
        if cur.set_range(p):
            for _ in range(GROUP):
                k = cur.key()
                if not k.startswith(p):
                    break
                out.append((k, cur.value()))
                if not cur.next():
                    break
        return out


class Gdbm:
    describe = ("dbm.gnu open(path, 'c') (no 's': no fsync); a pop is firstkey(), db[k], del db[k] "
                "(gdbm has no key order: its first key is any key); len(db); no ordered reads")
    ordered = False

    def __init__(self, path):
        sys.path.insert(0, ADAPTER_DIR)
        import gdbm_dbm
        self.mod, self.path = gdbm_dbm, path
        self.db = gdbm_dbm.open(path, "c")

    def load(self, pairs):
        db = self.db
        for k, v in pairs:
            db[k] = v

    def reopen(self):
        self.db.close()
        self.db = self.mod.open(self.path, "w")

    def close(self):
        self.db.close()

    def pop(self):
        k = self.db.firstkey()
        if k is None:
            return None
        v = self.db[k]
        del self.db[k]
        return k, v

    def length(self):
        return len(self.db)

    lookup = None


class Sqlite:
    describe = ("sqlite3 (SQLite %s): kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID, WAL, "
                "synchronous=NORMAL, autocommit; a pop is DELETE of min(k) RETURNING k, v; "
                "len count(*); a lookup k >= p AND k < p' ORDER BY k LIMIT 10")

    def __init__(self, path):
        import sqlite3
        self.mod, self.path = sqlite3, path
        self.connect()
        self.con.execute("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        # DELETE ... RETURNING needs SQLite 3.35; before it, a select and a delete in one
        # transaction.
        self.returning = sqlite3.sqlite_version_info >= (3, 35, 0)

    def connect(self):
        self.con = self.mod.connect(self.path, isolation_level=None)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=NORMAL")
        self.cur = self.con.cursor()

    def load(self, pairs):
        self.cur.execute("BEGIN")
        self.cur.executemany("INSERT INTO kv (k, v) VALUES (?, ?)", pairs)
        self.cur.execute("COMMIT")

    def reopen(self):
        self.con.close()
        self.connect()

    def close(self):
        self.con.close()

    def pop(self):
        cur = self.cur
        if self.returning:
            rows = cur.execute("DELETE FROM kv WHERE k = (SELECT min(k) FROM kv) "
                               "RETURNING k, v").fetchall()
            return rows[0] if rows else None
        cur.execute("BEGIN IMMEDIATE")
        row = cur.execute("SELECT k, v FROM kv ORDER BY k LIMIT 1").fetchone()
        if row is not None:
            cur.execute("DELETE FROM kv WHERE k = ?", (row[0],))
        cur.execute("COMMIT")
        return row

    def length(self):
        return self.cur.execute("SELECT count(*) FROM kv").fetchone()[0]

    def lookup(self, p):
        hi = p[:-1] + bytes([p[-1] + 1])
        return self.cur.execute("SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k LIMIT 10",
                                (p, hi)).fetchall()


CLASSES = {"lamina": Lamina, "lmdb": Lmdb, "gdbm": Gdbm, "sqlite": Sqlite}
MODULES = {"lamina": "lamina", "lmdb": "lmdb", "gdbm": "gdbm_dbm", "sqlite": "sqlite3"}


def importable(engine):
    """None if the engine's module imports, else why not."""
    sys.path.insert(0, ADAPTER_DIR)
    try:
        __import__(MODULES[engine])
        return None
    except Exception as e:  # ImportError, or an extension that fails to load
        return f"cannot import {MODULES[engine]}: {e}"


def describe(engine):
    d = CLASSES[engine].describe
    if engine == "lmdb":
        import lmdb
        d = d % lmdb.__version__
    elif engine == "sqlite":
        import sqlite3
        d = d % sqlite3.sqlite_version
    return f"{engine}: {d}"


# ----------------------------------------------------------------------------- the rows

def load(db, count, values, limit):
    """Loads keys 0..count-1 in committed batches; stops past `limit` seconds. Returns the
    count loaded (a multiple of the batch, or count) and the seconds."""
    start = time.perf_counter()
    done = 0
    while done < count:
        hi = min(done + LOAD_BATCH, count)
        db.load([(key(i), values(i)) for i in range(done, hi)])
        done = hi
        if time.perf_counter() - start > limit:
            break
    return done, time.perf_counter() - start


def pop_row(db, n, values, limit):
    """Loads n items and pops until empty; returns the row's result."""
    loaded, load_secs = load(db, n, values, limit)
    ordered = getattr(db, "ordered", True)
    expect = [key(i) for i in range(loaded)]
    seen = set() if not ordered else None
    pops, bad = 0, None
    complete, empty = True, False
    start = time.perf_counter()
    while not empty:
        for _ in range(CHUNK):
            got = db.pop()
            if got is None:
                empty = True
                break
            k = bytes(got[0])
            if ordered:
                want = expect[pops] if pops < loaded else None
                if k != want and bad is None:
                    bad = f"pop {pops} returned {k!r}, not {want!r}"
            elif k in seen or not k.isdigit() or int(k) >= loaded:
                bad = bad or f"pop {pops} returned {k!r}: twice, or a key never loaded"
            else:
                seen.add(k)
            pops += 1
        if not empty and time.perf_counter() - start > limit:
            complete = False
            break
    secs = time.perf_counter() - start
    if complete and pops != loaded:
        bad = bad or f"{pops} pops emptied a database of {loaded} items"
    return {"row": "pop", "items": loaded, "ops": pops, "seconds": secs,
            "rate": pops / secs if secs > 0 else float("inf"), "complete": complete and
            loaded == n, "load_seconds": load_secs, "check": bad or "ok"}


def len_and_prefix_rows(db, m, lookups, values, limit, rows):
    """Loads m items, times the first len(db) after a reopen, then the prefix lookups."""
    loaded, load_secs = load(db, m, values, limit)
    db.reopen()
    out = []
    if "len" in rows:
        start = time.perf_counter()
        n = db.length()
        secs = time.perf_counter() - start
        check = "ok" if n == loaded else f"len() is {n}, not the {loaded} items loaded"
        out.append({"row": "len", "items": loaded, "ops": 1, "seconds": secs,
                    "rate": secs * 1e3, "complete": loaded == m, "load_seconds": load_secs,
                    "check": check})
    if "prefix" in rows:
        if db.lookup is None:
            out.append({"row": "prefix", "items": loaded, "ops": 0, "seconds": 0.0, "rate": None,
                        "complete": True, "check": "no ordered reads"})
            return out
        rng = random.Random(7)
        groups = max(1, loaded // GROUP)
        draws = [rng.randrange(groups) for _ in range(lookups)]
        done, bad, items = 0, None, 0
        complete = True
        start = time.perf_counter()
        while done < lookups:
            for g in draws[done:done + CHUNK]:
                got = db.lookup(prefix(g))
                items += len(got)
                if bad is None and (len(got) != GROUP or bytes(got[0][0]) != key(g * GROUP)
                                    or bytes(got[-1][0]) != key(g * GROUP + GROUP - 1)):
                    bad = f"items(prefix={prefix(g)!r}) read {[bytes(k) for k, _ in got]}"
            done = min(done + CHUNK, lookups)
            if time.perf_counter() - start > limit and done < lookups:
                complete = False
                break
        secs = time.perf_counter() - start
        # Values, not timed: the last lookup's against the definition.
        g = draws[done - 1]
        want = [(key(i), values(i)) for i in range(g * GROUP, g * GROUP + GROUP)]
        if bad is None and [(bytes(k), bytes(v)) for k, v in db.lookup(prefix(g))] != want:
            bad = f"items(prefix={prefix(g)!r}) read other values than were loaded"
        out.append({"row": "prefix", "items": loaded, "ops": done, "seconds": secs,
                    "rate": done / secs if secs > 0 else float("inf"), "read": items,
                    "complete": complete and loaded == m, "check": bad or "ok"})
    return out


def child(a):
    """Runs one engine's rows here; prints them as one JSON line."""
    values = Values(a.value_size)
    work = tempfile.mkdtemp(prefix=f"btree_py.{a.child}.", dir=a.tmpdir)
    results = []
    try:
        if "pop" in a.rows:
            db = CLASSES[a.child](os.path.join(work, "pop"))
            try:
                results.append(pop_row(db, a.pop_items, values, a.max_seconds))
            finally:
                db.close()
            progress(a.child, results[-1])
        if "len" in a.rows or "prefix" in a.rows:
            db = CLASSES[a.child](os.path.join(work, "len"))
            try:
                rows = len_and_prefix_rows(db, a.len_items, a.lookups, values, a.max_seconds,
                                           a.rows)
            finally:
                db.close()
            for r in rows:
                progress(a.child, r)
            results += rows
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"engine": a.child, "describe": describe(a.child), "results": results}))
    return 0


def progress(engine, r):
    mark = "" if r["complete"] else "  (stopped at the time limit)"
    print(f"  {engine} {r['row']}: {fmt(r)}  check {r['check']}{mark}", file=sys.stderr,
          flush=True)


# ----------------------------------------------------------------------------- the parent

def fmt(r):
    if r is None:
        return "-"
    if r["rate"] is None:
        return r["check"]
    if r["row"] == "len":
        s = f"{r['rate']:,.3f}" if r["rate"] < 1 else f"{r['rate']:,.1f}"
    else:
        s = f"{r['rate']:,.0f}"
    return s if r["complete"] else s + "*"


def failures(runs):
    """Failed checks, and complete rows that disagree across engines."""
    out = []
    for run in runs:
        for r in run.get("results", []):
            if r["check"] not in ("ok", "no ordered reads"):
                out.append(f"{run['engine']} {r['row']}: {r['check']}")
    for row, field in (("pop", "ops"), ("len", "items"), ("prefix", "read")):
        seen = {run["engine"]: r[field] for run in runs for r in run.get("results", [])
                if r["row"] == row and r["complete"] and r.get(field) is not None
                and r["rate"] is not None}
        if len(set(seen.values())) > 1:
            out.append(f"{row}: engines disagree: {seen}")
    return out


def build_table(runs):
    done = [r for r in runs if "results" in r]
    labels = [r["engine"] for r in done]
    by = {r["engine"]: {x["row"]: x for x in r["results"]} for r in done}
    peers = [lb for lb in labels if lb != "lamina"]
    header = ["row"] + labels
    if peers:
        header.append("best peer")
        if "lamina" in labels:
            header.append("lamina/best")
    rows = []
    for w in ROWS:
        if not any(w in by[lb] for lb in labels):
            continue
        row = [TITLES[w]] + [fmt(by[lb].get(w)) for lb in labels]
        if peers:
            cands = [(by[p][w]["rate"], p) for p in peers
                     if w in by[p] and by[p][w]["complete"] and by[p][w]["rate"] is not None]
            best = (min if w == "len" else max)(cands) if cands else None
            row.append(f"{best[1]} {fmt(by[best[1]][w])}" if best else "-")
            if "lamina" in labels:
                lam = by["lamina"].get(w)
                ok = best and lam and lam["rate"] is not None and best[0] > 0
                row.append(f"{lam['rate'] / best[0]:.2f}x" if ok else "-")
        rows.append(row)
    return header, rows


def render(a, runs, notes):
    header, rows = build_table(runs)
    out = [f"# A B-tree's rows from Python\n",
           f"popitem() until empty from {a.pop_items:,} items; len() of {a.len_items:,} items; "
           f"items(prefix) of {GROUP} items at {a.lookups:,} random prefixes; values "
           f"{a.value_size} B; python {sys.version.split()[0]}.\n"]
    out += [f"- {r['describe']}" for r in runs if "describe" in r]
    out += ["", "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    if "lamina/best" in header:
        out += ["", "lamina/best: lamina's figure over the best peer's (above 1 faster for a "
                "rate, below 1 quicker for len()'s time)."]
    if any(not x["complete"] for r in runs for x in r.get("results", [])):
        out.append(f"\n\\* stopped at --max-seconds ({a.max_seconds:g} s), in its load or its "
                   "timed loop: the rate over what it did")
    if notes:
        out += ["", "Notes:"] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def write_csv(path, runs, a, mode="a"):
    new = mode == "w" or not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, mode, newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["engine", "row", "items", "ops", "seconds", "rate", "complete",
                        "value_size", "check"])
        for run in runs:
            for x in run.get("results", []):
                rate = "" if x["rate"] is None else f"{x['rate']:.3f}"
                w.writerow([run["engine"], x["row"], x["items"], x["ops"], f"{x['seconds']:.6f}",
                            rate, int(x["complete"]), a.value_size, x["check"]])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-d", "--engine", dest="engines", action="append",
                   help="engine to run, repeatable: " + ", ".join(ENGINES) + " (default all)")
    p.add_argument("--pop-items", type=int, default=1_000_000)
    p.add_argument("--len-items", type=int, default=10_000_000)
    p.add_argument("--lookups", type=int, default=100_000)
    p.add_argument("--value-size", type=int, default=100)
    p.add_argument("--max-seconds", type=float, default=300.0,
                   help="seconds a load or a timed loop may run before it is stopped and its "
                        "rate marked * (default 300)")
    p.add_argument("--rows", default=",".join(ROWS), help="a subset of " + ",".join(ROWS))
    p.add_argument("--tmpdir", help="where the databases go (default: $TMPDIR or /tmp)")
    p.add_argument("--out", default=(os.path.join(os.environ["BENCH_OUT"], "btree-py")
                                     if os.environ.get("BENCH_OUT") else None),
                   help="directory for btree-py.md, .csv and .json (default $BENCH_OUT/btree-py)")
    p.add_argument("--csv", help="append the rows to this CSV file")
    p.add_argument("--json", help="write the raw results to this JSON file")
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.rows = [r for r in a.rows.split(",") if r]
    for r in a.rows:
        if r not in ROWS:
            p.error(f"unknown row {r}; these are: {', '.join(ROWS)}")
    if a.pop_items < 1 or a.len_items < GROUP or a.lookups < 1:
        p.error(f"--pop-items and --lookups must be at least 1, --len-items at least {GROUP}")
    if not 1 <= a.value_size <= 1 << 19:
        p.error("--value-size must be 1 to 524288 bytes")
    if a.child:
        return child(a)
    engines = []
    for e in a.engines or ENGINES:
        e = ALIASES.get(e, e)
        if e not in CLASSES:
            p.error(f"unknown engine {e}; these are: {', '.join(ENGINES)}")
        if e not in engines:
            engines.append(e)
    runs, notes = [], []
    for e in engines:
        why = importable(e)
        if why:
            print(f"skipped {e}: {why}", file=sys.stderr)
            notes.append(f"{e}: skipped, {why}")
            continue
        print(f"{e}:", file=sys.stderr, flush=True)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", e,
               "--pop-items", str(a.pop_items), "--len-items", str(a.len_items),
               "--lookups", str(a.lookups), "--value-size", str(a.value_size),
               "--max-seconds", str(a.max_seconds), "--rows", ",".join(a.rows)]
        if a.tmpdir:
            cmd += ["--tmpdir", a.tmpdir]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
        if r.returncode != 0 or not lines:
            notes.append(f"{e}: FAILED, the child exited with status {r.returncode}")
            continue
        runs.append(json.loads(lines[-1]))
    failed = failures(runs)
    notes += [f"FAILED: {f}" for f in failed]
    text = render(a, runs, notes)
    print()
    print(text, end="")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "btree-py.md"), "w") as f:
            f.write(text)
        write_csv(os.path.join(a.out, "btree-py.csv"), runs, a, mode="w")
        with open(os.path.join(a.out, "btree-py.json"), "w") as f:
            json.dump({"args": {k: v for k, v in vars(a).items() if k != "child"},
                       "runs": runs, "notes": notes}, f, indent=1)
    if a.csv:
        write_csv(a.csv, runs, a)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs, "notes": notes}, f, indent=1)
    return 1 if failed or any("FAILED" in n for n in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
