"""bench/tpcb.py at a tiny size: each engine runs or is skipped with a message, the invariant
holds, the table and the CSV are well formed; and the helpers follow bench/README.md's
definition (keys, 100-byte rows, draws in range)."""
import csv
import os
import struct
import subprocess
import sys

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

import tpcb  # noqa: E402


def test_rows_and_keys_are_the_definition():
    assert tpcb.key(b"a", 258) == b"a\x00\x00\x01\x02"
    r = tpcb.record(-5)
    assert len(r) == 100 and tpcb.balance(r) == -5
    assert tpcb.balance(tpcb.add(r, 7)) == 2


def test_draws_stay_in_range():
    d = tpcb.Draws(1, (2, 20, 50), 0, 3)
    for _ in range(1000):
        a, b, t, delta, h, row = d.next()
        assert a[:1] == b"a" and struct.unpack(">I", a[1:])[0] < 50
        assert b[:1] == b"b" and struct.unpack(">I", b[1:])[0] < 2
        assert t[:1] == b"t" and struct.unpack(">I", t[1:])[0] < 20
        assert -999_999 <= delta <= 999_999
        assert len(h) == 17 and h[:1] == b"h" and len(row) == 100
        assert tpcb.balance(row) == delta


def test_verdict_catches_a_broken_sum():
    rows = [(b"a\0\0\0\0", tpcb.record(5)), (b"t\0\0\0\0", tpcb.record(5)),
            (b"b\0\0\0\0", tpcb.record(5)), (b"h" + bytes(16), tpcb.record(5))]
    assert tpcb.verdict(rows, 1) == "ok"
    assert tpcb.verdict(rows, 2).startswith("FAILED")
    rows[0] = (rows[0][0], tpcb.record(4))
    assert tpcb.verdict(rows, 1).startswith("FAILED")


def test_tpcb_py_tiny(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, os.path.join(BENCH, "tpcb.py"), "--threads", "1,2", "--seconds", "0.2",
         "--accounts-per-branch", "100", "--no-testfile", "--dir", str(tmp_path / "db"),
         "--out", str(out)],
        capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "| engine | threads | txn/s |" in r.stdout
    with open(out / "tpcb-python.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    # sqlite3 is in the standard library: its rows are always there.
    engines = {x["engine"] for x in rows}
    assert "sqlite-python" in engines
    for x in rows:
        assert x["invariant"] == "ok", x
        assert int(x["txns"]) > 0
    for e in ("lamina", "lmdb"):
        if f"{e}-python" not in engines:
            assert f"{e}: skipped" in r.stdout + r.stderr
