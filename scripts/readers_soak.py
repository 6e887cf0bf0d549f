"""Readers beside a live writer, across processes, for a while.

One writer process writes, flushes and compacts continuously (a small
memtable; values above and below the blob threshold) while reader processes
open the database read-only, read every key, scan, refresh and close in a
loop, and `lamina check`, `lamina count` and `lamina scan` run beside them.
Every reader checks that its view is consistent: no key's version goes back
in time (across refreshes and reopens), and every value is whole. At the end
the writer closes, a table is damaged on purpose, and `lamina check` must
report the damage (exit 6).

    python scripts/readers_soak.py --seconds 60 --lamina target/release/lamina

Prints one line per second and a summary; exits 1 on any false error,
inconsistent view, or damage not reported.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

KEYS = 200

WRITER = textwrap.dedent(
    """
    import sys, time, lamina
    path, stop_file = sys.argv[1], sys.argv[2]
    db = lamina.open(path, "n", memtable_size=64 << 10)
    n = 0
    while not __import__("os").path.exists(stop_file):
        n += 1
        for k in range(%(keys)d):
            size = 6000 if k %% 5 == 0 else 40
            db[b"k%%04d" %% k] = n.to_bytes(8, "big") + bytes([k %% 251]) * (size - 8)
        if n %% 5 == 0:
            db.flush()
        if n %% 23 == 0:
            db.compact()
    db.close()
    print(n)
    """
) % {"keys": KEYS}

READER = textwrap.dedent(
    """
    import sys, time, lamina
    path, seconds = sys.argv[1], float(sys.argv[2])
    last = {}
    opens = refreshes = reads = 0
    deadline = time.time() + seconds
    while time.time() < deadline:
        db = lamina.open(path, "r")
        opens += 1
        for _ in range(4):
            for k, v in db.items():
                n = int.from_bytes(v[:8], "big")
                i = int(k[1:])
                expect = n.to_bytes(8, "big") + bytes([i % 251]) * (len(v) - 8)
                if v != expect:
                    sys.exit("torn value for %r" % k)
                if n < last.get(k, 0):
                    sys.exit("%r went back in time: %d after %d" % (k, n, last[k]))
                last[k] = n
                reads += 1
            db.refresh()
            refreshes += 1
        db.close()
    print(opens, refreshes, reads)
    """
)


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--readers", type=int, default=3)
    ap.add_argument("--lamina", default="target/release/lamina", help="the lamina binary")
    ap.add_argument("--dir", default=None, help="where the database goes (a temporary directory)")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="lamina-readers-", dir=args.dir)
    path = os.path.join(work, "db")
    stop = os.path.join(work, "stop")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, path, stop], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while not os.path.exists(os.path.join(path, "CURRENT")):
        time.sleep(0.05)
    time.sleep(0.5)
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, path, str(args.seconds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(args.readers)
    ]
    errors = []
    checks, counts, scans = run_cli(args.lamina, path, args.seconds, errors)
    opens, refreshes, reads = reader_totals(readers, errors)
    open(stop, "w").close()
    out, err = writer.communicate()
    if writer.returncode != 0:
        errors.append("writer: " + err.decode().strip()[-2000:])
    rounds = int(out or 0)
    tables = sorted(f for f in os.listdir(path) if f.endswith(".sst"))
    damage_reported = bool(tables) and damage_is_reported(args.lamina, path, tables[0])

    print()
    print("| what | count |")
    print("|---|---|")
    for name, value in (
        ("seconds", "%.0f" % args.seconds),
        ("writer rounds (%d keys each)" % KEYS, rounds),
        ("reader opens", opens),
        ("refreshes", refreshes),
        ("values read by readers", reads),
        ("lamina check runs", checks),
        ("lamina count runs", counts),
        ("lamina scan runs", scans),
        ("false errors", len(errors)),
        ("damage at the end reported", "yes" if damage_reported else "NO"),
    ):
        print("| %s | %s |" % (name, value))
    for e in errors[:20]:
        print("error:", e, file=sys.stderr)
    if errors or not damage_reported or not tables:
        sys.exit(1)
    subprocess.run(["rm", "-rf", work])


def run_cli(lamina, path, seconds, errors):
    """`lamina check`, `count` and `scan` in turn on the live database for `seconds`, a line
    printed each second; a failed run is added to `errors`. Returns how many of each ran."""
    checks = counts = scans = 0
    start = time.time()
    next_line = start + 1
    while time.time() - start < seconds:
        for cmd, kind in (
            ([lamina, "check", path], "check"),
            ([lamina, "count", path], "count"),
            ([lamina, "scan", path, "--limit", "50"], "scan"),
        ):
            r = run(cmd)
            if r.returncode != 0:
                errors.append("%s exit %d: %s" % (kind, r.returncode, r.stderr.decode().strip()))
            checks += kind == "check"
            counts += kind == "count"
            scans += kind == "scan"
        if time.time() >= next_line:
            print(
                "%5.0f s  checks %d  counts %d  scans %d  errors %d"
                % (time.time() - start, checks, counts, scans, len(errors)),
                flush=True,
            )
            next_line += 1
    return checks, counts, scans


def reader_totals(readers, errors):
    """Waits for the reader processes; returns their opens, refreshes and values read,
    summed, and adds the error of each that failed to `errors`."""
    opens = refreshes = reads = 0
    for r in readers:
        out, err = r.communicate()
        if r.returncode != 0:
            errors.append("reader: " + err.decode().strip()[-2000:])
            continue
        o, f, n = (int(x) for x in out.split())
        opens, refreshes, reads = opens + o, refreshes + f, reads + n
    return opens, refreshes, reads


def damage_is_reported(lamina, path, table):
    """Real damage is still damage: flips bytes in the middle of `table`, then whether
    `lamina check` reports it (exit 6)."""
    t = os.path.join(path, table)
    with open(t, "r+b") as f:
        f.seek(os.path.getsize(t) // 3)
        f.write(b"\xffdamage\xff")
    return run([lamina, "check", path]).returncode == 6


if __name__ == "__main__":
    main()
