#!/usr/bin/env python3
"""Seed 004 chart: durable commits per second against writer threads, with
the testfile line (the disk's write + lseek + fsync rate), from the CSV that
`lamina bench commits --csv` writes.

    bench/plot_commits.py RESULTS/commits.csv RESULTS/commits.png
"""
import csv
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, dst = argv[1], argv[2]
    with open(src, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("engine") == "lamina"]
    if not rows:
        print(f"plot_commits: no lamina rows in {src}; no chart", file=sys.stderr)
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_commits: matplotlib is not installed; no chart", file=sys.stderr)
        return 0
    threads = [int(r["threads"]) for r in rows]
    rate = [float(r["commits_per_s"]) for r in rows]
    testfile = float(rows[0]["testfile_ops_per_s"])
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(threads, rate, "o-", label="lamina Sync commits/s")
    ax.axhline(testfile, color="grey", linestyle="--", label=f"testfile {testfile:,.0f} fsyncs/s")
    ax.set_xscale("log", base=2)
    ax.set_xticks(threads)
    ax.set_xticklabels([str(t) for t in threads])
    ax.set_xlabel("writer threads")
    ax.set_ylabel("durable commits per second")
    ax.set_title("seed 004: group commit, 256-byte values, one Sync write per commit")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(dst, dpi=100)
    print(f"plot_commits: wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
