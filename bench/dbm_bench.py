#!/usr/bin/env python3
"""The dbm workloads from Python (semidbm's benchmark), as bench/README.md defines them.

n keys (default 1,000,000); key i = '%0<k>d' % i in ASCII; values are consecutive <s>-byte
slices of one 1 MiB buffer of random bytes (random.seed(100)), wrapping to the start when the
next slice would pass the end. Seven workloads in order, each opening the database afresh with
`module.open(path, flag)`; only the loop is timed; ops/s = ops / seconds:

  fill_random        'c'  db[k] = v for n keys of <k> random printable characters, then deleted
  fill_sequential    'c'  db[key_i] = value_i, i = 0..n-1
  read_cold          'r'  db[key_i], i = 0..n-1 (first read after the fill)
  read_sequential    'r'  the same again
  read_hot           'r'  a random 1% of the keys, that list repeated 100 times, read in order
  read_random        'r'  all n keys shuffled, each read once
  delete_sequential  'c'  del db[key_i], i = 0..n-1

Besides these (non-durable) figures, the two fills are also reported with the time of close()
included (rows fill_random+close, fill_sequential+close), and the size on disk after
fill_sequential.

Each module runs in its own child process (a crash or a leak in one cannot touch another), on
the same data: every child seeds the generator the same way. A module that cannot be imported
is skipped with a message.

  dbm_bench.py                              all peers (and lamina if importable)
  dbm_bench.py -d semidbm -d gdbm -n 100000
  dbm_bench.py --large                      second configuration: n=1000, k=16, s=100000
  dbm_bench.py --rounds 5                   every module 5 times, in turn; each figure the median

With --rounds R, the modules run in turn R times (a, b, c, a, b, c, ...), so that a slow minute
of the machine falls on every module alike, and each figure is the median of a module's R
rates for that row (the lower middle one for an even R: always a rate that was measured). A
last column then gives the range of lamina's ratio to the best peer within each round.
  dbm_bench.py --csv out.csv --png out.png
"""
import argparse
import csv
import glob
import json
import os
import random
import shutil
import string
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER_DIR = os.path.join(HERE, "adapters")

WORKLOADS = ["fill_random", "fill_sequential", "read_cold", "read_sequential", "read_hot",
             "read_random", "delete_sequential"]
CLOSE_ROWS = ["fill_random+close", "fill_sequential+close"]
ROWS = WORKLOADS + CLOSE_ROWS

# label -> importable module (adapters live in bench/adapters, added to sys.path)
PEERS = {
    "lamina": "lamina",
    "gdbm": "gdbm_dbm",
    "bdb_hash": "bdb_hash",
    "bdb_btree": "bdb_btree",
    "lmdb": "lmdb_dbm",
    "rocksdb": "rocksdb_dbm",
    "leveldb": "leveldb_dbm",
    "sqlite": "sqlite_dbm",
    "semidbm": "semidbm",
    "dumb": "dbm.dumb",
}
ALIASES = {"dbm.gnu": "gdbm", "gnu": "gdbm", "dbm.dumb": "dumb", "bdb": "bdb_hash",
           "berkeleydb": "bdb_hash", "rocksdict": "rocksdb", "plyvel": "leveldb",
           "sqlite3": "sqlite"}
# Run by default; dbm.dumb rewrites its whole index on every delete (O(n) each), so it is
# only run when asked for, or with a small n.
DEFAULT_PEERS = [p for p in PEERS if p != "dumb"]

CHUNK = 4096  # the time budget is checked between chunks, never inside the timed loop


def resolve(name):
    """-d NAME -> (label, module name)."""
    label = ALIASES.get(name, name)
    return (label, PEERS[label]) if label in PEERS else (name, name)


# ----------------------------------------------------------------------------- one module

_BUFFER = None


def value_buffer(rng):
    """1 MiB of random bytes: semidbm's `chr(random.randint(0, 255))` after random.seed(100).

    rng must be freshly seeded with 100; it is advanced past the buffer either way."""
    global _BUFFER
    if _BUFFER is None:
        _BUFFER = (bytes(rng.randint(0, 255) for _ in range(1024 * 1024)), rng.getstate())
    else:
        rng.setstate(_BUFFER[1])
    return _BUFFER[0]


class Data:
    """The inputs, made the same way in every child process."""

    def __init__(self, n, k, s):
        self.n, self.k, self.s = n, k, s
        rng = random.Random(100)
        self.buffer = value_buffer(rng)
        alphabet = string.printable.encode("ascii")
        raw = bytes(rng.choices(alphabet, k=n * k))
        self.random_keys = [raw[i * k:(i + 1) * k] for i in range(n)]
        fmt = ("%0" + str(k) + "d").encode("ascii")
        self.key_format = fmt
        self.keys = [fmt % i for i in range(n)]
        unique = max(1, int(n * 0.01))
        hot = [self.keys[i] for i in rng.sample(range(n), unique)]
        self.hot = hot * max(1, n // unique)
        shuffled = list(self.keys)
        rng.shuffle(shuffled)
        self.shuffled = shuffled


def _chunks(count):
    return [(i, min(i + CHUNK, count)) for i in range(0, count, CHUNK)]


class Workloads:
    """The timed loops on one module; each appends its row to `results` (and prints it with
    `progress`). A loop stops between chunks once it has run `budget` seconds."""

    def __init__(self, module, data, budget, progress):
        self.module = module
        self.data = data
        self.budget = budget
        self.progress = progress
        self.results = []

    def report(self, name, ops, seconds, done, extra=None):
        r = {"workload": name, "ops": ops, "seconds": seconds,
             "ops_per_s": ops / seconds if seconds > 0 else float("inf"), "complete": done}
        if extra:
            r.update(extra)
        self.results.append(r)
        if self.progress:
            mark = "" if done else "  (stopped at the time budget)"
            print(f"  {name:<22} {r['ops_per_s']:>12,.0f} ops/s  {seconds:8.3f} s{mark}",
                  file=sys.stderr, flush=True)

    def fill(self, path, keys, name):
        """db[keys[i]] = the next value, for the data's n keys; returns (ops, seconds with
        close() included, whether it finished)."""
        n, s, buf, budget = self.data.n, self.data.s, self.data.buffer, self.budget
        maxlen = len(buf)
        db = self.module.open(path, "c")
        pos = 0
        done = True
        ops = 0
        start = time.perf_counter()
        for lo, hi in _chunks(n):
            for i in range(lo, hi):
                db[keys[i]] = buf[pos:pos + s]
                pos += s
                if pos + s > maxlen:
                    pos = 0
            ops = hi
            if time.perf_counter() - start > budget:
                done = False
                break
        loop = time.perf_counter() - start
        db.close()
        with_close = time.perf_counter() - start
        self.report(name, ops, loop, done)
        return ops, with_close, done

    def read(self, path, keys, name, flag="r"):
        budget = self.budget
        db = self.module.open(path, flag)
        done = True
        ops = 0
        start = time.perf_counter()
        for lo, hi in _chunks(len(keys)):
            for i in range(lo, hi):
                db[keys[i]]
            ops = hi
            if time.perf_counter() - start > budget:
                done = False
                break
        loop = time.perf_counter() - start
        db.close()
        self.report(name, ops, loop, done)

    def delete(self, path, keys, name):
        budget = self.budget
        db = self.module.open(path, "c")
        done = True
        ops = 0
        start = time.perf_counter()
        for lo, hi in _chunks(len(keys)):
            for i in range(lo, hi):
                del db[keys[i]]
            ops = hi
            if time.perf_counter() - start > budget:
                done = False
                break
        loop = time.perf_counter() - start
        db.close()
        self.report(name, ops, loop, done)


def run_module(module, data, dbdir, budget, progress):
    """Run the seven workloads on one module; returns a list of result dicts."""
    w = Workloads(module, data, budget, progress)

    # fill_random, in its own database, deleted afterwards
    rdir = os.path.join(dbdir, "random")
    os.makedirs(rdir)
    fill_random_close = w.fill(os.path.join(rdir, "db"), data.random_keys, "fill_random")
    shutil.rmtree(rdir)

    sdir = os.path.join(dbdir, "seq")
    os.makedirs(sdir)
    path = os.path.join(sdir, "db")
    keys = data.keys
    fill_seq_close = w.fill(path, keys, "fill_sequential")
    w.results[-1]["bytes_on_disk"] = du(sdir)
    if fill_seq_close[2]:
        w.read(path, keys, "read_cold")
        w.read(path, keys, "read_sequential")
        w.read(path, data.hot, "read_hot")
        w.read(path, data.shuffled, "read_random")
        w.delete(path, keys, "delete_sequential")
    else:
        print("  fill_sequential did not finish within the budget: reads and deletes skipped",
              file=sys.stderr)
    shutil.rmtree(sdir)
    for name, (ops, secs, done) in zip(CLOSE_ROWS, (fill_random_close, fill_seq_close)):
        w.results.append({"workload": name, "ops": ops, "seconds": secs,
                          "ops_per_s": ops / secs if secs > 0 else float("inf"),
                          "complete": done})
    return w.results


def du(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


def child_main(args):
    """Runs one module and prints its results as one JSON line (last line of stdout)."""
    sys.path.insert(0, ADAPTER_DIR)
    label, modname = resolve(args.child)
    try:
        module = __import__(modname, fromlist=["open"])
        if not hasattr(module, "open"):
            raise ImportError(f"{modname} has no open()")
    except Exception as e:  # ImportError, or an extension that fails to load
        print(json.dumps({"label": label, "skipped": f"cannot import {modname}: {e}"}))
        return 0
    data = Data(args.num_keys, args.key_size, args.value_size)
    dbdir = tempfile.mkdtemp(prefix=f"dbm_bench.{label}.", dir=args.tmpdir)
    try:
        results = run_module(module, data, dbdir, args.budget, progress=True)
    except Exception as e:
        print(json.dumps({"label": label, "skipped": f"failed: {type(e).__name__}: {e}"}))
        return 0
    finally:
        shutil.rmtree(dbdir, ignore_errors=True)
    version = getattr(module, "__version__", "") or getattr(module, "version", "")
    print(json.dumps({"label": label, "module": modname, "version": str(version)[:40],
                      "results": results}))
    return 0


# ----------------------------------------------------------------------------- the parent

def run_child(label, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", label,
           "-n", str(args.num_keys), "-k", str(args.key_size), "-s", str(args.value_size),
           "--budget", str(args.budget)]
    if args.tmpdir:
        cmd += ["--tmpdir", args.tmpdir]
    print(f"{label}:", file=sys.stderr, flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"label": label, "skipped": f"child exited with status {p.returncode}"}
    return json.loads(lines[-1])


def median_rounds(rounds):
    """One module's rounds (what run_child returned, in order) as one result: for each row, the
    round of median rate (the lower middle one for an even count), with every round's rate kept
    as [round, ops/s] pairs under "rounds". Skipped rounds are left out; all skipped, the
    first is returned."""
    ok = [(i, r) for i, r in enumerate(rounds) if "results" in r]
    if not ok:
        return rounds[0]
    merged = []
    for w in [x["workload"] for x in ok[0][1]["results"]]:
        xs = [(i, x) for i, r in ok for x in r["results"] if x["workload"] == w]
        by_rate = sorted(xs, key=lambda ix: ix[1]["ops_per_s"])
        m = dict(by_rate[(len(by_rate) - 1) // 2][1])
        m["rounds"] = [[i, x["ops_per_s"]] for i, x in xs]
        merged.append(m)
    out = dict(ok[0][1])
    out["results"] = merged
    out["rounds"] = len(ok)
    if len(ok) < len(rounds):
        out["skipped_rounds"] = [r["skipped"] for r in rounds if "results" not in r]
    return out


def round_ratios(by, peers, w):
    """lamina's rate over the best complete peer's, within each round all of them ran; [] when
    there is no such round."""
    def rates(lb):
        x = by[lb].get(w)
        if x is None or not x["complete"]:
            return {}
        return dict(x.get("rounds", []))
    lam = rates("lamina")
    others = [rates(p) for p in peers]
    out = []
    for i, r in sorted(lam.items()):
        best = [o[i] for o in others if i in o]
        if best:
            out.append(r / max(best))
    return out


def fmt_rate(r):
    if r is None:
        return "-"
    s = f"{r['ops_per_s']:,.0f}"
    return s if r["complete"] else s + "*"


def build_table(runs, n, k, s):
    labels = [r["label"] for r in runs if "results" in r]
    by = {r["label"]: {x["workload"]: x for x in r["results"]} for r in runs if "results" in r}
    peers = [lb for lb in labels if lb != "lamina"]
    header = [f"n={n},k={k},s={s}"] + labels
    if peers:
        header += ["best peer"]
    if "lamina" in labels and peers:
        header += ["lamina/best"]
    each_round = "lamina" in labels and peers and any(
        len(x.get("rounds", [])) > 1 for x in by["lamina"].values())
    if each_round:
        header += ["each round"]
    rows = []
    for w in ROWS:
        row = [w] + [fmt_rate(by[lb].get(w)) for lb in labels]
        if peers:
            cands = [(by[p][w]["ops_per_s"], p) for p in peers
                     if w in by[p] and by[p][w]["complete"]]
            best = max(cands) if cands else None
            row.append(f"{best[1]} {best[0]:,.0f}" if best else "-")
            if "lamina" in labels:
                lam = by["lamina"].get(w)
                row.append(f"{lam['ops_per_s'] / best[0]:.2f}x" if best and lam else "-")
            if each_round:
                rs = round_ratios(by, peers, w)
                row.append(f"{min(rs):.2f}x-{max(rs):.2f}x" if rs else "-")
        rows.append(row)
    size_row = ["MB on disk (fill_sequential)"]
    for lb in labels:
        b = by[lb].get("fill_sequential", {}).get("bytes_on_disk")
        size_row.append(f"{b / 1e6:,.1f}" if b is not None else "-")
    size_row += [""] * (len(header) - len(size_row))
    rows.append(size_row)
    return header, rows


def print_table(header, rows, out=sys.stdout):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(widths[0]) if i == 0 else str(c).rjust(widths[i])
                               for i, c in enumerate(r))
    print(line(header), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print(line(r), file=out)


def write_csv(path, runs, n, k, s):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["n", "key_size", "value_size", "engine", "workload", "ops", "seconds",
                        "ops_per_s", "complete", "bytes_on_disk"])
        for r in runs:
            for x in r.get("results", []):
                w.writerow([n, k, s, r["label"], x["workload"], x["ops"], f"{x['seconds']:.6f}",
                            f"{x['ops_per_s']:.1f}", int(x["complete"]),
                            x.get("bytes_on_disk", "")])


def write_png(path, runs, n, k, s):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (bench/setup installs it)", file=sys.stderr)
        return False
    done = [r for r in runs if "results" in r]
    if not done:
        return False
    fig, ax = plt.subplots(figsize=(13, 5.5))
    width = 0.8 / len(done)
    for j, r in enumerate(done):
        by = {x["workload"]: x["ops_per_s"] for x in r["results"]}
        xs = [i + (j - (len(done) - 1) / 2) * width for i in range(len(ROWS))]
        ys = [by.get(w, 0) for w in ROWS]
        ax.bar(xs, ys, width, label=r["label"],
               edgecolor="black" if r["label"] == "lamina" else None)
    ax.set_xticks(range(len(ROWS)))
    ax.set_xticklabels(ROWS, rotation=20, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("ops/s (log scale; higher is better)")
    ax.set_title(f"dbm workloads from Python: n={n:,}, key {k} B, value {s:,} B")
    ax.legend(ncol=min(len(done), 5), fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-d", "--dbm", dest="dbms", action="append",
                   help="module (or peer label) to run; repeatable. Labels: "
                        + ", ".join(PEERS) + ". Any module with a dbm-style open() works.")
    p.add_argument("-n", "--num-keys", type=int, default=1000000)
    p.add_argument("-k", "--key-size", type=int, default=16)
    p.add_argument("-s", "--value-size", type=int, default=100)
    p.add_argument("--large", action="store_true",
                   help="the second configuration: n=1000, k=16, s=100000")
    p.add_argument("--budget", type=float, default=600.0,
                   help="seconds one workload may run before it is stopped and its partial "
                        "rate marked with * (default 600)")
    p.add_argument("--rounds", type=int, default=1,
                   help="run every module this many times, in turn, and report the median "
                        "(default 1)")
    p.add_argument("--csv", help="append results to this CSV file")
    p.add_argument("--png", help="write a grouped bar chart to this PNG file")
    p.add_argument("--json", help="write the raw results to this JSON file")
    p.add_argument("--tmpdir", help="where the databases go (default: $TMPDIR or /tmp)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.large:
        args.num_keys, args.key_size, args.value_size = 1000, 16, 100000
    if args.value_size > 1024 * 1024:
        p.error("-s must be at most 1 MiB (the size of the value buffer)")
    if args.child:
        return child_main(args)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")

    labels = []
    for name in args.dbms or DEFAULT_PEERS:
        label, _ = resolve(name)
        if label not in labels:
            labels.append(label)
    n, k, s = args.num_keys, args.key_size, args.value_size
    print(f"dbm workloads: n={n:,} key_size={k} value_size={s:,} "
          f"python={sys.version.split()[0]}", file=sys.stderr)
    rounds = {label: [] for label in labels}
    for i in range(args.rounds):
        if args.rounds > 1:
            print(f"round {i + 1} of {args.rounds}", file=sys.stderr, flush=True)
        for label in labels:
            r = run_child(label, args)
            if "skipped" in r:
                print(f"  skipped {label}: {r['skipped']}", file=sys.stderr)
            rounds[label].append(r)
    runs = [median_rounds(rounds[label]) for label in labels]

    header, rows = build_table(runs, n, k, s)
    print()
    print_table(header, rows)
    if args.rounds > 1:
        print(f"\neach figure: the median of {args.rounds} rounds, the modules run in turn in "
              "each; \"each round\": lamina/best within each round, lowest to highest")
    skipped = [f"{r['label']} ({r['skipped']})" for r in runs if "skipped" in r]
    if skipped:
        print("\nskipped: " + "; ".join(skipped))
    partial = [f"{r['label']} in {len(r['skipped_rounds'])} of {args.rounds} rounds "
               f"({r['skipped_rounds'][0]})" for r in runs if r.get("skipped_rounds")]
    if partial:
        print("\nfailed, the median taken over the other rounds: " + "; ".join(partial))
    if any(not x["complete"] for r in runs for x in r.get("results", [])):
        print(f"* stopped at the time budget ({args.budget:g} s): rate over the ops done")
    if args.csv:
        write_csv(args.csv, runs, n, k, s)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": n, "key_size": k, "value_size": s, "runs": runs}, f, indent=1)
    if args.png:
        write_png(args.png, runs, n, k, s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
