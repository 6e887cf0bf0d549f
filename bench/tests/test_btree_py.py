"""bench/btree_py.py at a tiny size: each engine present runs every row or is skipped with a
message, every check holds, the table and the CSV are well formed; and a wrong answer (a pop out
of order, a wrong len(), a short lookup, engines that disagree) fails the run."""
import csv
import os
import subprocess
import sys

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

import btree_py  # noqa: E402


def test_keys_and_prefixes_are_the_definition():
    assert btree_py.key(1234) == b"000000001234"
    assert btree_py.prefix(123) == b"00000000123"
    assert all(btree_py.key(1230 + j).startswith(btree_py.prefix(123)) for j in range(10))
    assert not btree_py.key(1240).startswith(btree_py.prefix(123))
    values = btree_py.Values(100)
    assert len(values(5)) == 100 and values(5) == btree_py.Values(100)(5)


def test_btree_py_tiny(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, os.path.join(BENCH, "btree_py.py"), "--pop-items", "3000",
         "--len-items", "5000", "--lookups", "500", "--tmpdir", str(tmp_path), "--out",
         str(out)],
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for title in btree_py.TITLES.values():
        assert f"| {title} |" in r.stdout, r.stdout
    with open(out / "btree-py.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    engines = {x["engine"] for x in rows}
    # sqlite3 is in the standard library: its rows are always there.
    assert "sqlite" in engines
    for e in btree_py.ENGINES:
        if e not in engines:
            assert f"skipped {e}" in r.stderr, r.stderr
    for x in rows:
        assert x["complete"] == "1", x
        if x["engine"] == "gdbm" and x["row"] == "prefix":
            assert x["check"] == "no ordered reads", x
            continue
        assert x["check"] == "ok", x
        assert float(x["rate"]) > 0, x
        want = {"pop": ("3000", "3000"), "len": ("5000", "1"), "prefix": ("5000", "500")}
        assert (x["items"], x["ops"]) == want[x["row"]], x
    assert {(x["engine"], x["row"]) for x in rows} == {
        (e, w) for e in engines for w in btree_py.ROWS}
    assert (out / "btree-py.md").read_text().startswith("# A B-tree's rows from Python")
    # Nothing left behind in the scratch directory.
    assert [p for p in os.listdir(tmp_path) if p.startswith("btree_py.")] == []


class Model:
    """An ordered engine over a dict, with a fault to inject."""

    def __init__(self, fault=None):
        self.data, self.fault = {}, fault

    def load(self, pairs):
        self.data.update(pairs)

    def reopen(self):
        pass

    def pop(self):
        if not self.data:
            return None
        keys = sorted(self.data)
        k = keys[1] if self.fault == "order" and len(keys) > 1 else keys[0]
        return k, self.data.pop(k)

    def length(self):
        return len(self.data) + (self.fault == "len")

    def lookup(self, p):
        got = sorted((k, v) for k, v in self.data.items() if k.startswith(p))
        return got[:-1] if self.fault == "lookup" else got


def test_a_wrong_answer_fails_its_row():
    values = btree_py.Values(8)
    assert btree_py.pop_row(Model(), 100, values, 60)["check"] == "ok"
    bad = btree_py.pop_row(Model("order"), 100, values, 60)["check"]
    assert bad.startswith("pop 0 returned b'000000000001'"), bad
    rows = btree_py.len_and_prefix_rows(Model(), 100, 50, values, 60, ["len", "prefix"])
    assert [r["check"] for r in rows] == ["ok", "ok"]
    rows = btree_py.len_and_prefix_rows(Model("len"), 100, 50, values, 60, ["len"])
    assert rows[0]["check"] == "len() is 101, not the 100 items loaded"
    rows = btree_py.len_and_prefix_rows(Model("lookup"), 100, 50, values, 60, ["prefix"])
    assert rows[0]["check"].startswith("items(prefix=")


def test_engines_that_disagree_fail_the_run():
    def run(engine, pops):
        return {"engine": engine, "results": [
            {"row": "pop", "ops": pops, "rate": 1.0, "complete": True, "check": "ok"}]}
    assert btree_py.failures([run("a", 10), run("b", 10)]) == []
    assert btree_py.failures([run("a", 10), run("b", 9)]) == [
        "pop: engines disagree: {'a': 10, 'b': 9}"]
