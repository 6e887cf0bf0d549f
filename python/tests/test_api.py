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
