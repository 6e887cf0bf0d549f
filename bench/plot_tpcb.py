#!/usr/bin/env python3
"""TPC-B chart: durable transactions per second against threads, one line per engine in the
CSV (`lamina-bench tpcb` writes tpcb.csv, bench/tpcb.py tpcb-python.csv, in the same columns;
give one or more), with lamina's targets: 8x its one-thread rate, and each file's testfile (the
disk's write + lseek + fsync rate, the mean of the runs around its engines).

    bench/plot_tpcb.py RESULTS/tpcb/tpcb.csv [MORE.csv ...] RESULTS/tpcb/tpcb.png
"""
import csv
import os
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    srcs, dst = argv[1:-1], argv[-1]
    rows, testfile = [], {}
    for src in srcs:
        try:
            with open(src, newline="") as f:
                got = list(csv.DictReader(f))
        except OSError as e:
            print(f"plot_tpcb: {e}", file=sys.stderr)
            continue
        rows += got
        # Each run's own testfile: the two runs were at different times.
        tf = [float(r["testfile_ops_per_s"]) for r in got if r.get("testfile_ops_per_s")]
        if tf:
            testfile[os.path.basename(src)] = sum(tf) / len(tf)
    if not rows:
        print("plot_tpcb: no rows; no chart", file=sys.stderr)
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_tpcb: matplotlib is not installed; no chart", file=sys.stderr)
        return 0
    engines = {}
    for r in rows:
        engines.setdefault(r["engine"], []).append(r)
    fig, ax = plt.subplots(figsize=(8, 5))
    ticks = set()
    for engine, erows in engines.items():
        erows.sort(key=lambda r: int(r["threads"]))
        threads = [int(r["threads"]) for r in erows]
        ticks.update(threads)
        bad = any(r["invariant"] != "ok" for r in erows)
        (line,) = ax.plot(threads, [float(r["txns_per_s"]) for r in erows], "o-",
                          label=engine + (" (INVARIANT FAILED)" if bad else ""))
        if engine.startswith("lamina"):
            one = [float(r["txns_per_s"]) for r in erows if int(r["threads"]) == 1]
            if one:
                ax.axhline(8 * one[0], color=line.get_color(), linestyle=":", alpha=0.6,
                           label=f"8x {engine} at 1 thread")
    for (name, mean), style in zip(testfile.items(), ["--", "-.", ":"] * len(testfile)):
        ax.axhline(mean, color="grey", linestyle=style,
                   label=f"testfile {mean:,.0f} fsyncs/s ({name})")
    ax.set_xscale("log", base=2)
    ticks = sorted(ticks)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.set_xlabel("threads")
    ax.set_ylabel("durable TPC-B transactions per second")
    ax.set_title("TPC-B (ex_tpcb's transaction), every commit durable")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(dst, dpi=100)
    print(f"plot_tpcb: wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
