#!/usr/bin/env python3
"""Reads at scale chart: for each data set in the CSVs (`lamina-bench scale-reads` writes
scale-reads-<data>-n<N>.csv; give one or more, e.g. the random and the numbers data sets), a row
of three panels: found keys' lookups/s per mode and engine (lamina first), with the device's own
random 4 KiB reads from fio (queue depth 1 across one thread of gets, 32 across the others);
device reads per found lookup, with the target of at most 1.1; absent keys' lookups/s (log
scale: they are CPU-bound, far faster).

    bench/plot_scale_reads.py RESULTS/scale-reads/scale-reads-random-n100000000.csv \\
        [MORE.csv ...] RESULTS/scale-reads/scale-reads.png
"""
import csv
import sys

COLUMNS = ("engine", "data", "keys_loaded", "memory", "mode", "threads", "batch", "stream",
           "lookups_per_s", "reads_per_lookup", "wrong")
MODES = ("single", "threads", "batch")  # the order lamina-bench runs them in
READS_TARGET = 1.1


def number(text):
    """A CSV cell as a float, or None when it is empty (no device counters, fio's rows)."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def read_rows(srcs):
    """Every row of every CSV, or the reason one cannot be used."""
    rows = []
    for src in srcs:
        try:
            with open(src, newline="") as f:
                reader = csv.DictReader(f)
                got = list(reader)
        except FileNotFoundError:
            return None, f"there is no file {src}"
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            return None, f"cannot read {src}: {e}"
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or COLUMNS)]
        if missing:
            return None, (f"{src} has no column {missing[0]}: is it a CSV of "
                          f"`lamina-bench scale-reads`?")
        rows += got
    return rows, None


def data_sets(rows):
    """The rows grouped by data set (data, keys loaded), in the CSVs' order: per data set its
    engines (lamina first, then the others in the CSV's order), its modes, the label of each mode,
    fio's rate at each queue depth, the memory cap, and each engine's row by (mode, stream); a
    later row of the same engine, mode and stream (a later CSV of the same data set) wins."""
    sets = {}
    for r in rows:
        key = (r["data"], r["keys_loaded"])
        s = sets.setdefault(key, {"engines": [], "modes": [], "labels": {}, "fio": {},
                                  "memory": None, "rows": {}})
        if r["engine"] == "fio":
            rate = number(r["lookups_per_s"])
            if rate is not None:
                s["fio"][r["mode"]] = rate
            continue
        if r["engine"] not in s["engines"]:
            s["engines"].append(r["engine"])
        if r["mode"] not in s["modes"]:
            s["modes"].append(r["mode"])
            s["labels"][r["mode"]] = mode_label(r)
        if s["memory"] is None:
            s["memory"] = number(r["memory"])
        s["rows"][(r["engine"], r["mode"], r["stream"])] = r
    for s in sets.values():
        s["engines"].sort(key=lambda e: not e.startswith("lamina"))  # stable: CSV order after
        s["modes"].sort(key=lambda m: MODES.index(m) if m in MODES else len(MODES))
    return sets


def mode_label(r):
    threads, batch = r["threads"] or "1", r["batch"] or "1"
    if r["mode"] == "batch":
        return f"1 thread,\nbatches of {batch}"
    if r["mode"] in ("single", "threads"):
        return f"{threads} thread{'' if threads == '1' else 's'},\nget"
    return r["mode"]


def keys_text(keys):
    try:
        return f"{int(keys):,} keys"
    except ValueError:
        return f"{keys} keys"


def bars(ax, s, stream, value, colors):
    """Grouped bars, a group per mode and a bar per engine; returns each group's x span."""
    n = max(len(s["engines"]), 1)
    width = 0.8 / n
    spans = {}
    for i, mode in enumerate(s["modes"]):
        spans[mode] = (i - 0.45, i + 0.45)
        for j, engine in enumerate(s["engines"]):
            r = s["rows"].get((engine, mode, stream))
            v = number(r[value]) if r else None
            if v is None:
                continue
            x = i - 0.4 + width * (j + 0.5)
            wrong = (number(r["wrong"]) or 0) > 0
            ax.bar(x, v, width, color=colors[engine], hatch="xx" if wrong else None,
                   edgecolor="black" if wrong else None, linewidth=0.5)
    ax.set_xlim(-0.5, len(s["modes"]) - 0.5)
    ax.set_xticks(range(len(s["modes"])))
    ax.set_xticklabels([s["labels"][m] for m in s["modes"]], fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    return spans


def device_lines(ax, s, spans):
    """fio's rates as dashed lines: queue depth 1 across one thread of gets, 32 across the
    others (the depths lamina-bench compares lamina with)."""
    for mode, (lo, hi) in spans.items():
        depth = "qd1" if mode == "single" else "qd32"
        rate = s["fio"].get(depth)
        if rate is None:
            continue
        ax.hlines(rate, lo, hi, colors="dimgrey", linestyles="--", linewidth=1.2)
        text = "device, queue depth 1" if depth == "qd1" else "queue depth 32"
        ax.text(lo + 0.02, rate, f"{text}\n{rate:,.0f}/s", fontsize="x-small", color="dimgrey",
                va="bottom", ha="left")


def draw_row(axes, s, key, colors):
    from matplotlib.ticker import FuncFormatter
    found, reads, absent = axes
    memory = f"memory cap {s['memory'] / 2**20:,.0f} MiB" if s["memory"] else "no memory cap"
    spans = bars(found, s, "found", "lookups_per_s", colors)
    device_lines(found, s, spans)
    found.set_ylim(0, found.get_ylim()[1] * 1.12)  # room for the device lines' labels
    found.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    found.set_ylabel("lookups/s")
    found.set_title(f"{key[0]}, {keys_text(key[1])}, {memory}: found keys", fontsize="medium")
    bars(reads, s, "found", "reads_per_lookup", colors)
    reads.axhline(READS_TARGET, color="dimgrey", linestyle="--", linewidth=1.2)
    reads.text(reads.get_xlim()[0], READS_TARGET, f" target: at most {READS_TARGET}",
               fontsize="x-small", color="dimgrey", va="bottom")
    reads.set_ylim(0, max(reads.get_ylim()[1], READS_TARGET * 1.25))
    reads.set_title("device reads per found lookup", fontsize="medium")
    if not any(number(r["reads_per_lookup"]) is not None
               for (_, _, stream), r in s["rows"].items() if stream == "found"):
        reads.text(0.5, 0.5, "no device counters\nin this run", transform=reads.transAxes,
                   ha="center", va="center", fontsize="small", color="dimgrey")
    bars(absent, s, "absent", "lookups_per_s", colors)
    absent.set_yscale("log")
    absent.set_ylabel("lookups/s (log scale)")
    absent.set_title("absent keys", fontsize="medium")


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    srcs, dst = argv[1:-1], argv[-1]
    if dst.endswith(".csv"):
        print(f"plot_scale_reads: the last argument is the chart to write, a .png, not {dst}",
              file=sys.stderr)
        return 2
    rows, err = read_rows(srcs)
    if err:
        print(f"plot_scale_reads: {err}", file=sys.stderr)
        return 1
    sets = data_sets(rows)
    if not any(s["engines"] for s in sets.values()):
        print(f"plot_scale_reads: no engine's lookups in {', '.join(srcs)}; no chart",
              file=sys.stderr)
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        print("plot_scale_reads: matplotlib is not installed; no chart", file=sys.stderr)
        return 0
    sets = {k: s for k, s in sets.items() if s["engines"]}
    engines = []
    for s in sets.values():
        engines += [e for e in s["engines"] if e not in engines]
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = {e: palette[i % len(palette)] for i, e in enumerate(engines)}
    fig, axes = plt.subplots(len(sets), 3, figsize=(12, 4 * len(sets)), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 1.6, 2]})
    for row, (key, s) in zip(axes, sets.items()):
        draw_row(row, s, key, colors)
    wrong = {r["engine"] for r in rows if r["engine"] != "fio" and (number(r["wrong"]) or 0) > 0}
    handles = [Patch(color=colors[e], label=e + (" (WRONG ANSWERS: hatched)" if e in wrong
                                                  else "")) for e in engines]
    # The legend once, above the first row; tight layout in the rest of the height.
    top = 1 - 0.35 / fig.get_figheight()
    fig.legend(handles=handles, fontsize="small", loc="upper center", ncol=len(handles),
               frameon=False)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(dst, dpi=120)
    print(f"plot_scale_reads: wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
