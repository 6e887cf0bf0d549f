"""The benchmark harness's own tests: each driver runs at a tiny size and prints well-formed
output; the workloads are the ones bench/README.md defines; missing peers are skipped, not errors.
Fast (seconds); peers that are not installed make their tests skip."""
import csv
import importlib.util
import os
import random
import shutil
import subprocess
import sys

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(BENCH, "..", "crates", "lamina-cli", "tests", "fixtures", "numbers.pl")
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "adapters"))

import dbm_bench  # noqa: E402
import numbers_bench  # noqa: E402
import rocksdb_bench  # noqa: E402


def run(*args, cwd=None, timeout=120):
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                       timeout=timeout)
    assert r.returncode == 0, f"{args} exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def has(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# ------------------------------------------------------------------ the dbm workloads

class RecordingDbm:
    """A dict-backed module with a dbm-style open() that records what the harness does."""

    def __init__(self):
        self.store = {}
        self.opens = []

    def open(self, path, flag="r", mode=0o666):
        self.opens.append((os.path.basename(os.path.dirname(path)), flag))
        data = self.store.setdefault(path, {})
        outer = self

        class Db(dict):
            def __getitem__(self, k):
                return data[k]

            def __setitem__(self, k, v):
                assert isinstance(k, bytes) and isinstance(v, bytes)
                if flag == "r":
                    raise AssertionError("write through a read-only open")
                data[k] = v

            def __delitem__(self, k):
                del data[k]

            def close(self):
                outer.closed = getattr(outer, "closed", 0) + 1
        return Db()


def test_data_is_the_definition():
    d = dbm_bench.Data(1000, 16, 100)
    rng = random.Random(100)
    assert d.buffer == bytes(rng.randint(0, 255) for _ in range(1024 * 1024))
    assert d.keys[0] == b"0000000000000000" and d.keys[999] == b"0000000000000999"
    assert all(len(k) == 16 for k in d.random_keys)
    assert all(32 <= c < 127 or chr(c) in "\t\n\r\x0b\x0c" for k in d.random_keys for c in k)
    assert len(d.hot) == 1000 and len(set(d.hot)) == 10          # 1% of keys, 100 times over
    assert d.hot[:10] * 100 == d.hot
    assert sorted(d.shuffled) == d.keys and d.shuffled != d.keys  # all keys, each once
    again = dbm_bench.Data(1000, 16, 100)                         # the same in every child
    assert (again.random_keys, again.hot, again.shuffled) == (d.random_keys, d.hot, d.shuffled)


def test_workloads_order_flags_and_values(tmp_path):
    n = 10600  # past one wrap of the 1 MiB value buffer (10,485 slices of 100 bytes)
    mod = RecordingDbm()
    data = dbm_bench.Data(n, 16, 100)
    seq_values = {}
    orig_open = mod.open

    def spy_open(path, flag="r", mode=0o666):
        db = orig_open(path, flag, mode)
        if "seq" in path:
            seq_values["data"] = mod.store[path]
        return db
    mod.open = spy_open
    results = dbm_bench.run_module(mod, data, str(tmp_path), budget=60, progress=False)
    assert [r["workload"] for r in results] == dbm_bench.WORKLOADS + dbm_bench.CLOSE_ROWS
    assert mod.opens == [("random", "c"), ("seq", "c"), ("seq", "r"), ("seq", "r"),
                         ("seq", "r"), ("seq", "r"), ("seq", "c")]
    assert all(r["complete"] and r["ops"] == n and r["ops_per_s"] > 0 for r in results)
    assert seq_values["data"] == {}  # delete_sequential deleted every key
    # values: consecutive 100-byte slices, wrapping when the next would pass the end
    buf = data.buffer
    expected, pos = {}, 0
    for i in range(n):
        expected[data.keys[i]] = buf[pos:pos + 100]
        pos += 100
        if pos + 100 > len(buf):
            pos = 0
    mod2 = RecordingDbm()
    d2 = dbm_bench.Data(n, 16, 100)
    path = str(tmp_path / "v" / "db")
    os.makedirs(os.path.dirname(path))
    db = mod2.open(path, "c")
    pos = 0
    for i in range(n):  # the fill loop's value rule, checked against an independent copy
        db[d2.keys[i]] = buf[pos:pos + 100]
        pos += 100
        if pos + 100 > len(buf):
            pos = 0
    assert mod2.store[path] == expected
    assert expected[data.keys[10485]] == buf[0:100]


def test_dbm_bench_on_dbm_dumb(tmp_path):
    out_csv, png, js = tmp_path / "r.csv", tmp_path / "r.png", tmp_path / "r.json"
    r = run(os.path.join(BENCH, "dbm_bench.py"), "-n", "200", "-d", "dbm.dumb",
            "--csv", str(out_csv), "--png", str(png), "--json", str(js), "--tmpdir", str(tmp_path))
    lines = r.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("n=200,k=16,s=100"))
    assert "dumb" in header
    for w in dbm_bench.ROWS:
        row = next(ln for ln in lines if ln.startswith(w + " ") or ln.startswith(w + "\t"))
        assert any(c.isdigit() for c in row.split()[1])
    rows = list(csv.DictReader(open(out_csv)))
    assert [x["workload"] for x in rows] == dbm_bench.ROWS
    assert all(x["engine"] == "dumb" and int(x["ops"]) == 200 and float(x["ops_per_s"]) > 0
               and x["complete"] == "1" for x in rows)
    assert int(rows[1]["bytes_on_disk"]) > 200 * 100
    if has("matplotlib"):
        assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "matplotlib is not installed" in r.stderr


def _round(label, rates, complete=True):
    return {"label": label, "results": [
        {"workload": w, "ops": 1, "seconds": 1 / r, "ops_per_s": r, "complete": complete}
        for w, r in rates.items()]}


def test_rounds_give_the_median_of_each_row_and_keep_every_rate():
    rounds = [_round("a", {"read": 5.0, "fill": 1.0}), {"label": "a", "skipped": "boom"},
              _round("a", {"read": 1.0, "fill": 3.0}), _round("a", {"read": 3.0, "fill": 2.0}),
              _round("a", {"read": 4.0, "fill": 9.0})]
    m = dbm_bench.median_rounds(rounds)
    by = {x["workload"]: x for x in m["results"]}
    # four rounds ran: the lower middle rate of each row, a rate that was measured
    assert by["read"]["ops_per_s"] == 3.0 and by["fill"]["ops_per_s"] == 2.0
    assert by["read"]["rounds"] == [[0, 5.0], [2, 1.0], [3, 3.0], [4, 4.0]]
    assert m["rounds"] == 4 and m["skipped_rounds"] == ["boom"]
    assert dbm_bench.median_rounds([{"label": "a", "skipped": "x"}]) == {"label": "a",
                                                                          "skipped": "x"}


def test_each_round_ratio_compares_runs_of_the_same_round():
    lam = dbm_bench.median_rounds([_round("lamina", {"read_random": r}) for r in (10.0, 12.0, 9.0)])
    p1 = dbm_bench.median_rounds([_round("p1", {"read_random": r}) for r in (5.0, 12.0, 10.0)])
    p2 = dbm_bench.median_rounds([_round("p2", {"read_random": r}) for r in (8.0, 6.0, 1.0)])
    by = {r["label"]: {x["workload"]: x for x in r["results"]} for r in (lam, p1, p2)}
    assert dbm_bench.round_ratios(by, ["p1", "p2"], "read_random") == [10 / 8, 12 / 12, 9 / 10]
    header, rows = dbm_bench.build_table([lam, p1, p2], 3, 16, 100)
    assert header[-1] == "each round"
    read = next(r for r in rows if r[0] == "read_random")
    assert read[-1] == "0.90x-1.25x" and read[-2] == "1.00x"   # medians: 10 against 10


def test_rounds_run_every_module_in_turn(tmp_path):
    js = tmp_path / "r.json"
    r = run(os.path.join(BENCH, "dbm_bench.py"), "-n", "50", "-d", "dumb", "--rounds", "2",
            "--json", str(js), "--tmpdir", str(tmp_path))
    assert "round 2 of 2" in r.stderr and "the median of 2 rounds" in r.stdout
    import json
    runs = json.load(open(js))["runs"]
    assert all(len(x["rounds"]) == 2 for x in runs[0]["results"])


def test_large_values_configuration(tmp_path):
    r = run(os.path.join(BENCH, "dbm_bench.py"), "-n", "20", "-k", "16", "-s", "100000",
            "-d", "dumb", "--tmpdir", str(tmp_path))
    assert "n=20,k=16,s=100000" in r.stdout


def test_missing_peer_is_skipped_with_a_message(tmp_path):
    r = run(os.path.join(BENCH, "dbm_bench.py"), "-n", "100", "-d", "no_such_dbm_module",
            "-d", "dumb", "--tmpdir", str(tmp_path))
    assert "skipped" in r.stdout and "no_such_dbm_module" in r.stdout
    assert "dumb" in r.stdout


def test_lamina_is_skipped_when_not_importable(tmp_path):
    if has("lamina"):
        pytest.skip("lamina is importable here")
    r = run(os.path.join(BENCH, "dbm_bench.py"), "-n", "100", "-d", "lamina", "-d", "dumb",
            "--tmpdir", str(tmp_path))
    assert "skipped: lamina" in r.stdout


@pytest.mark.parametrize("label", ["gdbm", "bdb_hash", "bdb_btree", "lmdb", "rocksdb",
                                   "leveldb", "sqlite", "semidbm"])
def test_each_peer_adapter_runs_or_is_skipped(tmp_path, label):
    _, modname = dbm_bench.resolve(label)
    try:
        module = __import__(modname, fromlist=["open"])
    except ImportError as e:
        pytest.skip(f"{label} not installed: {e}")
    results = dbm_bench.run_module(module, dbm_bench.Data(300, 16, 100), str(tmp_path),
                                   budget=60, progress=False)
    assert [r["workload"] for r in results] == dbm_bench.ROWS
    assert all(r["complete"] and r["ops"] == 300 for r in results)
    # dbm semantics the workloads rely on: a missing key raises KeyError
    path = str(tmp_path / "k" / "db")
    os.makedirs(os.path.dirname(path))
    db = module.open(path, "c")
    db[b"a"] = b"1"
    assert db[b"a"] == b"1"
    with pytest.raises(KeyError):
        db[b"missing"]
    db.close()


# ------------------------------------------------------------------ the numbers load

def test_numbers_oracle_matches_the_definition():
    if not shutil.which("perl"):
        pytest.skip("perl not installed")
    out = subprocess.run(["perl", ORACLE, "1000001"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == 1000002
    assert out[0] == 'store 0 "zero"'
    assert out[1001] == 'store 1001 "one thousand, one"'
    assert out[1000001] == 'store 1000001 "one million one"'
    assert out[123456] == ('store 123456 "one hundred twenty-three thousand, four hundred '
                           'fifty-six"')


def test_lamina_gen_numbers_matches_the_oracle(tmp_path):
    lamina = shutil.which("lamina") or next(
        (p for p in [os.path.join(BENCH, "..", "target", "release", "lamina"),
                     os.path.join(BENCH, "..", "target", "debug", "lamina")]
         if os.access(p, os.X_OK)), None)
    if not lamina or not shutil.which("perl"):
        pytest.skip("needs a lamina binary and perl")
    # (N = 0 is left out: numbers.pl treats 0 as "no argument" and prints 1,000,001 records)
    for n in ("1", "999", "1000001"):
        want = subprocess.run(["perl", ORACLE, n],
                              capture_output=True, check=True).stdout
        got = subprocess.run([lamina, "gen", "numbers", n], capture_output=True).stdout
        assert got == want, f"lamina gen numbers {n} differs from numbers.pl"


def test_db_load_conversion(tmp_path):
    src = tmp_path / "s.txt"
    src.write_bytes(b'store 0 "zero"\nstore 1001 "one thousand, one"\n'
                    b'store 7 "a \\\\ b \\" c"\n')
    dst = tmp_path / "d.txt"
    numbers_bench.to_db_load(str(src), str(dst))
    assert dst.read_bytes() == b'0\nzero\n1001\none thousand, one\n7\na \\\\ b " c\n'


def test_numbers_bench_small(tmp_path):
    if not shutil.which("perl"):
        pytest.skip("perl not installed")
    out_csv = tmp_path / "n.csv"
    r = run(os.path.join(BENCH, "numbers_bench.py"), "--min", "8", "--max", "9", "--check",
            "--gen", "perl " + ORACLE + " {n}",
            "--tmpdir", str(tmp_path), "--csv", str(out_csv))
    assert "generator output == numbers.pl" in r.stdout
    rows = list(csv.DictReader(open(out_csv)))
    assert {int(x["records"]) for x in rows} == {256, 512}
    engines = {x["engine"] for x in rows}
    assert "generator" in engines
    for eng, tool in (("gdbm", "gdbmtool"), ("bdb", "db5.3_load")):
        if shutil.which(tool):
            assert eng in engines
            assert all(x["ok"] == "1" and int(x["bytes"]) > 0 for x in rows if x["engine"] == eng)
        else:
            assert f"skipped {eng}" in r.stderr


# ----------------------------------------------------------------------------- db_bench

def test_db_bench_output_is_parsed():
    text = """RocksDB:    version 7.8.3
fillseq      :       2.748 micros/op 363842 ops/sec 0.275 seconds 100000 operations;   40.3 MB/s
readrandom   :       2.075 micros/op 481874 ops/sec 0.208 seconds 100000 operations;   33.6 MB/s (63074 of 100000 found)
"""
    version, rows = rocksdb_bench.parse(text)
    assert version == "7.8.3"
    assert [r["benchmark"] for r in rows] == ["fillseq", "readrandom"]
    assert rows[0]["ops_per_s"] == 363842 and rows[0]["mb_per_s"] == 40.3
    assert rows[1]["found"] == 63074 and rows[1]["ops"] == 100000


def test_db_bench_driver_runs_or_is_skipped(tmp_path):
    r = run(os.path.join(BENCH, "rocksdb_bench.py"), "--num", "2000", "--sizes", "8/8",
            "--tmpdir", str(tmp_path), "--csv", str(tmp_path / "d.csv"))
    if rocksdb_bench.find_db_bench() is None:
        assert "skipped" in r.stdout
        return
    rows = list(csv.DictReader(open(tmp_path / "d.csv")))
    assert [x["benchmark"] for x in rows] == ["fillseq", "fillrandom", "readrandom", "overwrite"]
    assert all(int(x["ops_per_s"]) > 0 for x in rows)


# ------------------------------------------- TokuDB's examples, durable commits

def test_tokudb_workloads_on_berkeley_db(tmp_path):
    script = os.path.join(BENCH, "tokudb_bdb.py")
    if not has("berkeleydb"):
        r = run(script, "insert", "-n", "1")
        assert "skipped Berkeley DB" in r.stdout
        return
    env = str(tmp_path / "env")
    r = run(script, "insert", "-n", "2", "--batch", "2000", "--dir", env,
            "--csv", str(tmp_path / "i.csv"))
    lines = r.stdout.splitlines()
    assert lines[0].startswith("serial and random insertions of 2000 per batch")
    assert sum(ln.startswith("serial ") and " random " in ln and " cumulative " in ln
               for ln in lines) == 2
    assert any(ln.startswith("Shutdown ") for ln in lines)
    assert any(ln.startswith("Total time ") and "for 8000 insertions" in ln for ln in lines)
    r = run(script, "scan", env)
    scans = [ln for ln in r.stdout.splitlines() if ln.startswith("Scan")]
    assert len(scans) == 2 and all("(8000 rows)" in ln and "128000 bytes" in ln for ln in scans)
    r = run(script, "update", "--ops", "2000", "--report", "1000")
    assert r.stdout.splitlines()[1].startswith("1000 ")
    assert r.stdout.splitlines()[-1].startswith("total 2000 ")
    r = run(script, "insert-multiple", "--rows", "2000", "--report", "1000")
    assert r.stdout.splitlines()[-1].startswith("total 2000 ")


def test_testfile(tmp_path):
    r = run(os.path.join(BENCH, "testfile.py"), "-o", "20", "--dir", str(tmp_path),
            "--repeat", "2", "--build-dir", str(tmp_path / "build"), "--csv", str(tmp_path / "t.csv"))
    rows = list(csv.DictReader(open(tmp_path / "t.csv")))
    assert "python" in [x["impl"] for x in rows]
    if shutil.which("cc") or shutil.which("gcc"):
        assert "c" in [x["impl"] for x in rows] and "20 ops:" in r.stdout
    assert all(float(x["ops_per_s"]) > 0 for x in rows)
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".data")]


def test_run_lists_its_steps():
    r = run(os.path.join(BENCH, "run.py"), "--list")
    for step in ("testfile", "dbm", "numbers", "db_bench", "db-insert", "db-update-512M"):
        assert step in r.stdout


def test_numbers_bench_drives_a_lamina_binary(tmp_path):
    """The lamina rows' plumbing, with a stand-in binary: `gen numbers N [--into DB --newdb]`
    and `shell --newdb DB` reading the stream."""
    if not shutil.which("perl"):
        pytest.skip("perl not installed")
    fake = tmp_path / "lamina"
    fake.write_text(f"""#!/bin/sh
set -e
case "$1" in
  gen) if [ "$4" = --into ]; then mkdir -p "$5"; perl {ORACLE} "$3" > "$5/data"
       else perl {ORACLE} "$3"; fi ;;
  shell) mkdir -p "$3"; cat > "$3/data" ;;
  *) exit 2 ;;
esac
""")
    fake.chmod(0o755)
    out_csv = tmp_path / "n.csv"
    r = run(os.path.join(BENCH, "numbers_bench.py"), "--min", "8", "--max", "8", "--check",
            "--lamina", str(fake), "--engines", "lamina,lamina-gen", "--tmpdir", str(tmp_path),
            "--csv", str(out_csv))
    rows = {x["engine"]: x for x in csv.DictReader(open(out_csv))}
    assert "generator output == numbers.pl" in r.stdout
    assert rows["lamina"]["ok"] == "1" and rows["lamina-gen"]["ok"] == "1"
    assert int(rows["lamina"]["bytes"]) == int(rows["generator"]["bytes"])


def test_tokudb_workloads_in_c(tmp_path):
    script = os.path.join(BENCH, "tokudb_bdb.py")
    if not has("berkeleydb"):
        pytest.skip("berkeleydb not installed")
    build = str(tmp_path / "build")
    r = run(script, "insert", "--impl", "c", "-n", "2", "--batch", "2000", "--build-dir", build,
            "--csv", str(tmp_path / "i.csv"))
    if "skipped the C program" in r.stdout:
        pytest.skip(r.stdout.strip())
    assert "for 8000 insertions" in r.stdout
    rows = list(csv.DictReader(open(tmp_path / "i.csv")))
    assert [x["batch"] for x in rows] == ["0", "1", "shutdown", "total"]
    assert all(x["engine"] == "bdb-c" for x in rows) and float(rows[-1]["cumulative_per_s"]) > 0
    r = run(script, "update", "--impl", "c", "--ops", "2000", "--report", "1000",
            "--build-dir", build, "--csv", str(tmp_path / "u.csv"))
    rows = list(csv.DictReader(open(tmp_path / "u.csv")))
    assert [x["ops"] for x in rows] == ["1000", "2000", "total 2000"]


def test_quick_runs_compare_step_times_with_the_previous_one(tmp_path):
    import run as harness
    results = tmp_path / "results"
    old, new = results / "2026-01-01-quick", results / "2026-01-02-quick"
    old.mkdir(parents=True)
    new.mkdir()
    assert harness.previous_steps(str(new)) is None
    assert "nothing to compare" in harness.compare_steps({"a": 1.0}, None)
    (old / "steps.json").write_text('{"a": 10.0, "b": 4.0}')
    before = harness.previous_steps(str(new))
    assert before == ("2026-01-01-quick", {"a": 10.0, "b": 4.0})
    text = harness.compare_steps({"a": 10.5, "b": 6.0, "c": 1.0}, before)
    assert "a" in text and "1.05x" in text and "1.05x  SLOWER" not in text
    assert "1.50x  SLOWER" in text
    assert "(new)" in text


# ------------------------------------------------------- migration and the open loop

def test_open_loop_runs_each_module_or_skips_it(tmp_path):
    r = run(os.path.join(BENCH, "open_loop.py"), "--rounds", "3", "-d", "dumb",
            "-d", "no_such_dbm_module", "--tmpdir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "skipped: no_such_dbm_module" in r.stdout
    row = [line for line in r.stdout.splitlines() if line.startswith("dumb ")]
    assert len(row) == 1 and len(row[0].split()) == 8, r.stdout


def test_migrate_bench_small(tmp_path):
    lamina = os.path.join(BENCH, "..", "target", "debug", "lamina")
    lamina = os.environ.get("LAMINA_BIN") or shutil.which("lamina") or lamina
    if not os.access(lamina, os.X_OK):
        pytest.skip("no lamina binary built")
    if not (shutil.which("gdbm_dump") or shutil.which("db5.3_dump")):
        pytest.skip("neither gdbm_dump nor db5.3_dump is installed")
    r = run(os.path.join(BENCH, "migrate_bench.py"), "-n", "300", "--lamina", lamina,
            "--tmpdir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "migration of 300 records into lamina" in r.stdout
    assert any(line.startswith(("gdbm direct", "bdb direct")) for line in r.stdout.splitlines())
