"""batch(): atomic on exit, discarded on exception."""

from __future__ import annotations

import pytest

import lamina


def test_batch_commits_on_exit(db):
    db["gone"] = "x"
    with db.batch() as b:
        b["a"] = "1"
        b.put(b"b", b"2")
        del b["gone"]
        b.delete("never-there")
        assert len(b) == 4
        assert "a" not in db  # not visible before the commit
    assert db.items() == [(b"a", b"1"), (b"b", b"2")]


def test_batch_discards_everything_when_the_block_raises(db):
    db["keep"] = "old"
    with pytest.raises(RuntimeError):
        with db.batch() as b:
            b["keep"] = "new"
            b["other"] = "x"
            raise RuntimeError("boom")
    assert db.items() == [(b"keep", b"old")]


def test_batch_is_closed_after_the_block(db):
    with db.batch() as b:
        b["k"] = "v"
    with pytest.raises(lamina.error):
        b["k2"] = "v"


def test_commit_and_discard_by_hand(db):
    b = db.batch()
    b["a"] = "1"
    b.discard()
    b["b"] = "2"
    b.commit()
    b["c"] = "3"
    b.commit()
    assert db.keys() == [b"b", b"c"]


def test_batch_spans_keyspaces_atomically(db):
    users = db.keyspace("users")
    by_mail = db.keyspace("by_mail")
    with db.batch() as b:
        b.put("u1", "ann@example.org", keyspace=users)
        b.put("ann@example.org", "u1", keyspace=by_mail)
        b.increment("users", keyspace=None)
    assert users["u1"] == b"ann@example.org"
    assert by_mail["ann@example.org"] == b"u1"
    assert db.counter("users") == 1


def test_batch_update_and_bad_values_leave_the_batch_unchanged(db):
    with db.batch() as b:
        b.update({"a": "1"}, c="3")
        with pytest.raises(TypeError):
            b.update([("x", "1"), ("y", 2)])
        assert len(b) == 2
    assert db.keys() == [b"a", b"c"]


def test_batch_on_a_read_only_database_is_refused(path):
    lamina.open(path, "c").close()
    with lamina.open(path, "r") as db:
        with pytest.raises(lamina.error):
            db.batch()


def test_batch_with_a_durability(db):
    with db.batch(durability="sync") as b:
        b["k"] = "v"
    assert db["k"] == b"v"
    with pytest.raises(ValueError):
        db.batch(durability="sometimes")
