"""bulk_bench.py at a tiny size: every available way loads the records and is counted; a wrong
count fails the row; a missing peer is skipped with a message; memory is measured over the
whole process tree."""
import csv
import os
import subprocess
import sys

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

import bulk_bench  # noqa: E402


def lamina_binary():
    for kind in ("release", "debug"):
        path = os.path.join(ROOT, "target", kind, "lamina")
        if os.path.exists(path):
            return path
    pytest.skip("no lamina binary built (cargo build -p lamina-cli)")


def bench(tmp_path, *args):
    return subprocess.run([sys.executable, os.path.join(BENCH, "bulk_bench.py"), *args,
                           "--tmpdir", str(tmp_path)],
                          capture_output=True, text=True, timeout=180)


def test_every_available_way_loads_and_counts_the_records(tmp_path):
    out_csv = tmp_path / "bulk.csv"
    r = bench(tmp_path, "-n", "2000", "--lamina", lamina_binary(), "--memory", "32K",
              "--sst-records", "700", "--csv", str(out_csv))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {x["way"]: x for x in csv.DictReader(open(out_csv))}
    for way in ("shell", "shell-bulk", "load-bulk"):
        assert way in rows, r.stdout + r.stderr
    for way in ("dask", "rocksdb"):
        assert way in rows or f"skipped {way}" in r.stderr, r.stderr
    for way, row in rows.items():
        assert row["ok"] == "1" and row["counted"] == "2000", row
        assert int(row["bytes"]) > 0 and int(row["peak_bytes"]) > 0, row
        assert float(row["seconds"]) > 0, row
    # Nothing left behind in the scratch directory.
    assert [p for p in os.listdir(tmp_path) if p.startswith("bulk_bench.")] == []


def test_a_wrong_count_fails_the_row(tmp_path):
    real = lamina_binary()
    fake = tmp_path / "lamina"
    fake.write_text(f"""#!/bin/sh
if [ "$1" = count ]; then echo 1; exit 0; fi
exec {real} "$@"
""")
    fake.chmod(0o755)
    r = bench(tmp_path, "-n", "300", "--lamina", str(fake), "--ways", "load-bulk")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAILED: the database holds 1 records, not 300" in r.stdout, r.stdout


def test_missing_peers_are_skipped_with_a_message(monkeypatch, capsys):
    monkeypatch.setattr(bulk_bench, "importable", lambda module: False)
    ways = bulk_bench.available(["shell", "dask", "rocksdb"], "/bin/true")
    assert ways == ["shell"]
    err = capsys.readouterr().err
    assert "skipped dask" in err and "skipped rocksdb" in err
    assert bulk_bench.available(["load-bulk"], None) == []
    assert "skipped load-bulk: no lamina binary" in capsys.readouterr().err


def test_peak_memory_covers_the_children():
    # A child holding 64 MB: its parent's tree holds at least that much.
    code = "import time; b = bytearray(64 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(2)"
    base = bulk_bench.tree_rss(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        seen = 0
        for _ in range(100):
            seen = max(seen, bulk_bench.tree_rss(os.getpid()) - base)
            if seen > 60 << 20:
                break
            subprocess.run(["sleep", "0.02"])
        assert seen > 60 << 20, seen
    finally:
        child.kill()
        child.wait()
