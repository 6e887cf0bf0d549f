"""snapshot(): a read-only view as of one moment."""

from __future__ import annotations

import pytest

import lamina


def test_snapshot_does_not_see_later_writes(db):
    db["a"] = "1"
    db["b"] = "2"
    with db.snapshot() as snap:
        db["a"] = "changed"
        del db["b"]
        db["c"] = "3"
        assert snap["a"] == b"1"
        assert snap.get("b") == b"2"
        assert "b" in snap and "a" in snap
        assert "c" not in snap
        assert snap.get("c") is None
        assert snap.keys() == [b"a", b"b"]
        assert list(snap) == [b"a", b"b"]
        assert len(snap) == 2
        assert snap.items(prefix="b") == [(b"b", b"2")]
        assert snap.get_many(["a", "c"]) == [b"1", None]
        assert list(snap.iterator(reverse=True, values=False)) == [b"b", b"a"]
    assert db.keys() == [b"a", b"c"]


def test_snapshot_reads_named_keyspaces(db):
    ks = db.keyspace("other")
    ks["x"] = "1"
    snap = db.snapshot()
    ks["x"] = "2"
    assert snap.get("x", keyspace=ks) == b"1"
    assert snap.keys(keyspace=ks) == [b"x"]
    assert ks["x"] == b"2"


def test_a_closed_snapshot_refuses_reads(db):
    db["a"] = "1"
    snap = db.snapshot()
    snap.close()
    snap.close()
    with pytest.raises(lamina.error):
        snap["a"]
    with pytest.raises(KeyError):
        db.snapshot()["missing"]


def test_snapshot_has_no_writes(db):
    snap = db.snapshot()
    with pytest.raises(TypeError):
        snap["a"] = "1"  # type: ignore[index]


def test_snapshot_sees_the_empty_key_as_of_its_creation(db):
    db[b""] = b"old"
    db["a"] = "1"
    with db.snapshot() as snap:
        db[b""] = b"new"
        assert snap[b""] == b"old"
        assert snap.items() == [(b"", b"old"), (b"a", b"1")]
        assert snap.keys(reverse=True) == [b"a", b""]
    assert db[b""] == b"new"
