#!/usr/bin/env python3
"""Durable commits chart: durable commits per second against writer threads, one
line per run of each engine in the CSV (`lamina-bench commit --csv` writes
`lamina` rows, `bench/commit_threads.py --csv` `lamina-python` rows, in the
same columns; a run ends where the threads stop growing), with 8x each
engine's one-thread rate, the mean over its runs (the target at sixteen
threads), and the
testfile line (the disk's write + lseek + fsync rate, the mean of the runs
beside the rows).

    bench/plot_commits.py RESULTS/commits.csv RESULTS/commits.png
"""
import csv
import sys


def split_runs(rows):
    """An engine's rows as runs: a run goes up in threads; a row with no more
    threads than the one before starts the next."""
    runs = []
    for r in rows:
        if not runs or int(r["threads"]) <= int(runs[-1][-1]["threads"]):
            runs.append([])
        runs[-1].append(r)
    return runs


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
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for n, (engine, erows) in enumerate(engines.items()):
        color = colors[n % len(colors)]
        runs = split_runs(erows)
        for i, run in enumerate(runs):
            threads = [int(r["threads"]) for r in run]
            ticks.update(threads)
            label = f"{engine} Sync commits/s" + (f" ({len(runs)} runs)" if len(runs) > 1 else "")
            ax.plot(threads, [float(r["commits_per_s"]) for r in run], "o-", color=color,
                    alpha=0.8, label=label if i == 0 else None)
        one = [float(r["commits_per_s"]) for r in erows if int(r["threads"]) == 1]
        if one:
            ax.axhline(8 * sum(one) / len(one), color=color, linestyle=":", alpha=0.6,
                       label=f"8x {engine} at one thread" + (" (mean)" if len(one) > 1 else ""))
    ax.axhline(testfile, color="grey", linestyle="--", label=f"testfile {testfile:,.0f} fsyncs/s")
    ax.set_xscale("log", base=2)
    ticks = sorted(ticks)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.set_xlabel("writer threads")
    ax.set_ylabel("durable commits per second")
    ax.set_title("Durable commits: group commit, 256-byte values, one Sync write per commit")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(dst, dpi=100)
    print(f"plot_commits: wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
