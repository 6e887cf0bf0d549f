#!/usr/bin/env python3
"""The numbers load in bulk: the numbers data set through the write path, through lamina's bulk
loads, through Dask workers and through RocksDB's SstFileWriter, in one run on one machine.

The data set is records 0 .. N-1 of `lamina gen numbers` (key N in decimal, value N in English;
N is --records, default 2^23). It is generated once, as `store` commands and as TSV (not timed;
the generator's rate is shown). Then each way loads it into a fresh database:

  shell        lamina shell --newdb DB < stream           (the write path: WAL and memtable)
  shell-bulk   lamina shell --newdb --bulk DB < stream    (stores ingested as sorted tables)
  load-bulk    lamina load --bulk --newdb DB data.tsv     (the same, from a TSV dump)
  dask         lamina.dask.to_lamina on a LocalCluster of --workers worker processes, the
               DataFrame read from data.tsv with dask.dataframe.read_csv
  rocksdb      rocksdict: data.tsv sorted externally in runs of --sst-records records (each
               run sorted in Python and written as one SST file with SstFileWriter, so
               memory holds one run), all runs added with one Rdict.ingest_external_file

For each: wall time, records/s, size on disk, peak memory (the resident set of the command's
whole process tree, sampled from /proc every 20 ms: Dask's scheduler and workers included), and
the records the database holds afterwards, counted (not timed) — a row whose count is not N is
marked FAILED. The dask row's time is that of read_csv + to_lamina; starting the cluster is
shown apart. With --pipe the shell rows time `lamina gen numbers | lamina shell ...` instead.
Ways whose tools are missing are skipped with a message. --csv appends the rows, --png draws
them.
"""
import argparse
import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WAYS = ("shell", "shell-bulk", "load-bulk", "dask", "rocksdb")

DASK_CHILD = r"""
import csv, json, sys, time
t0 = time.perf_counter()
import dask
import dask.dataframe as dd
from dask.distributed import Client, LocalCluster
import lamina, lamina.dask
tsv, db, workers, scratch = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# The shuffle of set_index spills to the workers' directories: under --dir,
# not the system's /tmp, and removed with it.
dask.config.set({"temporary-directory": scratch})
with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                  dashboard_address=None, local_directory=scratch) as cluster, Client(cluster):
    started = time.perf_counter() - t0
    t1 = time.perf_counter()
    ddf = dd.read_csv(tsv, sep="\t", header=None, names=["k", "v"], dtype=str,
                      quoting=csv.QUOTE_NONE, keep_default_na=False)
    n = lamina.dask.to_lamina(ddf, db, key="k", value="v", key_encoding="str")
    secs = time.perf_counter() - t1
print(json.dumps({"seconds": secs, "startup": started, "reported": n}))
"""

ROCKSDB_CHILD = r"""
import json, os, sys, time
from rocksdict import IngestExternalFileOptions, Options, Rdict, SstFileWriter
tsv, db, stage, chunk = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
opts = Options(raw_mode=True)
files = []


def write_run(pairs):
    # One sorted run: one SST file.
    pairs.sort()
    path = os.path.join(stage, f"run-{len(files):06d}.sst")
    w = SstFileWriter(options=opts)
    w.open(path)
    for k, v in pairs:
        w[k] = v
    w.finish()
    files.append(path)


# An external sort by runs: at most `chunk` records in memory at once.
pairs = []
with open(tsv, "rb") as f:
    for line in f:
        k, _, v = line.rstrip(b"\n").partition(b"\t")
        pairs.append((k, v))
        if len(pairs) >= chunk:
            write_run(pairs)
            pairs = []
if pairs:
    write_run(pairs)
del pairs
# The runs overlap: RocksDB ingests overlapping files of one call into level 0,
# each with its own global seqno (later files win; the keys here are distinct).
ingest = IngestExternalFileOptions()
ingest.set_move_files(True)
d = Rdict(db, opts)
d.ingest_external_file(files, ingest)
d.close()
secs = time.perf_counter() - t0
for p in files:
    if os.path.exists(p):
        os.remove(p)
d = Rdict(db, opts)
count = sum(1 for _ in d.keys())
d.close()
print(json.dumps({"seconds": secs, "count": count, "runs": len(files)}))
"""


def du(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def tree_rss(root_pid):
    """Resident bytes of `root_pid` and all its descendants, from /proc."""
    parent = {}
    rss = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        pid = int(name)
        parent[pid] = int(fields[1])
        rss[pid] = int(fields[21]) * page
    total = 0
    for pid in rss:
        p = pid
        while p and p != root_pid:
            p = parent.get(p, 0)
        if p == root_pid:
            total += rss[pid]
    return total


def run_measured(cmd, stdin_path=None):
    """Runs `cmd`; returns (status, seconds, peak tree RSS in bytes, stdout, stderr tail)."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    peak = [0]
    try:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        done = threading.Event()

        def sample():
            while not done.is_set():
                try:
                    peak[0] = max(peak[0], tree_rss(p.pid))
                except OSError:
                    pass
                done.wait(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out, err = p.communicate()
        secs = time.perf_counter() - t0
        done.set()
        sampler.join()
    finally:
        if stdin_path:
            stdin.close()
    return p.returncode, secs, peak[0], out.decode(errors="replace"), \
        err.decode(errors="replace").strip()[-600:]


def importable(module):
    """Whether `module` imports in this interpreter (checked in a child: Dask is slow to import)."""
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return r.returncode == 0


def find_lamina(given):
    if given:
        return given
    found = shutil.which("lamina")
    if found:
        return found
    built = os.path.join(ROOT, "target", "release", "lamina")
    return built if os.path.exists(built) else None


def count_lamina(lamina, db):
    r = subprocess.run([lamina, "count", db], capture_output=True, text=True)
    return int(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip().isdigit() else -1


def available(ways, lamina):
    """The ways that can run here; a message for each that cannot."""
    out = []
    for w in ways:
        if w not in WAYS:
            raise SystemExit(f"unknown way {w}; the ways are {', '.join(WAYS)}")
        if lamina is None:
            print(f"skipped {w}: no lamina binary (--lamina PATH, or build it: "
                  "cargo build --release -p lamina-cli)", file=sys.stderr)
        elif w == "dask" and not importable("lamina.dask, dask.distributed"):
            print("skipped dask: the lamina Python module or dask.distributed is not installed "
                  "(make py-build; pip install 'dask[dataframe,distributed]')", file=sys.stderr)
        elif w == "rocksdb" and not importable("rocksdict"):
            print("skipped rocksdb: rocksdict is not installed (bench/setup installs it)",
                  file=sys.stderr)
        else:
            out.append(w)
    return out


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--records", type=int, default=1 << 23,
                   help="records to load, 0 .. N-1 (default 2^23)")
    p.add_argument("--ways", default=",".join(WAYS),
                   help=f"comma-separated: {','.join(WAYS)} (default all available)")
    p.add_argument("--lamina", help="lamina binary (default: `lamina` on PATH, else "
                   "target/release/lamina)")
    p.add_argument("--memory", default="64M", help="--memory of the lamina bulk loads (64M)")
    p.add_argument("--workers", type=int, default=2, help="Dask worker processes (2)")
    p.add_argument("--sst-records", type=int, default=1 << 21,
                   help="records per sorted run (one SST file) in the rocksdb way; bounds its "
                   "memory (2^21, about 0.5 GB)")
    p.add_argument("--pipe", action="store_true",
                   help="time `lamina gen numbers | lamina shell ...` for the shell rows")
    p.add_argument("--dir", "--tmpdir", dest="dir", default=None,
                   help="where the data, databases and every temporary file go, in a "
                   "directory made for the run and removed after it (default: the system's "
                   "temporary directory); at 125 M records it needs about 25 GB")
    p.add_argument("--keep", action="store_true", help="keep the data and databases")
    p.add_argument("--csv", help="append the rows to this CSV file")
    p.add_argument("--png", help="write a chart of time and peak memory to this PNG")
    return p


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    if args.records < 1:
        p.error("--records must be at least 1")

    lamina = find_lamina(args.lamina)
    ways = available([w.strip() for w in args.ways.split(",") if w.strip()], lamina)
    if not ways:
        print("nothing to run", file=sys.stderr)
        return 0
    n = args.records
    work = tempfile.mkdtemp(prefix="bulk_bench.", dir=args.dir)
    rows = []
    gen = f"{shlex.quote(lamina)} gen numbers {n - 1}"
    try:
        stream = os.path.join(work, "numbers.txt")
        tsv = os.path.join(work, "numbers.tsv")
        generate(gen, stream, tsv, n)
        hdr = (f"{'way':<11} {'records':>12} {'seconds':>9} {'records/s':>11} {'MB':>9} "
               f"{'peak MB':>9} {'counted':>12}  note")
        print(hdr)
        print("-" * len(hdr))
        for way in ways:
            db = os.path.join(work, f"{way}.db")
            cmd, stdin = way_command(way, args, lamina, gen, work, db, stream, tsv)
            rows.append(load(way, cmd, stdin, lamina, db, n))
            if not args.keep:
                shutil.rmtree(db, ignore_errors=True)
                for scratch in ("sst", "dask-scratch"):
                    shutil.rmtree(os.path.join(work, scratch), ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    if args.csv:
        write_csv(args.csv, rows, args.pipe)
    if args.png:
        plot(args.png, rows, n)
    return 0 if all(r["ok"] for r in rows) else 1


def generate(gen, stream, tsv, n):
    """Writes the data set as `store` commands to `stream` and as TSV to `tsv`, and prints
    how long that took."""
    q = shlex.quote
    t0 = time.perf_counter()
    subprocess.run(f"{gen} > {q(stream)} && {gen} --format tsv > {q(tsv)}", shell=True,
                   check=True)
    gsecs = time.perf_counter() - t0
    print(f"numbers load in bulk: {n:,} records; data generated in {gsecs:.2f} s "
          f"({2 * n / gsecs:,.0f} records/s, {os.path.getsize(tsv) / 1e6:.1f} MB of TSV)")


def way_command(way, args, lamina, gen, work, db, stream, tsv):
    """The command that loads `db` one way, and the file its stdin reads (or None)."""
    q = shlex.quote
    if way in ("shell", "shell-bulk"):
        shell = [lamina, "-q", "shell", "--newdb"]
        if way == "shell-bulk":
            shell += ["--bulk", "--memory", args.memory]
        shell.append(db)
        if args.pipe:
            return ["bash", "-o", "pipefail", "-c",
                    f"{gen} | " + " ".join(q(a) for a in shell)], None
        return shell, stream
    if way == "load-bulk":
        return [lamina, "-q", "load", "--bulk", "--newdb", "--memory", args.memory,
                db, tsv], None
    if way == "dask":
        scratch = os.path.join(work, "dask-scratch")
        os.makedirs(scratch, exist_ok=True)
        return [sys.executable, "-c", DASK_CHILD, tsv, db, str(args.workers), scratch], None
    stage = os.path.join(work, "sst")
    os.makedirs(stage, exist_ok=True)
    return [sys.executable, "-c", ROCKSDB_CHILD, tsv, db, stage, str(args.sst_records)], None


def load(way, cmd, stdin, lamina, db, n):
    """Runs one way's load, measured, counts what the database holds, prints the row and
    returns it. The Dask and RocksDB children report their own time (and RocksDB its count)
    as a JSON line."""
    note = ""
    count = -1
    rc, secs, peak, out, err = run_measured(cmd, stdin)
    if rc == 0 and way in ("dask", "rocksdb"):
        try:
            child = json.loads(out.strip().splitlines()[-1])
            secs = child["seconds"]
            if way == "dask":
                note = f"cluster start {child['startup']:.2f} s not included"
            else:
                count = child["count"]
                note = f"{child['runs']} sorted runs"
        except (ValueError, IndexError, KeyError):
            rc, err = -1, f"unreadable output: {out[-300:]}"
    if rc == 0 and way != "rocksdb":
        count = count_lamina(lamina, db)
    ok = rc == 0 and count == n
    if rc != 0:
        note = f"FAILED (status {rc}): {err}"
    elif count != n:
        note = f"FAILED: the database holds {count} records, not {n}"
    size = du(db) if os.path.exists(db) else 0
    print(f"{way:<11} {n:>12,} {secs:>9.2f} {n / secs if secs else 0:>11,.0f} "
          f"{size / 1e6:>9.1f} {peak / 1e6:>9.1f} {count:>12,}  {note}", flush=True)
    return dict(way=way, records=n, seconds=secs, rate=n / secs if secs else 0.0,
                bytes=size, peak_bytes=peak, counted=count, ok=int(ok))


def write_csv(path, rows, pipe):
    """Appends the rows to `path`, with a header when the file is new or empty."""
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["way", "records", "seconds", "records_per_s", "bytes", "peak_bytes",
                        "counted", "ok", "mode"])
        for r in rows:
            w.writerow([r["way"], r["records"], f"{r['seconds']:.3f}", f"{r['rate']:.0f}",
                        r["bytes"], r["peak_bytes"], r["counted"], r["ok"],
                        "pipe" if pipe else "file"])


def plot(path, rows, n):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (bench/setup installs it)", file=sys.stderr)
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
    names = [r["way"] for r in rows]
    a.bar(names, [r["seconds"] for r in rows])
    a.set_ylabel("seconds (lower is better)")
    b.bar(names, [r["peak_bytes"] / 1e6 for r in rows], color="tab:orange")
    b.set_ylabel("peak resident MB, whole process tree")
    fig.suptitle(f"The numbers load: {n:,} records loaded in bulk")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
