"""The rest of the richer API: get_many, update, delete, stats, check, options."""

from __future__ import annotations

import os

import pytest

import lamina


def test_get_many_returns_none_for_missing(db):
    db.update(a="1", b="2")
    assert db.get_many(["a", b"b", "c"]) == [b"1", b"2", None]
    assert db.get_many(iter([])) == []
    with pytest.raises(TypeError):
        db.get_many([1])


def test_update_takes_mappings_pairs_and_keywords(db):
    db.update({"a": "1"})
    db.update([("b", "2"), (b"c", b"3")])
    db.update(d="4")

    class Mapping:
        def keys(self):
            return ["e"]

        def __getitem__(self, k):
            return "5"

    db.update(Mapping())
    assert db.keys() == [b"a", b"b", b"c", b"d", b"e"]
    with pytest.raises(TypeError):
        db.update([("x", 1)])
    assert "x" not in db


def test_delete_is_blind(db):
    db["a"] = "1"
    db.delete("a")
    db.delete("never")
    assert len(db) == 0


def test_len_is_exact_after_every_kind_of_write(db):
    db["a"] = "1"
    assert len(db) == 1
    db.update(b="2", c="3")
    assert len(db) == 3
    del db["a"]
    assert len(db) == 2
    with db.batch() as b:
        b["z"] = "9"
    assert len(db) == 3
    db.increment("n")
    assert len(db) == 4
    db.clear()
    assert len(db) == 0


def test_stats_and_check_describe_the_database(db):
    db.update((b"%05d" % i, b"x" * 10) for i in range(100))
    db.flush()
    s = db.stats()
    for field in ("levels", "memtable_bytes", "cache_capacity", "block_size", "keyspaces", "write_amplification"):
        assert field in s
    assert isinstance(s["levels"], list)
    report = db.check()
    assert report["ok"] is True and report["problems"] == []


def test_options_reach_the_engine(path):
    with lamina.open(path, "c", cache_size=8 << 20, block_size=4096, compression="zstd", durability="sync") as db:
        db["k"] = "v"
        s = db.stats()
        assert s["cache_capacity"] == 8 << 20
        assert s["block_size"] == 4096


@pytest.mark.parametrize(
    "options, exc",
    [
        ({"cache_sise": 1}, TypeError),
        ({"durability": "maybe"}, ValueError),
        ({"compression": "gzip"}, ValueError),
        ({"block_size": 0}, ValueError),
        ({"block_size": -1}, TypeError),
        ({"read_only": True}, TypeError),
    ],
)
def test_bad_options_are_refused_before_anything_is_created(path, options, exc):
    with pytest.raises(exc):
        lamina.open(path, "c", **options)
    assert not os.path.exists(path) or os.listdir(path) == []


def test_backup_is_a_database(db, tmp_path):
    db.update(a="1", b="2")
    dest = str(tmp_path / "copy")
    db.backup(dest)
    with lamina.open(dest, "r") as copy:
        assert copy.items() == [(b"a", b"1"), (b"b", b"2")]


def test_properties_and_repr(db, path):
    assert db.path == path or str(db.path) == path
    assert not db.read_only and not db.closed
    assert path in repr(db)
    db.close()
    assert db.closed and "closed" in repr(db)


def _held_in(path):
    """The files under ``path`` this process holds open (``/proc/self/fd``)
    and those it has mapped (``/proc/self/maps``), removed ones included."""
    prefix = os.path.realpath(path) + os.sep
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the descriptor listdir itself used
        if target.startswith(prefix):
            fds.append(target)
    with open("/proc/self/maps") as f:
        maps = [p for p in (line.split(maxsplit=5)[5:] for line in f) if p and p[0].startswith(prefix)]
    return fds, maps


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.parametrize("flag", ["c", "r"])
def test_close_lets_go_of_every_file_while_the_object_lives(path, flag):
    """Regression: ``close()`` stopped the engine's threads and closed the
    WAL, but the open tables, the open and mapped blob files and the
    manifest writer stayed open until the ``Db`` object was collected. A
    program that closed a database and kept the object (a reference in a
    list, a frame, a traceback) kept descriptors and a mapping, and files
    removed since kept their space. Before the fix the tables, the blob
    file and the MANIFEST were still listed here after ``close()``."""
    with lamina.open(path, "c") as db:
        db.update((b"k%04d" % i, b"small") for i in range(300))
        db.update((b"b%04d" % i, b"B" * 10_000) for i in range(50))
        db.flush()
    db = lamina.open(path, flag)
    ks = db.keyspace("ks") if flag == "c" else None
    assert db[b"k0007"] == b"small"
    assert db[b"b0007"] == b"B" * 10_000
    assert len(db.keys()) == 350
    fds, maps = _held_in(path)
    assert any(f.endswith(".sst") for f in fds) and any(f.endswith(".blob") for f in fds), fds
    assert maps, "a blob file is mapped while open"
    db.close()
    assert _held_in(path) == ([], [])
    with pytest.raises(lamina.error):
        db[b"k0007"]
    if ks is not None:
        with pytest.raises(lamina.error):
            ks[b"x"] = b"y"
    assert _held_in(path) == ([], [])
    assert db is not None  # the object is alive throughout


def test_the_type_stub_gives_the_engine_s_defaults(path):
    """Regression: ``_lamina.pyi`` gave ``blob_threshold`` a default of
    8192 where the engine uses 4096, so an editor told users values from 4
    to 8 KiB stayed in the tree. Every literal default of ``Db.__init__`` in
    the stub that ``stats()`` reports is compared with what a database
    opened with no options reports. Before the fix ``blob_threshold`` was
    4096 here, 8192 in the stub."""
    import ast

    stub = os.path.join(os.path.dirname(lamina.__file__), "_lamina.pyi")
    with open(stub) as f:
        tree = ast.parse(f.read())
    (db_class,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Db"]
    (init,) = [n for n in db_class.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
    stub_defaults = {
        a.arg: d.value
        for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults)
        if isinstance(d, ast.Constant) and d.value is not Ellipsis
    }
    with lamina.open(path, "c") as db:
        stats = db.stats()
    compared = {k: (v, stats[k]) for k, v in stub_defaults.items() if k in stats}
    assert "blob_threshold" in compared
    assert {k: v for k, v in compared.items() if v[0] != v[1]} == {}


def test_destroy_removes_only_lamina_databases(path, tmp_path):
    lamina.open(path, "c").close()
    lamina.destroy(path)
    assert not os.path.exists(path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    with pytest.raises(lamina.error):
        lamina.destroy(str(other))
    assert (other / "precious.txt").read_text() == "keep me"


def _dir_bytes(path):
    # WAL segments are zero-filled ahead and reused rather than removed, so
    # their size follows the write rate, not the data: not counted here.
    return sum(
        os.path.getsize(os.path.join(path, f)) for f in os.listdir(path) if not f.endswith(".wal")
    )


def test_reorganize_reclaims_the_space_of_deleted_data(path):
    with lamina.open(path, "c") as db:
        db.update((b"%06d" % i, os.urandom(200)) for i in range(20_000))
        db.flush()
        for i in range(0, 20_000):
            if i % 10:
                db.delete(b"%06d" % i)
        db.flush()
        before = db.stats()["total_table_bytes"]
        db.reorganize()
        after = db.stats()["total_table_bytes"]
        assert len(db) == 2_000
        assert after < before / 2, (before, after)
    assert _dir_bytes(path) < before
