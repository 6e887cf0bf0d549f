#!/usr/bin/env python3
"""Seed 004 chart: durable commits per second against writer threads, one
line per engine in the CSV (`lamina bench commit --csv` writes `lamina` rows,
`bench/commit_threads.py --csv` `lamina-python` rows, in the same columns),
with 8x each engine's one-thread rate (the target at sixteen threads) and the
testfile line (the disk's write + lseek + fsync rate, the mean of the runs
beside the rows).

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
        rows = [r for r in csv.DictReader(f) if r.get("engine", "").startswith("lamina")]
    if not rows:
        print(f"plot_commits: no lamina rows in {src}; no chart", file=sys.stderr)
        return 0
    engines = {}
    for r in rows:
        engines.setdefault(r["engine"], []).append(r)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_commits: matplotlib is not installed; no chart", file=sys.stderr)
        return 0
    testfile = sum(float(r["testfile_ops_per_s"]) for r in rows) / len(rows)
    fig, ax = plt.subplots(figsize=(8, 5))
    ticks = set()
    for engine, erows in engines.items():
        threads = [int(r["threads"]) for r in erows]
        rate = [float(r["commits_per_s"]) for r in erows]
        ticks.update(threads)
        line, = ax.plot(threads, rate, "o-", label=f"{engine} Sync commits/s")
        one = [float(r["commits_per_s"]) for r in erows if int(r["threads"]) == 1]
        if one:
            ax.axhline(8 * one[0], color=line.get_color(), linestyle=":", alpha=0.6,
                       label=f"8x {engine} at one thread")
    ax.axhline(testfile, color="grey", linestyle="--", label=f"testfile {testfile:,.0f} fsyncs/s")
    ax.set_xscale("log", base=2)
    ticks = sorted(ticks)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
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
