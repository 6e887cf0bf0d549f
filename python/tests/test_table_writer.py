"""lamina.TableWriter, Db.ingest and lamina.bulk_load from Python."""

from __future__ import annotations

import errno
import os

import pytest

import lamina


def write(path, keys, tag="v", **kw):
    with lamina.TableWriter(str(path), **kw) as w:
        for k in keys:
            w.put(k, f"{tag}{k}")
    return str(path)


def test_keys_out_of_order_raise_lamina_error_naming_the_key(tmp_path):
    w = lamina.TableWriter(str(tmp_path / "a.sst"))
    w.put(b"b", b"1")
    with pytest.raises(lamina.error, match='"a" sorts before the previous key "b"'):
        w.put(b"a", b"2")
    with pytest.raises(lamina.error, match='"b" repeats the previous key'):
        w.put(b"b", b"3")
    w.put("c", "4")
    info = w.finish()
    assert (info["smallest"], info["largest"], info["entries"]) == (b"b", b"c", 2)
    assert info["file_size"] == os.path.getsize(tmp_path / "a.sst")
    with pytest.raises(lamina.error, match="already finished"):
        w.put(b"d", b"5")


def test_context_manager_removes_the_file_when_the_block_raises(tmp_path):
    path = tmp_path / "a.sst"
    with pytest.raises(RuntimeError):
        with lamina.TableWriter(str(path)) as w:
            w.put(b"a", b"1")
            raise RuntimeError("producer failed")
    assert not path.exists()
    with lamina.TableWriter(str(path)) as w:
        w.put(b"a", b"1")
    assert path.exists()
    with pytest.raises(lamina.error):
        lamina.TableWriter(str(path))


def test_an_existing_output_file_is_named_a_file_not_a_database(tmp_path):
    """A TableWriter over a file that exists raised "[Errno 17] database
    already exists: 'a.sst'": the engine said so with the error of a
    database opened with error_if_exists, and a person looked for a
    database. It now says the file exists and that a table is written only
    to a new one, and leaves the file as it was. Before the fix the message
    said "database already exists"."""
    path = tmp_path / "a.sst"
    path.write_bytes(b"mine")
    with pytest.raises(lamina.error) as raised:
        lamina.TableWriter(str(path))
    assert raised.value.errno == errno.EEXIST
    assert raised.value.filename == str(path)
    assert str(raised.value) == (
        f"[Errno 17] file already exists (a table is written only to a new file): '{path}'"
    )
    assert path.read_bytes() == b"mine"


def test_ingest_is_atomic_and_later_files_win(tmp_path):
    a = write(tmp_path / "a.sst", [f"k{i:04}" for i in range(100)], "a")
    b = write(tmp_path / "b.sst", [f"k{i:04}" for i in range(50, 150)], "b", keyspace="ks")
    c = write(tmp_path / "c.sst", [f"k{i:04}" for i in range(90, 110)], "c")
    bad = write(tmp_path / "bad.sst", [f"z{i:04}" for i in range(100)])
    with open(bad, "r+b") as f:
        f.seek(20)
        byte = f.read(1)
        f.seek(20)
        f.write(bytes([byte[0] ^ 0xFF]))
    with lamina.open(str(tmp_path / "db"), "c") as db:
        db[b"k0001"] = b"before"
        with pytest.raises(lamina.error, match="bad.sst"):
            db.ingest([a, b, c, bad], move=True)
        assert list(db.keys()) == [b"k0001"]
        assert os.path.exists(a)
        done = db.ingest([a, b, c], move=True)
        assert [d["entries"] for d in done] == [100, 100, 20]
        assert not os.path.exists(a)
        assert db[b"k0001"] == b"ak0001"
        assert db[b"k0095"] == b"ck0095"
        assert len(db) == 110
        assert db.keyspace("ks")[b"k0120"] == b"bk0120"


def test_moved_files_that_overlap_nothing_are_linked_in(tmp_path):
    a = write(tmp_path / "a.sst", [f"a{i:04}" for i in range(100)])
    b = write(tmp_path / "b.sst", [f"b{i:04}" for i in range(100)])
    with lamina.open(str(tmp_path / "db"), "c") as db:
        done = db.ingest([a, b], move=True)
        assert [d["linked"] for d in done] == [True, True]
        assert [d["seqno"] for d in done] == [0, 0]
        assert len(db) == 200
        # Over what is there now: rewritten.
        c = write(tmp_path / "c.sst", ["a0050"], "c")
        assert [d["linked"] for d in db.ingest([c])] == [False]
        assert db["a0050"] == b"ca0050"
    assert not os.path.exists(a) and os.path.exists(c)


def test_bulk_load_sorts_under_a_memory_bound_and_the_last_pair_wins(tmp_path):
    n = 20000
    pairs = [(f"key{(i * 7919) % n:06}", f"first{i}") for i in range(n)]
    pairs += [(f"key{i:06}", f"last{i}") for i in range(0, n, 3)]
    path = str(tmp_path / "db")
    assert lamina.bulk_load(path, iter(pairs), memory=64 << 10) == len(pairs)
    want = dict((k.encode(), v.encode()) for k, v in pairs)
    with lamina.open(path, "r") as db:
        assert len(db) == n
        assert dict(db.items()) == want
    assert not [f for f in os.listdir(path) if f.endswith(".tmp")]
    with pytest.raises(TypeError):
        lamina.bulk_load(path, [b"not a pair"])


def test_default_block_size_is_a_real_block_size(tmp_path):
    # Without block_size the writer cuts blocks of the default 16 KiB (as
    # block_size=16384 does), not one block per entry.
    def size(name, **options):
        with lamina.TableWriter(tmp_path / name, **options) as w:
            for i in range(20_000):
                w.put(b"key%08d" % i, b"v" * 64)
            return w.finish()["file_size"]

    assert size("default.sst") == size("explicit.sst", block_size=16384)


def test_a_failed_bulk_load_leaves_nothing_behind(tmp_path):
    # Into a new path: the database the call created is removed again.
    new = tmp_path / "new"
    with pytest.raises(TypeError, match="values must be bytes or str"):
        lamina.bulk_load(str(new), [(b"a", b"1"), (b"b", 2)])
    assert not new.exists()
    # Into an empty directory: emptied again, and left in place.
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TypeError, match="pairs"):
        lamina.bulk_load(str(empty), [(b"a", b"1"), b"not a pair"])
    assert empty.is_dir() and os.listdir(empty) == []
    # A directory holding another file is refused before anything is written.
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "notes.txt").write_text("mine")
    with pytest.raises(lamina.error, match="not a lamina database"):
        lamina.bulk_load(str(mixed), [(b"a", b"1")])
    assert sorted(os.listdir(mixed)) == ["notes.txt"]
    # Into an existing database: it keeps what it held, and nothing is added.
    db_path = tmp_path / "db"
    with lamina.open(str(db_path), "c") as db:
        db[b"kept"] = b"yes"
    with pytest.raises(TypeError):
        lamina.bulk_load(str(db_path), [(b"added", b"1"), (b"bad", 2)])
    with lamina.open(str(db_path), "r") as db:
        assert dict(db.items()) == {b"kept": b"yes"}


def test_moving_a_table_of_the_database_is_refused_and_it_is_kept(tmp_path):
    # Found by a hostile test: db.ingest([own], move=True), naming a table
    # the database lists (a writer's table linked in by an earlier moving
    # ingest), linked it in again and removed the live table: the database
    # no longer opened ("table ... listed in the manifest is missing"). Now
    # a file of the database is refused for a move, by any path, and nothing
    # is removed. This failed before the fix (the ingest succeeded).
    a = write(tmp_path / "a.sst", [f"a{i:04}" for i in range(100)])
    path = tmp_path / "db"
    with lamina.open(str(path), "c") as db:
        assert [d["linked"] for d in db.ingest([a], move=True)] == [True]
        [own] = [f for f in os.listdir(path) if f.endswith(".sst")]
        for given in (path / own, tmp_path / "db" / ".." / "db" / own):
            with pytest.raises(lamina.error, match="in the database directory"):
                db.ingest([str(given)], move=True)
        assert os.path.exists(path / own)
        assert len(db) == 100
    with lamina.open(str(path), "r") as db:
        assert len(db) == 100
        assert db["a0042"] == b"va0042"
