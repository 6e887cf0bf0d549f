"""Named keyspaces: separate ordered mappings in one database."""

from __future__ import annotations

import pytest

import lamina


def test_keyspaces_are_separate(db):
    a = db.keyspace("a")
    b = db.keyspace("b")
    a["k"] = "in a"
    b["k"] = "in b"
    db["k"] = "default"
    assert (a["k"], b["k"], db["k"]) == (b"in a", b"in b", b"default")
    assert len(a) == len(b) == len(db) == 1
    assert sorted(db.keyspaces()) == ["a", "b"]
    assert a.name == "a" and db.name == ""


def test_keyspace_has_the_mapping_api(db):
    ks = db.keyspace("ks")
    ks.update({"b": "2", "a": "1"})
    assert ks.keys() == [b"a", b"b"]
    assert list(ks) == [b"a", b"b"]
    assert ks.get_many(["a", "zz"]) == [b"1", None]
    del ks["a"]
    with pytest.raises(KeyError):
        del ks["a"]
    ks.increment("n")
    assert ks.counter("n") == 1
    ks.clear()
    assert len(ks) == 0 and not ks


def test_keyspaces_persist_and_can_be_dropped(path):
    with lamina.open(path, "c") as db:
        db.keyspace("idx")["k"] = "v"
    with lamina.open(path, "w") as db:
        assert db.keyspaces() == ["idx"]
        assert db.keyspace("idx", create=False)["k"] == b"v"
        db.drop_keyspace("idx")
        assert db.keyspaces() == []
        with pytest.raises(KeyError):
            db.keyspace("idx", create=False)


def test_read_only_database_does_not_create_keyspaces(path):
    lamina.open(path, "c").close()
    with lamina.open(path, "r") as db:
        with pytest.raises(KeyError):
            db.keyspace("new")


def test_a_keyspace_of_a_closed_database_refuses_use(path):
    db = lamina.open(path, "c")
    ks = db.keyspace("x")
    db.close()
    with pytest.raises(lamina.error):
        ks["k"]


def test_a_keyspace_named_lamina_python_empty_key_is_an_ordinary_keyspace(path, tmp_path):
    """Regression: this module once kept each keyspace's empty key in a
    keyspace of its own, ``lamina.python.empty-key``, under ``"=" + name``,
    and every writable open "migrated" whatever it found there. The name was
    refused by ``Db.keyspace`` only: the CLI (``lamina put --keyspace
    lamina.python.empty-key DB = X``), Rust and ``TableWriter`` took it. So
    a user who had set the empty key ``b""`` to ``MINE`` and then wrote
    ``=`` -> ``X`` in that keyspace found, after any ``lamina.open(p, 'w')``,
    the empty key overwritten with ``X`` and the keyspace dropped with its
    data. No version with the old layout was ever released: the migration is
    gone, and the name is a keyspace name like any other. The keyspace is
    written here through ``TableWriter`` (which took the name before the
    fix too); before the fix the writable open lost it and overwrote
    ``b""``."""
    name = "lamina.python.empty-key"
    with lamina.open(path, "c") as db:
        db[b""] = b"MINE"
    table = str(tmp_path / "ks.sst")
    with lamina.TableWriter(table, keyspace=name) as w:
        w.put(b"=", b"X")
        w.put(b"=other", b"Y")
    with lamina.open(path, "w") as db:
        db.ingest([table])
    with lamina.open(path, "w"):
        pass  # the writable open that used to move the keyspace's data
    with lamina.open(path, "r") as db:
        assert db[b""] == b"MINE"
        assert db.keyspaces() == [name]
        assert db.keyspace(name).items() == [(b"=", b"X"), (b"=other", b"Y")]
    with lamina.open(path, "w") as db:
        ks = db.keyspace(name)
        ks[b"="] = b"Z"
        assert db[b""] == b"MINE"
        db.drop_keyspace(name)
        assert db.keyspaces() == []
