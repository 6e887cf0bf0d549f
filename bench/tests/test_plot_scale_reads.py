"""bench/plot_scale_reads.py: a chart of a small scale-reads CSV (two data sets, two engines and
fio's rows) when matplotlib is installed, its message when it is not; a CSV with no rows and a
missing file each say so plainly."""
import csv
import importlib.util
import os
import subprocess
import sys

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(BENCH, "plot_scale_reads.py")
HEADER = ("engine,version,data,keys_loaded,memory,mode,threads,batch,stream,lookups,seconds,"
          "lookups_per_s,device_reads,reads_per_lookup,read_bytes,kib_per_lookup,p50_us,p99_us,"
          "wrong").split(",")


def has(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def plot(*args):
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def write_csv(path, data="random", keys=20000):
    """Rows as `lamina-bench scale-reads` writes them: each engine's three modes with found and
    absent keys, then fio at queue depths 1 and 32."""
    rows = []
    for engine, scale in (("rocksdb", 1.0), ("lamina", 0.8)):  # lamina second: drawn first
        for mode, threads, batch in (("single", 1, 1), ("threads", 16, 1), ("batch", 1, 64)):
            for stream, rate, reads in (("found", 8000, 0.95), ("absent", 300000, 0.01)):
                r = rate * scale * threads
                rows.append([engine, f"{engine} 1.0", data, keys, 536870912, mode, threads, batch,
                             stream, int(r * 10), 10.0, r, int(r * 10 * reads), reads, 4096,
                             4.0, 100.0, 500.0, 0])
    rows.append(["fio", "fio randread 4k direct libaio", data, keys, "", "qd1", 1, "", "", "", 10,
                 10298.0, "", "", "", "", 64.0, 124.0, ""])
    rows.append(["fio", "fio randread 4k direct libaio", data, keys, "", "qd32", 1, "", "", "",
                 10, 57269.0, "", "", "", "", 544.0, 1105.0, ""])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def test_chart_of_two_data_sets(tmp_path):
    random_csv = write_csv(tmp_path / "scale-reads-random-n20000.csv")
    numbers_csv = write_csv(tmp_path / "scale-reads-numbers-n20000.csv", data="numbers")
    png = tmp_path / "scale-reads.png"
    r = plot(random_csv, numbers_csv, png)
    assert r.returncode == 0, r.stdout + r.stderr
    if has("matplotlib"):
        assert png.exists() and png.stat().st_size > 0
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"wrote {png}" in r.stdout
    else:
        assert "matplotlib is not installed; no chart" in r.stderr
        assert not png.exists()


def test_a_csv_with_no_rows_draws_nothing(tmp_path):
    empty = tmp_path / "scale-reads-random-n20000.csv"
    empty.write_text(",".join(HEADER) + "\n")
    png = tmp_path / "scale-reads.png"
    r = plot(empty, png)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no engine's lookups in" in r.stderr and "no chart" in r.stderr
    assert not png.exists()


def test_a_missing_file_is_a_clear_error(tmp_path):
    png = tmp_path / "scale-reads.png"
    r = plot(tmp_path / "nowhere.csv", png)
    assert r.returncode == 1
    assert f"there is no file {tmp_path / 'nowhere.csv'}" in r.stderr
    assert "Traceback" not in r.stderr
    assert not png.exists()


def test_another_csv_and_a_csv_as_the_chart_are_refused(tmp_path):
    other = tmp_path / "tpcb.csv"
    other.write_text("engine,threads,txns_per_s\nlamina,1,100\n")
    r = plot(other, tmp_path / "c.png")
    assert r.returncode == 1 and "is it a CSV of `lamina-bench scale-reads`?" in r.stderr
    ok = write_csv(tmp_path / "scale-reads-random-n20000.csv")
    r = plot(ok, other)
    assert r.returncode == 2 and "not " + str(other) in r.stderr
    assert other.read_text().startswith("engine,threads")  # not overwritten by a chart
