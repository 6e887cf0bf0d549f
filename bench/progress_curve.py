#!/usr/bin/env python3
"""Per-interval write rate of a load, from lamina's plain progress lines.

    lamina gen numbers 124999999 | lamina shell --newdb --progress \\
        --progress-interval 1 /tmp/numbers.lamina 2> load.log
    python3 bench/progress_curve.py load.log --csv curve.csv

Each progress line carries the records done so far and the elapsed time;
the difference between consecutive lines is the rate over that interval.
Prints the median interval rate, the slowest interval, the longest stretch
of consecutive intervals below half the median (the stall the numbers
load's target forbids at 2 s or more), and the total time; `--csv` writes
one row per interval (`end_seconds,records,records_per_s`) to draw the
curve from; `--png` draws it (records loaded against records/s, log scale)
beside the gdbm load of "How well does a GNU dbm database scale?", from the
averages that write-up gives at each doubling (2^17 to 2^26 records, then
112,063,312 after 10.25 hours).
Exits 1 when a stretch of at least `--max-stall` seconds (default 2) is
below half the median.
"""

import argparse
import csv
import re
import statistics
import sys

LINE = re.compile(r"lamina \w+: ([\d,]+) records, .*elapsed (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)")


def points(lines):
    """(elapsed seconds, records) of each progress line, in order."""
    out = []
    for line in lines:
        m = LINE.search(line)
        if not m or "done:" in line:
            continue
        hours = int(m.group(2) or 0)
        secs = hours * 3600 + int(m.group(3)) * 60 + float(m.group(4))
        out.append((secs, int(m.group(1).replace(",", ""))))
    return out


def intervals(pts):
    """(end seconds, records, rate) per pair of consecutive points."""
    rows = []
    for (t0, r0), (t1, r1) in zip(pts, pts[1:]):
        if t1 > t0:
            rows.append((t1, r1, (r1 - r0) / (t1 - t0)))
    return rows


def longest_slow_stretch(rows, threshold):
    """Seconds of the longest run of intervals below `threshold`, and where it ends."""
    best, start, prev_end, at = 0.0, None, None, None
    for end, _, rate in rows:
        if rate < threshold:
            if start is None:
                start = prev_end if prev_end is not None else end
            if end - start > best:
                best, at = end - start, end
        else:
            start = None
        prev_end = end
    return best, at


# The original write-up's gdbm load: (records, average records/s since the
# start), as it reports them.
GDBM_SEED = [
    (131_072, 131_072), (262_144, 131_072), (524_288, 174_763),
    (1_048_576, 174_763), (2_097_152, 161_319), (4_194_304, 135_300),
    (8_388_608, 106_183), (16_777_216, 37_200), (33_554_432, 43_296),
    (67_108_864, 4_096), (112_063_312, 3_044),
]


def draw(rows, path, label):
    """The curve as a PNG: per-interval rate against records loaded."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot([r for _, r, _ in rows], [x for _, _, x in rows], lw=1,
            label=f"{label}: records/s over each interval")
    ax.plot([r for r, _ in GDBM_SEED], [x for _, x in GDBM_SEED], "o--",
            label="gdbm (the original write-up): average records/s since the start")
    ax.set_xlabel("records loaded")
    ax.set_ylabel("records/s")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title("The numbers load: 125 M records through the gdbmtool-language pipe")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("log", nargs="?", help="stderr of the load (default: stdin)")
    p.add_argument("--csv", help="write one row per interval to this file")
    p.add_argument("--max-stall", type=float, default=2.0,
                   help="seconds below half the median that fail the run (default 2)")
    p.add_argument("--png", help="draw the curve, beside the original gdbm load, into this PNG")
    p.add_argument("--label", default="lamina", help="the curve's name in the chart")
    a = p.parse_args()
    lines = open(a.log, errors="replace") if a.log else sys.stdin
    rows = intervals(points(lines))
    if not rows:
        sys.exit("no progress lines (run with --progress and stderr not a terminal)")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["end_seconds", "records", "records_per_s"])
            for end, records, rate in rows:
                w.writerow([f"{end:.1f}", records, f"{rate:.0f}"])
    if a.png:
        draw(rows, a.png, a.label)
    median = statistics.median(r for _, _, r in rows)
    slowest = min(rows, key=lambda r: r[2])
    stretch, at = longest_slow_stretch(rows, median / 2)
    print(f"intervals          {len(rows)}, {rows[-1][0]:.1f} s, {rows[-1][1]:,} records")
    print(f"median rate        {median:,.0f} records/s")
    print(f"slowest interval   {slowest[2]:,.0f} records/s, ending at {slowest[0]:.1f} s")
    where = f", ending at {at:.1f} s" if at is not None else ""
    print(f"below half median  longest stretch {stretch:.1f} s{where}")
    sys.exit(1 if stretch >= a.max_stall else 0)


if __name__ == "__main__":
    main()
