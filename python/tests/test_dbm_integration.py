"""dbm and shelve find lamina: ``lamina.whichdb``, ``lamina.shelve.open``,
and ``lamina.register_dbm()`` making ``dbm.open``, ``dbm.whichdb`` and
``shelve.open`` recognise and create lamina databases."""

from __future__ import annotations

import dbm
import dbm.dumb
import os
import shelve
from collections.abc import Mapping, MutableMapping

import pytest

import lamina
import lamina.shelve


@pytest.fixture(autouse=True)
def _restore_dbm(monkeypatch):
    """Undoes ``register_dbm`` after each test."""
    monkeypatch.setattr(dbm, "_names", list(dbm._names))
    monkeypatch.setattr(dbm, "_modules", dict(dbm._modules))
    monkeypatch.setattr(dbm, "_defaultmod", dbm._defaultmod)
    monkeypatch.setattr(dbm, "whichdb", dbm.whichdb)


def _siblings(path):
    d, base = os.path.split(path)
    return sorted(f for f in os.listdir(d) if f.startswith(base))


def test_whichdb_names_lamina_and_defers_to_dbm_for_the_rest(tmp_path):
    path = str(tmp_path / "a.lamina")
    assert lamina.whichdb(path) is None
    lamina.open(path, "c").close()
    assert lamina.whichdb(path) == "lamina"
    assert lamina.whichdb(os.fsencode(path)) == "lamina"
    # Without registration the standard library does not know it.
    assert dbm.whichdb(path) is None
    dumb = str(tmp_path / "d")
    with dbm.dumb.open(dumb, "c") as d:
        d[b"k"] = b"v"
    assert lamina.whichdb(dumb) == "dbm.dumb"
    (tmp_path / "empty").write_bytes(b"")
    assert lamina.whichdb(str(tmp_path / "empty")) == ""
    (tmp_path / "photos").mkdir()
    assert lamina.whichdb(str(tmp_path / "photos")) is None


def test_before_registration_dbm_open_falls_back_to_another_module(tmp_path):
    """The behaviour register_dbm exists to change."""
    path = str(tmp_path / "a.lamina")
    with dbm.open(path, "c") as d:
        d[b"k"] = b"v"
    assert lamina.whichdb(path) != "lamina"


def test_dbm_open_creates_and_reopens_lamina_after_registration(tmp_path):
    lamina.register_dbm()
    lamina.register_dbm()  # idempotent
    path = str(tmp_path / "a.lamina")
    with dbm.open(path, "c") as d:
        assert isinstance(d, lamina.Db)
        d[b"k"] = b"v"
    assert _siblings(path) == ["a.lamina"]  # no .dat/.dir/.bak beside it
    assert dbm.whichdb(path) == "lamina"
    with dbm.open(path, "r") as d:
        assert isinstance(d, lamina.Db)
        assert d[b"k"] == b"v"
    with dbm.open(path, "w") as d:
        d[b"k2"] = b"v2"
    with dbm.open(path) as d:
        assert d.keys() == [b"k", b"k2"]
    with pytest.raises(dbm.error):
        dbm.open(str(tmp_path / "missing"), "r")


def test_other_modules_still_work_after_registration(tmp_path):
    lamina.register_dbm()
    dumb = str(tmp_path / "d")
    with dbm.dumb.open(dumb, "c") as d:
        d[b"k"] = b"dumb"
    assert dbm.whichdb(dumb) == "dbm.dumb"
    with dbm.open(dumb, "r") as d:
        assert not isinstance(d, lamina.Db)
        assert d[b"k"] == b"dumb"


def test_shelve_open_round_trip_after_registration(tmp_path):
    lamina.register_dbm()
    path = str(tmp_path / "objects.lamina")
    with shelve.open(path) as shelf:
        shelf["config"] = {"retries": 3, "hosts": ["a", "b"]}
        shelf["n"] = 7
    assert _siblings(path) == ["objects.lamina"]
    assert dbm.whichdb(path) == "lamina"
    with shelve.open(path, "r") as shelf:
        assert shelf["config"] == {"retries": 3, "hosts": ["a", "b"]}
        assert sorted(shelf) == ["config", "n"]
    with shelve.open(path, "n") as shelf:
        assert len(shelf) == 0


def test_lamina_shelve_open_without_registration(tmp_path):
    path = str(tmp_path / "objects.lamina")
    with lamina.shelve.open(path, writeback=True) as shelf:
        assert isinstance(shelf, shelve.Shelf)
        shelf["l"] = []
        shelf["l"].append(1)
    assert _siblings(path) == ["objects.lamina"]
    with lamina.shelve.open(path, "r", protocol=2) as shelf:
        assert shelf["l"] == [1]
    with pytest.raises(lamina.error):
        lamina.shelve.open(str(tmp_path / "missing"), "r")


def test_a_database_is_a_mutable_mapping(db):
    assert isinstance(db, MutableMapping)
    assert isinstance(db.keyspace("ks"), MutableMapping)
    with db.snapshot() as snap:
        assert isinstance(snap, Mapping) and not isinstance(snap, MutableMapping)


def test_pop(db):
    db.update({b"a": b"1", b"b": b"2"})
    assert db.pop(b"a") == b"1"
    assert b"a" not in db
    assert db.pop(b"a", None) is None
    assert db.pop("a", "default") == "default"
    with pytest.raises(KeyError):
        db.pop(b"a")
    with pytest.raises(TypeError):
        db.pop(b"b", 1, 2)
    assert db.keys() == [b"b"]


def test_popitem_takes_the_smallest_key(db):
    db.update({b"b": b"2", b"a": b"1", b"": b"0"})
    assert db.popitem() == (b"", b"0")
    assert db.popitem() == (b"a", b"1")
    assert db.popitem() == (b"b", b"2")
    with pytest.raises(KeyError):
        db.popitem()


def test_pop_and_popitem_refuse_a_read_only_database(path):
    with lamina.open(path, "c") as db:
        db["k"] = "v"
    with lamina.open(path, "r") as db:
        with pytest.raises(lamina.error, match="read-only"):
            db.pop("k")
        with pytest.raises(lamina.error, match="read-only"):
            db.popitem()
        assert db["k"] == b"v"
