#!/usr/bin/env python3
"""The curve of a TokuDB db-update run, from `lamina-bench update --csv`.

    lamina-bench update -q --ops 1000000000 --csv update.csv ...
    python3 bench/update_curve.py update.csv --png update.png

Prints the operations done, the overall rate, the rates of the first and
last tenth of the run (the target: the last tenth at least half the first)
and the slowest interval; `--png` draws the interval rate against the
operations done, beside 3x TokuFT's rate (95,380 upserts/s: TokuDB's own
db-update under a 512 MiB cap, bench/README.md).
"""

import argparse
import csv
import sys

TOKUFT_PER_S = 95_380


def rows(path):
    """(ops done, interval seconds, interval rate, overall rate) per CSV row."""
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not r["ops"].isdigit():
                continue  # the closing "total N" row
            out.append((int(r["ops"]), float(r["interval_s"]),
                        float(r["interval_per_s"]), float(r["overall_per_s"])))
    return out


def tenth_rate(rs, first):
    """Operations per second over the first (or last) tenth of the rows' operations."""
    total = rs[-1][0]
    lo, hi = (0, total / 10) if first else (total - total / 10, total)
    ops = secs = 0.0
    prev = 0
    for done, s, _, _ in rs:
        if lo <= prev and done <= hi + 1:
            ops += done - prev
            secs += s
        prev = done
    return ops / secs if secs else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv")
    p.add_argument("--png")
    a = p.parse_args()
    rs = rows(a.csv)
    if not rs:
        sys.exit(f"{a.csv}: no rows")
    first, last = tenth_rate(rs, True), tenth_rate(rs, False)
    slowest = min(rs, key=lambda r: r[2])
    print(f"operations       {rs[-1][0]:,} in {sum(r[1] for r in rs):,.0f} s")
    print(f"overall rate     {rs[-1][3]:,.0f}/s = {rs[-1][3] / TOKUFT_PER_S:.2f}x TokuFT's {TOKUFT_PER_S:,}/s")
    print(f"first tenth      {first:,.0f}/s")
    print(f"last tenth       {last:,.0f}/s = {last / first:.2f}x the first")
    print(f"slowest interval {slowest[2]:,.0f}/s, ending at {slowest[0]:,} ops")
    if a.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            sys.exit("matplotlib is not installed: no chart (bench/setup installs it)")
        fig, ax = plt.subplots(figsize=(8, 4.5))
        ax.plot([r[0] for r in rs], [r[2] for r in rs], lw=0.8,
                label="lamina: upserts/s over each interval")
        ax.plot([r[0] for r in rs], [r[3] for r in rs], lw=1.5,
                label="lamina: upserts/s since the start")
        ax.axhline(3 * TOKUFT_PER_S, color="tab:red", ls="--",
                   label=f"3x TokuFT's {TOKUFT_PER_S:,}/s")
        ax.set_xlabel("upserts done")
        ax.set_ylabel("upserts/s")
        ax.set_ylim(bottom=0)
        ax.set_title("TokuDB's db-update on lamina under a 512 MiB cap, 256 MiB budget")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.png, dpi=100)
        print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
