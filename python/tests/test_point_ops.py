"""Point operations answer the same whether the value is in memory (answered
with the GIL held) or must be read from disk (the GIL released): get,
[], in, del, and their errors."""

from __future__ import annotations

import pytest

import lamina


def test_reads_agree_in_memory_and_from_disk(path):
    with lamina.open(path, "c") as db:
        db[b"kept"] = b"v" * 300
        db[b"gone"] = b"x"
        del db[b"gone"]
        db.increment(b"counter", 5)
    # Reopened: the values are in tables whose blocks are not cached yet.
    with lamina.open(path, "w") as db:
        for _ in range(2):  # from disk, then from the block cache
            assert db[b"kept"] == b"v" * 300
            assert db.get(b"kept") == b"v" * 300
            assert b"kept" in db
            assert b"gone" not in db
            assert db.get(b"gone", b"dflt") == b"dflt"
            assert b"counter" in db
            with pytest.raises(KeyError):
                db[b"gone"]
        db[b"fresh"] = b"m"  # in the memtable
        assert db[b"fresh"] == b"m" and b"fresh" in db


def test_del_of_a_missing_or_deleted_key_raises_key_error(db):
    with pytest.raises(KeyError):
        del db[b"never"]
    db[b"k"] = b"v"
    del db[b"k"]
    with pytest.raises(KeyError):
        del db[b"k"]
    db.increment(b"c", 1)  # a key holding only a merge operand exists
    del db[b"c"]
    assert b"c" not in db


def test_del_reads_existence_from_disk_and_deletes_once(path):
    with lamina.open(path, "c") as db:
        db[b"on disk"] = b"v" * 300
        db["text"] = b"t"
    # Reopened: the keys are in tables whose blocks are not cached yet.
    with lamina.open(path, "w") as db:
        del db[b"on disk"]
        del db["text"]  # a str key is its UTF-8 bytes
        with pytest.raises(KeyError) as caught:
            del db[b"on disk"]
        assert caught.value.args == (b"on disk",)
        assert b"on disk" not in db and b"text" not in db
    with lamina.open(path, "r") as db:
        assert b"on disk" not in db, "the delete is durable"
        with pytest.raises(lamina.error):
            del db[b"never"]  # read-only: refused before any lookup


def test_bad_point_reads_keep_their_errors(path):
    db = lamina.open(path, "c")
    with pytest.raises(TypeError):
        db[1]
    with pytest.raises(TypeError):
        1 in db
    db.close()
    with pytest.raises(lamina.error):
        db[b"k"]
    with pytest.raises(lamina.error):
        b"k" in db
    with pytest.raises(lamina.error):
        del db[b"k"]
