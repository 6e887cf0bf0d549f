#!/usr/bin/env python3
"""Run the whole benchmark suite and write its results (CSV, PNG, SUMMARY.md) to a dated folder.

  bench/run.py            the full suite, sized to finish in under 30 minutes on a 2-core machine
  bench/run.py --quick    the same steps at small sizes, under 3 minutes
  bench/run.py --only dbm,numbers      some steps only (see --list)

Peers that are not installed are skipped with a message (bench/setup installs them). lamina
takes part where it can be found: the Python module `lamina` (dbm workloads), a `lamina`
binary (--lamina PATH, else target/release/lamina, else `lamina` on PATH) for the numbers load,
and the bench package's `lamina-bench` (--lamina-bench PATH, else
target/bench/release/lamina-bench, else on PATH) for lamina's engine-level workloads.
Each step runs with a time limit; a step that fails or runs out of time is reported in the
summary and the run goes on.

Results go to $BENCH_OUT/<date>[-quick]/ (--out for another folder); $BENCH_OUT defaults to
target/bench-results under the repository, which git ignores. The memory-capped steps run under
bench/memlimit (a cgroup memory cap; needs root), or the program $LAMINA_MEMLIMIT names.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MEMLIMIT = os.environ.get("LAMINA_MEMLIMIT") or os.path.join(HERE, "memlimit")
BENCH_OUT = os.environ.get("BENCH_OUT") or os.path.join(ROOT, "target", "bench-results")

# name -> (description, full args, quick args, time limit full/quick in seconds).
# {py} is the Python to use, {out} the results directory, {lamina_opt} '--lamina PATH' or '',
# {lamina_bench} the bench package's binary.
STEPS = [
    ("testfile", "testfile (durable commits' hardware limit): write 256 B + lseek + fsync, 1000 ops",
     "{py} {bench}/testfile.py --dir {tmp} --csv {out}/testfile.csv",
     "{py} {bench}/testfile.py --dir {tmp} --csv {out}/testfile.csv",
     60, 30),
    ("dbm", "semidbm's dbm workloads from Python, 16 B keys, 100 B values (n: see the table)",
     "{py} {bench}/dbm_bench.py -n 1000000 --budget 120 --tmpdir {tmp} "
     "--csv {out}/dbm.csv --png {out}/dbm_small.png",
     "{py} {bench}/dbm_bench.py -n 50000 --budget 10 --tmpdir {tmp} "
     "--csv {out}/dbm.csv --png {out}/dbm_small.png",
     900, 70),
    ("dbm-large", "semidbm's dbm workloads, second configuration: 16 B keys, 100,000 B values (n=1000)",
     "{py} {bench}/dbm_bench.py --large -d dumb -d gdbm -d bdb_hash -d bdb_btree -d lmdb "
     "-d rocksdb -d leveldb -d sqlite -d semidbm -d lamina --budget 60 --tmpdir {tmp} "
     "--csv {out}/dbm.csv --png {out}/dbm_large.png",
     "{py} {bench}/dbm_bench.py --large -d dumb -d gdbm -d bdb_hash -d bdb_btree "
     "-d lmdb -d rocksdb -d leveldb -d sqlite -d semidbm -d lamina --budget 10 --tmpdir {tmp} "
     "--csv {out}/dbm.csv --png {out}/dbm_large.png",
     300, 40),
    ("numbers", "the numbers load (numbers in English), load rate at doubling sizes",
     "{py} {bench}/numbers_bench.py --min 17 --max 23 --budget 300 {lamina_opt} --tmpdir {tmp} "
     "--csv {out}/numbers.csv --png {out}/numbers.png",
     "{py} {bench}/numbers_bench.py --min 16 --max 18 --check --budget 10 {lamina_opt} "
     "--tmpdir {tmp} --csv {out}/numbers.csv --png {out}/numbers.png",
     720, 30),
    ("db_bench", "RocksDB db_bench: fillseq, fillrandom, readrandom, overwrite (16/100 and 8/8)",
     "{py} {bench}/rocksdb_bench.py --num 1000000 --tmpdir {tmp} --csv {out}/db_bench.csv",
     "{py} {bench}/rocksdb_bench.py --num 100000 --tmpdir {tmp} --csv {out}/db_bench.csv",
     300, 30),
    ("db-insert", "TokuDB's db-insert, Berkeley DB via Python, 4 batches, cache 1 GiB, no cap",
     "{py} {bench}/tokudb_bdb.py insert -n 4 --csv {out}/db_insert.csv",
     None, 240, 0),
    ("db-insert-c", "TokuDB's db-insert, Berkeley DB in C, 4 batches, cache 1 GiB, no cap",
     "{py} {bench}/tokudb_bdb.py insert --impl c -n 4 --csv {out}/db_insert.csv",
     "{py} {bench}/tokudb_bdb.py insert --impl c -n 1 --csv {out}/db_insert.csv",
     180, 20),
    ("db-insert-512M-c", "TokuDB's db-insert, Berkeley DB in C, 12 batches, cache 256 MiB, "
     "memory capped at 512 MiB",
     "{memlimit} 512M {py} {bench}/tokudb_bdb.py insert --impl c -n 12 --cachesize 268435456 "
     "--memlimit-note 512M --csv {out}/db_insert.csv",
     None, 420, 0),
    ("db-insert-512M", "TokuDB's db-insert, Berkeley DB via Python, cache 256 MiB, memory "
     "capped at 512 MiB (1 batch: the binding's cost; the 12-batch curve is the C run's)",
     None,
     "{memlimit} 512M {py} {bench}/tokudb_bdb.py insert -n 1 --cachesize 268435456 "
     "--memlimit-note 512M --csv {out}/db_insert.csv",
     0, 25),
    ("db-update-512M", "TokuDB's db-update, Berkeley DB via Python, get + put, 100 ops per "
     "durable commit, cache 256 MiB, memory capped at 512 MiB",
     "{memlimit} 512M {py} {bench}/tokudb_bdb.py update --ops 2000000 --cachesize 268435456 "
     "--memlimit-note 512M --csv {out}/db_update.csv",
     "{memlimit} 512M {py} {bench}/tokudb_bdb.py update --ops 200000 --cachesize 268435456 "
     "--memlimit-note 512M --csv {out}/db_update.csv",
     240, 20),
    ("db-update-512M-c", "TokuDB's db-update, Berkeley DB in C, get + put, 100 ops per durable "
     "commit, cache 256 MiB, memory capped at 512 MiB; the full run stops after 4 minutes",
     "{memlimit} 512M {py} {bench}/tokudb_bdb.py update --impl c --ops 1000000000 "
     "--max-seconds 240 --cachesize 268435456 --memlimit-note 512M --csv {out}/db_update.csv",
     "{memlimit} 512M {py} {bench}/tokudb_bdb.py update --impl c --ops 200000 "
     "--cachesize 268435456 --memlimit-note 512M --csv {out}/db_update.csv",
     300, 20),
    ("db-insert-multiple", "TokuDB's db-insert-multiple, Berkeley DB via Python, 1000 rows per "
     "durable commit",
     "{py} {bench}/tokudb_bdb.py insert-multiple --rows 1000000 --csv {out}/db_insert_multiple.csv",
     None, 180, 0),
    # The disk's fsync rate moves with what else the machine does; measured again at the end so
    # that the durable-commit figures above can be read against it.
    ("testfile-end", "testfile again, at the end of the run",
     "{py} {bench}/testfile.py --dir {tmp} --csv {out}/testfile.csv",
     "{py} {bench}/testfile.py --dir {tmp} --csv {out}/testfile.csv",
     60, 30),
    # lamina's engine-level workloads, run by `lamina-bench` (the bench package, bench/Cargo.toml)
    # with the same parameters and printed columns as the peers' drivers above. Skipped when
    # it is not built (make bench-cli).
    ("lamina-db-insert", "TokuDB's db-insert on lamina, 4 batches, no cap",
     "{lamina_bench} db-insert -n 4 --dir {tmp}/lamina-insert --csv {out}/db_insert.csv",
     "{lamina_bench} db-insert -n 1 --dir {tmp}/lamina-insert --csv {out}/db_insert.csv",
     240, 20),
    ("lamina-db-insert-512M", "TokuDB's db-insert on lamina, 12 batches, cache 256 MiB, memory "
     "capped at 512 MiB",
     "{memlimit} 512M {lamina_bench} db-insert -n 12 --cache-size 268435456 "
     "--dir {tmp}/lamina-insert --csv {out}/db_insert.csv",
     None, 300, 0),
    ("lamina-db-update-512M", "TokuDB's db-update on lamina (blind merge), 100 ops per durable "
     "commit, cache 256 MiB, memory capped at 512 MiB",
     "{memlimit} 512M {lamina_bench} db-update --ops 2000000 --cache-size 268435456 "
     "--dir {tmp}/lamina-update --csv {out}/db_update.csv",
     "{memlimit} 512M {lamina_bench} db-update --ops 200000 --cache-size 268435456 "
     "--dir {tmp}/lamina-update --csv {out}/db_update.csv",
     240, 20),
    ("lamina-commits", "durable commits on lamina: 256 B values, one Sync write per commit, "
     "1..32 threads, against testfile",
     "{lamina_bench} commits --threads 1,2,4,8,16,32 --dir {tmp}/lamina-commits "
     "--csv {out}/commits.csv",
     "{lamina_bench} commits --threads 1,16 --dir {tmp}/lamina-commits --csv {out}/commits.csv",
     180, 20),
    ("lamina-numbers-512M", "the numbers load on lamina, doubling sizes to 2^23, memory capped at "
     "512 MiB",
     "{memlimit} 512M {lamina_bench} numbers --max 23 {lamina_opt} --memlimit-note 512M "
     "--csv {out}/numbers_lamina.csv",
     None, 300, 0),
    ("lamina-db-scan", "TokuDB's db-scan on lamina: every row in key order, twice, in one snapshot",
     "{lamina_bench} db-scan -n 4 --csv {out}/db_scan.csv",
     "{lamina_bench} db-scan -n 1 --csv {out}/db_scan.csv",
     240, 30),
    ("lamina-db-insert-multiple", "TokuDB's db-insert-multiple on lamina: primary + three "
     "secondary keyspaces in one atomic durable batch per 1000 rows",
     "{lamina_bench} db-insert-multiple --rows 1000000 --csv {out}/db_insert_multiple.csv",
     "{lamina_bench} db-insert-multiple --rows 100000 --csv {out}/db_insert_multiple.csv",
     180, 30),
    ("lamina-blocksize", "the block-size question, 4K..64K: the numbers load and point reads",
     "{lamina_bench} blocksize --records 1048576 --csv {out}/blocksize.csv",
     "{lamina_bench} blocksize --records 65536 --csv {out}/blocksize.csv",
     240, 30),
]


def find_python():
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def find_lamina(arg):
    if arg:
        return arg
    for cand in (os.path.join(ROOT, "target", "release", "lamina"),):
        if os.access(cand, os.X_OK):
            return cand
    return shutil.which("lamina")


def run_step(line, limit):
    """Runs one step in its own process group; at the time limit the whole group is ended
    (the drivers' child processes too), TERM first so that memlimit can clean up."""
    p = subprocess.Popen(["bash", "-c", line], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        text, err = p.communicate(timeout=limit)
        return ("ok" if p.returncode == 0 else f"failed (status {p.returncode})"), text, err
    except subprocess.TimeoutExpired:
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                text, err = p.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                text, err = "", ""
        return f"stopped at its time limit ({limit} s)", text or "", err or ""


def find_lamina_bench(arg):
    if arg:
        return arg
    cand = os.path.join(ROOT, "target", "bench", "release", "lamina-bench")
    if os.access(cand, os.X_OK):
        return cand
    return shutil.which("lamina-bench")


def has_lamina_bench(lamina_bench):
    if not lamina_bench:
        return False
    try:
        return subprocess.run([lamina_bench, "--help"], capture_output=True,
                              timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def machine_info(py):
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                                  timeout=20).stdout.strip()
        except Exception:
            return ""
    mem = sh("free -g | awk '/^Mem:/{print $2\" GiB\"}'")
    pyv = sh(f"{shlex.quote(py)} -c 'import sys; print(sys.version.split()[0])'")
    peers = sh(f"{shlex.quote(py)} - <<'EOF'\n"
               "from importlib import metadata\n"
               "for m in ['berkeleydb','lmdb','rocksdict','plyvel','semidbm','lamina']:\n"
               "    try:\n"
               "        print(m, metadata.version(m))\n"
               "    except Exception as e:\n"
               "        print(m, 'missing')\n"
               "EOF")
    tools = sh("for t in gdbmtool db5.3_load db_bench; do command -v $t >/dev/null && "
               "dpkg -S $(command -v $t) 2>/dev/null | cut -d: -f1 | head -1 | "
               "xargs -r dpkg-query -W 2>/dev/null | tr '\\t' ' ' || echo \"$t missing\"; done")
    return {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
        "host": platform.node(), "kernel": platform.release(), "cores": os.cpu_count(),
        "memory": mem, "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": pyv, "peers": peers.replace("\n", ", "), "tools": tools.replace("\n", ", "),
        "disk": sh(f"df -h {shlex.quote(ROOT)} | awk 'NR==2{{print $1\" \"$2}}'"),
    }


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, under 3 minutes")
    p.add_argument("--only", help="comma-separated step names (see --list)")
    p.add_argument("--skip", help="comma-separated step names to leave out")
    p.add_argument("--list", action="store_true", help="list the steps and exit")
    p.add_argument("--out", help="results directory (default $BENCH_OUT/<date>[-quick]; "
                   "$BENCH_OUT defaults to target/bench-results)")
    p.add_argument("--lamina", help="lamina binary (default target/release/lamina or PATH)")
    p.add_argument("--lamina-bench", help="the bench package's binary (default "
                   "target/bench/release/lamina-bench or PATH)")
    p.add_argument("--tmp", default=os.environ.get("TMPDIR", "/tmp"),
                   help="scratch directory for databases (default $TMPDIR or /tmp)")
    return p


def list_steps():
    for name, desc, full, quick, tf, tq in STEPS:
        only_in = "" if (full and quick) else ("  (full run only)" if full else
                                                 "  (quick run only)")
        print(f"{name:<22} {desc}{only_in}")


def main(argv=None):
    p = parser()
    a = p.parse_args(argv)

    if a.list:
        list_steps()
        return 0
    only = set(a.only.split(",")) if a.only else None
    skip = set(a.skip.split(",")) if a.skip else set()
    known = {s[0] for s in STEPS}
    for n in (only or set()) | skip:
        if n not in known:
            p.error(f"unknown step {n}; --list shows them")

    py = find_python()
    lamina = find_lamina(a.lamina)
    lamina_bench = find_lamina_bench(a.lamina_bench)
    date = datetime.date.today().isoformat()
    out = a.out or os.path.join(BENCH_OUT, date + ("-quick" if a.quick else ""))
    os.makedirs(out, exist_ok=True)
    tmp = os.path.join(a.tmp, f"lamina-bench.{os.getpid()}")
    os.makedirs(tmp, exist_ok=True)
    fmt = dict(py=shlex.quote(py), bench=shlex.quote(HERE), out=shlex.quote(out),
               tmp=shlex.quote(tmp), memlimit=shlex.quote(MEMLIMIT),
               lamina=shlex.quote(lamina or "lamina"),
               lamina_bench=shlex.quote(lamina_bench or "lamina-bench"),
               lamina_opt=f"--lamina {shlex.quote(lamina)}" if lamina else "")
    info = machine_info(py)
    print(f"results -> {out}")
    if not lamina:
        print("no lamina binary found: lamina's CLI rows are left out (cargo build --release)")

    t_all = time.time()
    done = run_steps(a.quick, only, skip, fmt, out, lamina_bench)
    shutil.rmtree(tmp, ignore_errors=True)
    commits = os.path.join(out, "commits.csv")
    if os.path.exists(commits):
        subprocess.run([py, os.path.join(HERE, "plot_commits.py"), commits,
                        os.path.join(out, "commits.png")], check=False)
    write_summary(out, info, done, a.quick, time.time() - t_all, lamina)
    print(f"summary: {os.path.join(out, 'SUMMARY.md')} ({time.time() - t_all:.0f} s in all)")
    steps = {name: secs for name, _d, status, _s, secs in done if status == "ok"}
    with open(os.path.join(out, "steps.json"), "w") as f:
        json.dump(steps, f, indent=1, sort_keys=True)
    if a.quick:
        print(compare_steps(steps, previous_steps(out)))
    return 0


def run_steps(quick, only, skip, fmt, out, lamina_bench):
    """Runs the chosen steps of the full or quick run in order, each with its time limit;
    returns (name, description, status, output shown, seconds) for each, skipped ones too."""
    done = []
    for name, desc, full_cmd, quick_cmd, t_full, t_quick in STEPS:
        if (only and name not in only) or name in skip:
            continue
        cmd = quick_cmd if quick else full_cmd
        limit = t_quick if quick else t_full
        if cmd is None:
            continue
        if "{lamina_bench}" in cmd and not has_lamina_bench(lamina_bench):
            done.append((name, desc, "skipped: no lamina-bench (make bench-cli)", "", 0.0))
            print(f"== {name}: skipped (no lamina-bench binary; make bench-cli builds it)")
            continue
        if "{memlimit}" in cmd and (os.geteuid() != 0 or not os.path.exists(MEMLIMIT)):
            done.append((name, desc, "skipped: the memory cap (bench/memlimit) needs root",
                         "", 0.0))
            print(f"== {name}: skipped (memlimit needs root)")
            continue
        done.append(run_logged(name, desc, cmd.format(**fmt), limit, out))
    return done


def run_logged(name, desc, line, limit, out):
    """Runs one step, prints its output (the end of it) and writes it all to <out>/<name>.log;
    returns (name, description, status, output shown, seconds)."""
    print(f"== {name}: {desc}\n$ {line}", flush=True)
    t0 = time.time()
    status, text, err = run_step(line, limit)
    secs = time.time() - t0
    print(text if len(text) < 20000 else text[-20000:], end="")
    if status != "ok" and err:
        print(err[-3000:], end="")
    print(f"-- {name}: {status} in {secs:.0f} s", flush=True)
    with open(os.path.join(out, f"{name}.log"), "w") as f:
        f.write(f"$ {line}\n{text}\n--- stderr ---\n{err}")
    shown = text if status == "ok" or not err else text + "\n" + err[-2000:]
    return name, desc, status, shown, secs


def previous_steps(out):
    """The step times of the newest other quick run beside `out` (its steps.json),
    as (directory name, {step: seconds}); None if there is none."""
    results = os.path.dirname(os.path.abspath(out))
    runs = sorted(d for d in os.listdir(results)
                  if d.endswith("-quick") and os.path.join(results, d) != os.path.abspath(out)
                  and os.path.exists(os.path.join(results, d, "steps.json")))
    if not runs:
        return None
    with open(os.path.join(results, runs[-1], "steps.json")) as f:
        return runs[-1], json.load(f)


def compare_steps(now, before):
    """Each step's wall time (lamina and its peers in that step) against the
    previous quick run's, as a table a person can read: "no slower" means no
    step well above 1.00x. Wall times of a shared machine drift by 10 % or so."""
    if before is None:
        return ("no earlier quick run with steps.json beside this one: nothing to compare "
                "(this run's step times are in steps.json; the next quick run compares with them)")
    name, old = before
    lines = [f"step wall times against the previous quick run ({name}); above 1.10x is marked:"]
    for step in sorted(now):
        if step in old and old[step] > 0:
            r = now[step] / old[step]
            mark = "  SLOWER" if r > 1.10 else ""
            lines.append(f"  {step:<32} {old[step]:>7.1f} s -> {now[step]:>7.1f} s  {r:.2f}x{mark}")
        else:
            lines.append(f"  {step:<32} {'-':>7}   -> {now[step]:>7.1f} s  (new)")
    return "\n".join(lines)


def write_summary(out, info, done, quick, total, lamina):
    pngs = sorted(f for f in os.listdir(out) if f.endswith(".png"))
    csvs = sorted(f for f in os.listdir(out) if f.endswith(".csv"))
    with open(os.path.join(out, "SUMMARY.md"), "w") as f:
        f.write(f"# lamina benchmarks — {info['date']}{' (quick)' if quick else ''}\n\n")
        f.write("Workloads as defined in bench/README.md; peers and lamina side by side in one "
                "run. Absolute figures drift between runs on a shared machine; ratios measured "
                "in one run hold.\n\n")
        f.write("| | |\n|---|---|\n")
        for k in ("host", "kernel", "cores", "memory", "disk", "load", "python", "peers", "tools"):
            f.write(f"| {k} | {info[k]} |\n")
        f.write(f"| lamina binary | {lamina or 'not found'} |\n")
        f.write(f"| time in all | {total:.0f} s |\n\n")
        for name, desc, status, shown, secs in done:
            f.write(f"## {name}\n\n{desc}. Status: {status} ({secs:.0f} s).\n\n")
            if shown.strip():
                f.write("```\n" + shown.strip() + "\n```\n\n")
        if pngs:
            f.write("## Charts\n\n")
            for png in pngs:
                f.write(f"![{png}]({png})\n\n")
        f.write("Data: " + ", ".join(f"[{c}]({c})" for c in csvs) + "; logs: `*.log`.\n")


if __name__ == "__main__":
    sys.exit(main())
