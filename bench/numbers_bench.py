#!/usr/bin/env python3
"""The numbers load: the numbers-in-English data set at doubling sizes (bench/README.md).

Record N is key N (decimal ASCII) and value N in English, exactly as the Perl program of the
original write-up writes it (crates/lamina-cli/tests/fixtures/numbers.pl). The input stream is one line per record, `store N "words"`, for
N = 0 .. size-1. For each size 2^min .. 2^max the stream is generated once into a file (not
timed; the generator's own rate is reported), then each engine loads it and is timed:

  gdbm     gdbmtool --newdb DB < stream
  bdb      db5.3_load -T -t btree -f stream.bdb DB   (the stream converted to db_load's text
           format, alternating key and value lines, backslashes escaped; conversion not timed)
  lamina   lamina shell --newdb DB < stream          (with --lamina PATH, or `lamina` on PATH)
  lamina-gen  the built-in generator path, `lamina gen numbers N --into DB --newdb`
           (--lamina-builtin changes it); timed as a whole, generation included

With --pipe the generator runs in the timed pipeline instead (`GEN | gdbmtool --newdb DB`), as in
the original write-up. Prints records/s and the file size per size and engine; --csv and --png write them.
An engine whose next size would take longer than --budget seconds (by doubling its last time) is
not run at that size. --memlimit SIZE caps each load's memory, page cache included, with
bench/memlimit (a cgroup memory cap; needs root), or the program $LAMINA_MEMLIMIT names.
"""
import argparse
import csv
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The original write-up's Perl program, kept once, beside the CLI's tests that check against it.
ORACLE = os.path.join(HERE, "..", "crates", "lamina-cli", "tests", "fixtures", "numbers.pl")
MEMLIMIT = os.environ.get("LAMINA_MEMLIMIT") or os.path.join(HERE, "memlimit")


def du(path):
    if os.path.isfile(path):
        return os.lstat(path).st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def to_db_load(src, dst):
    """`store N "words"` lines -> db_load -T text: key line, value line, backslashes escaped.

    gdbmtool's quoted strings may escape \\ and \"; both are undone before db_load's escaping.
    """
    with open(src, "rb") as fin, open(dst, "wb", buffering=1 << 20) as fout:
        out = []
        for line in fin:
            if not line.startswith(b"store "):
                continue
            sp = line.index(b" ", 6)
            key = line[6:sp]
            val = line[sp + 1:].rstrip(b"\n")
            if val[:1] == b'"' and val[-1:] == b'"':
                val = val[1:-1]
                if b"\\" in val:
                    val = val.replace(b'\\"', b'"').replace(b"\\\\", b"\\")
            if b"\\" in key or b"\\" in val:
                key = key.replace(b"\\", b"\\\\")
                val = val.replace(b"\\", b"\\\\")
            out.append(key + b"\n" + val + b"\n")
            if len(out) >= 65536:
                fout.write(b"".join(out))
                out.clear()
        fout.write(b"".join(out))


def count_lines(path):
    n = 0
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 22)
            if not b:
                return n
            n += b.count(b"\n")


def run_timed(cmd, stdin_path=None, shell=False):
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        if shell:  # a pipeline fails if any of its commands fails
            cmd = ["bash", "-o", "pipefail", "-c", cmd]
        p = subprocess.run(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        secs = time.perf_counter() - t0
    finally:
        if stdin_path:
            stdin.close()
    return p.returncode, secs, p.stderr.decode(errors="replace").strip()[-400:]


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--min", type=int, default=17, help="smallest size, as an exponent of 2 (17)")
    p.add_argument("--max", type=int, default=20, help="largest size, as an exponent of 2 (20)")
    p.add_argument("--gen", help="generator command; {n} is the largest N to print "
                   "(size-1). Default: '{lamina} gen numbers {n}' when a lamina binary is "
                   "found, else 'perl crates/lamina-cli/tests/fixtures/numbers.pl {n}' (the original program)")
    p.add_argument("--lamina", help="lamina binary (default: `lamina` on PATH, if any)")
    p.add_argument("--lamina-builtin", metavar="TEMPLATE",
                   default="{lamina} gen numbers {n} --into {db} --newdb",
                   help="command for lamina's built-in generator path (default "
                        "'{lamina} gen numbers {n} --into {db} --newdb')")
    p.add_argument("--engines", default="gdbm,bdb,lamina,lamina-gen",
                   help="comma-separated: gdbm,bdb,lamina,lamina-gen (default all available)")
    p.add_argument("--pipe", action="store_true",
                   help="time `GEN | ENGINE` as the original did, instead of loading from a file")
    p.add_argument("--check", action="store_true",
                   help="compare the generator's output with crates/lamina-cli/tests/fixtures/numbers.pl at every size")
    p.add_argument("--budget", type=float, default=300.0,
                   help="skip an engine at a size predicted (2x its last time) to take longer "
                        "than this many seconds (default 300)")
    p.add_argument("--memlimit", help="cap each load's memory at SIZE (bench/memlimit)")
    p.add_argument("--tmpdir", default=None, help="where streams and databases go (/tmp)")
    p.add_argument("--keep", action="store_true", help="keep the databases")
    p.add_argument("--csv", help="append results to this CSV file")
    p.add_argument("--png", help="write a chart of records/s against size to this PNG")
    return p


def generator(args, lamina):
    """The generator command template ({lamina}, {n}): --gen, else lamina's, else numbers.pl."""
    if args.gen:
        return args.gen
    if lamina:
        return "{lamina} gen numbers {n}"
    print(f"generator: no lamina binary; using the original Perl program {ORACLE}",
          file=sys.stderr)
    return "perl " + shlex.quote(ORACLE) + " {n}"


def available_engines(args, lamina, error):
    """The engines of --engines whose tools are here; a message for each that is not.
    `error` is called with the message for an unknown engine."""
    engines = []
    for e in [e.strip() for e in args.engines.split(",") if e.strip()]:
        if e == "gdbm":
            if shutil.which("gdbmtool"):
                engines.append(e)
            else:
                print("skipped gdbm: gdbmtool not found (bench/setup installs it)", file=sys.stderr)
        elif e == "bdb":
            if shutil.which("db5.3_load"):
                engines.append(e)
            else:
                print("skipped bdb: db5.3_load not found (bench/setup installs it)",
                      file=sys.stderr)
        elif e == "lamina":
            if lamina:
                engines.append(e)
            else:
                print("skipped lamina: no lamina binary (--lamina PATH, or build it: "
                      "cargo build --release -p lamina-cli)", file=sys.stderr)
        elif e == "lamina-gen":
            if lamina and args.lamina_builtin:
                engines.append(e)
        else:
            error(f"unknown engine {e}")
    return engines


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    lamina = args.lamina or shutil.which("lamina")
    gen = generator(args, lamina)
    engines = available_engines(args, lamina, p.error)
    if not engines:
        print("no engine to run", file=sys.stderr)
        return 0

    work = tempfile.mkdtemp(prefix="numbers_bench.", dir=args.tmpdir)
    results = []
    print(f"numbers load: sizes 2^{args.min}..2^{args.max}, generator: {gen}"
          + (", timed as a pipe" if args.pipe else "")
          + (f", memory capped at {args.memlimit}" if args.memlimit else ""))
    hdr = f"{'records':>12} {'engine':<11} {'seconds':>9} {'records/s':>11} {'MB':>9}"
    print(hdr)
    print("-" * len(hdr))
    try:
        if not load_sizes(args, lamina, gen, engines, work, results):
            return 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    if args.csv:
        write_csv(args, results)
    if args.png:
        plot(args.png, results, args)
    return 0


def load_sizes(args, lamina, gen, engines, work, results):
    """For each size 2^min .. 2^max: the stream generated into `work`, then loaded by each
    engine; a row per run appended to `results` and printed. False when --check finds the
    generator's output differs from numbers.pl (the run stops there)."""
    wrap = [MEMLIMIT, args.memlimit] if args.memlimit else []
    last_secs = {}
    for exp in range(args.min, args.max + 1):
        size = 1 << exp
        n = size - 1
        fmt = dict(lamina=shlex.quote(lamina or "lamina"), n=n)
        gen_cmd = gen.format(**fmt)
        stream = os.path.join(work, f"numbers.{exp}.txt")
        records = generate_stream(gen_cmd, stream, exp, size, results)
        if records is None:
            break
        if args.check and not same_as_oracle(stream, n, work):
            return False
        bdb_stream = None
        for eng in engines:
            prev = last_secs.get(eng)
            if prev is not None and prev * 2.2 > args.budget:
                print(f"{records:>12,} {eng:<11} {'skipped':>9}  (2x {prev:.0f} s > budget "
                      f"{args.budget:g} s)")
                continue
            db = os.path.join(work, f"{eng}.{exp}.db")
            if eng == "bdb" and not args.pipe and bdb_stream is None:
                bdb_stream = stream + ".bdb"
                to_db_load(stream, bdb_stream)
            tool = wrap + load_command(eng, args, lamina, db, fmt, bdb_stream)
            rc, secs, err = run_load(eng, tool, args.pipe, gen_cmd, stream)
            report_load(results, exp, records, eng, db, rc, secs, err)
            last_secs[eng] = secs
            if not args.keep:
                shutil.rmtree(db, ignore_errors=True) if os.path.isdir(db) else (
                    os.path.exists(db) and os.remove(db))
        os.remove(stream)
        if bdb_stream:
            os.remove(bdb_stream)
    return True


def generate_stream(gen_cmd, stream, exp, size, results):
    """Writes one size's stream, timed, and reports it as the generator's row; returns the
    records it holds, or None when the generator failed."""
    rc, gsecs, err = run_timed(f"{gen_cmd} > {shlex.quote(stream)}", shell=True)
    if rc != 0:
        print(f"generator failed (status {rc}): {err}", file=sys.stderr)
        return None
    records = count_lines(stream)
    if records != size:
        print(f"  note: the generator printed {records} lines for size {size}",
              file=sys.stderr)
    results.append(dict(exp=exp, records=records, engine="generator", seconds=gsecs,
                        rate=records / gsecs, bytes=os.path.getsize(stream), ok=1))
    print(f"{records:>12,} {'generator':<11} {gsecs:>9.2f} {records / gsecs:>11,.0f} "
          f"{os.path.getsize(stream) / 1e6:>9.1f}")
    return records


def same_as_oracle(stream, n, work):
    """Whether `stream` is what numbers.pl prints for records 0 .. n; says which."""
    oracle = os.path.join(work, "oracle.txt")
    subprocess.run(["perl", ORACLE, str(n)], stdout=open(oracle, "wb"), check=True)
    same = subprocess.run(["cmp", "-s", oracle, stream]).returncode == 0
    print(f"  check: generator output {'==' if same else 'DIFFERS FROM'} numbers.pl")
    os.remove(oracle)
    return same


def load_command(eng, args, lamina, db, fmt, bdb_stream):
    """The command that loads `eng`'s database `db` (its stdin the stream, unless it reads
    db_load's converted stream `bdb_stream` or generates its own records)."""
    if eng == "gdbm":
        return ["gdbmtool", "--newdb", db]
    if eng == "bdb":
        return ["db5.3_load", "-T", "-t", "btree"] + (
            ["-f", bdb_stream, db] if not args.pipe else [db])
    if eng == "lamina":
        return [lamina, "shell", "--newdb", db]
    return shlex.split(args.lamina_builtin.format(db=db, **fmt))  # lamina-gen


def run_load(eng, tool, pipe, gen_cmd, stream):
    """Runs one engine's load, timed: from the stream file, or with --pipe from the
    generator itself (converted for db_load on the way); (status, seconds, stderr tail)."""
    if eng == "lamina-gen":
        return run_timed(tool)
    if pipe:
        q = shlex.quote
        conv = ""
        if eng == "bdb":
            code = (f"import sys; sys.path.insert(0, {HERE!r}); "
                    "import numbers_bench as m; "
                    "m.to_db_load('/dev/stdin', '/dev/stdout')")
            conv = f" | {q(sys.executable)} -c {q(code)}"
        return run_timed(f"{gen_cmd}{conv} | " + " ".join(q(a) for a in tool), shell=True)
    if eng == "bdb":
        return run_timed(tool)
    return run_timed(tool, stdin_path=stream)


def report_load(results, exp, records, eng, db, rc, secs, err):
    """Appends one load's row to `results` and prints it."""
    ok = rc == 0
    size_b = du(db) if os.path.exists(db) else 0
    results.append(dict(exp=exp, records=records, engine=eng, seconds=secs,
                        rate=records / secs, bytes=size_b, ok=int(ok)))
    print(f"{records:>12,} {eng:<11} {secs:>9.2f} {records / secs:>11,.0f} "
          f"{size_b / 1e6:>9.1f}" + ("" if ok else f"  FAILED (status {rc}): {err}"),
          flush=True)


def write_csv(args, results):
    """Appends the rows to --csv, with a header when the file is new or empty."""
    new = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
    with open(args.csv, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["records", "engine", "seconds", "records_per_s", "bytes", "ok",
                        "mode", "memlimit"])
        for r in results:
            w.writerow([r["records"], r["engine"], f"{r['seconds']:.3f}", f"{r['rate']:.0f}",
                        r["bytes"], r["ok"], "pipe" if args.pipe else "file",
                        args.memlimit or ""])


def plot(path, results, args):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (bench/setup installs it)", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(9, 5))
    for eng in dict.fromkeys(r["engine"] for r in results):
        pts = [(r["records"], r["rate"]) for r in results if r["engine"] == eng and r["ok"]]
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=eng,
                    linestyle="--" if eng == "generator" else "-")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("records loaded")
    ax.set_ylabel("records/s (higher is better)")
    ax.set_title("The numbers load: numbers in English, load rate against size"
                 + (f" (memory {args.memlimit})" if args.memlimit else ""))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
