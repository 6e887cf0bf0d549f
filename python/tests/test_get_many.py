"""get_many returns what a loop of get returns, in the order of the keys
asked, from the database, a keyspace and a snapshot: duplicates, missing
keys, values in blob files, keyspaces, a snapshot taken before later writes,
entries flushed and compacted, an empty list; it takes any iterable of the
keys db[key] takes, with the same errors; and stats() counts its lookups and
the reads of table files."""

from __future__ import annotations

import pytest

import lamina

BLOB_THRESHOLD = 512


def _key(i: int) -> bytes:
    return b"key%05d" % i


def _value(i: int, round_: int) -> bytes:
    """Every seventh value long enough for a blob file."""
    size = BLOB_THRESHOLD * 3 if i % 7 == 0 else 20
    return (b"v%d-%d-" % (round_, i)).ljust(size, b"x")


def _fill(db, n: int, round_: int) -> None:
    db.update((_key(i), _value(i, round_)) for i in range(n))
    for i in range(0, n, 5):
        del db[_key(i)]


def _asked(n: int) -> list:
    """Out of order, present and missing, str and bytes, some twice."""
    keys = [_key(i) for i in range(n + 20, -1, -3)]
    keys += [_key(i).decode() for i in range(0, n, 4)]
    keys += [_key(7), _key(10), _key(1), _key(1), "key00001", b"", "a", b"zzz"]
    return keys


def _loop(reader, keys, **kw) -> list:
    return [reader.get(k, **kw) for k in keys]


@pytest.mark.parametrize("place", ["memtable", "flushed", "compacted"])
def test_equals_a_loop_of_get_wherever_the_entries_are(path, place):
    with lamina.open(path, "c", blob_threshold=BLOB_THRESHOLD, memtable_size=64 << 10, block_size=512) as db:
        _fill(db, 600, 1)
        if place == "flushed":
            db.flush()
        elif place == "compacted":
            db.compact()
        if place != "memtable":
            assert db.stats()["blob_files"] >= 1
        keys = _asked(600)
        many = db.get_many(keys)
        assert many == _loop(db, keys)
        assert len(many) == len(keys)
        assert many[keys.index(_key(7))] == _value(7, 1)  # from a blob file
        assert many[keys.index(_key(10))] is None  # deleted
        assert None in many and all(v is None or type(v) is bytes for v in many)


def test_an_empty_iterable_gives_an_empty_list(db):
    db["a"] = "1"
    assert db.get_many([]) == []
    assert db.get_many(iter(())) == []
    with db.snapshot() as snap:
        assert snap.get_many([]) == []
    assert db.keyspace("k").get_many(()) == []


def test_any_iterable_of_keys(db):
    db.update({b"a": b"1", b"b": b"2"})
    assert db.get_many(k for k in ["b", "a", "c"]) == [b"2", b"1", None]
    assert db.get_many((b"a", "a")) == [b"1", b"1"]
    assert db.get_many({"b": 0}) == [b"2"]


def test_keys_are_refused_as_db_key_refuses_them(db):
    db["k"] = "v"
    for bad in (1, 2.5, None, bytearray(b"k"), memoryview(b"k"), ["k"]):
        with pytest.raises(TypeError):
            db[bad]
        with pytest.raises(TypeError):
            db.get_many(["k", bad])
    with pytest.raises(UnicodeEncodeError):
        db.get_many(["k", "\udc80"])
    with pytest.raises(ValueError):
        db[b"x" * (64 * 1024 + 1)]
    with pytest.raises(ValueError):
        db.get_many(["k", b"x" * (64 * 1024 + 1)])
    with pytest.raises(TypeError):
        db.get_many(5)
    with pytest.raises(TypeError):
        db.get_many(None)


def test_keyspaces_are_apart(db):
    a = db.keyspace("a")
    b = db.keyspace("b")
    for i in range(300):
        db[_key(i)] = b"default"
        if i % 2 == 0:
            a[_key(i)] = _value(i, 10)
        if i % 3 == 0:
            b[_key(i)] = _value(i, 20)
    db.flush()
    keys = _asked(300)
    assert a.get_many(keys) == _loop(a, keys)
    assert b.get_many(keys) == _loop(b, keys)
    assert db.get_many(keys) == _loop(db, keys)
    assert a.get_many([_key(4), _key(3)]) == [_value(4, 10), None]
    assert b.get_many([_key(4), _key(3)]) == [None, _value(3, 20)]
    with db.snapshot() as snap:
        a[_key(4)] = b"later"
        then = snap.get_many(keys, keyspace=a)
        assert then == _loop(snap, keys, keyspace=a)
        assert then[keys.index(_key(4).decode())] == _value(4, 10)
        assert snap.get_many(keys) == _loop(snap, keys)


@pytest.mark.parametrize("place", ["memtable", "flushed", "compacted"])
def test_a_snapshot_reads_as_of_when_it_was_taken(path, place):
    with lamina.open(path, "c", blob_threshold=BLOB_THRESHOLD, memtable_size=64 << 10) as db:
        _fill(db, 400, 1)
        keys = _asked(400)
        before = _loop(db, keys)
        with db.snapshot() as snap:
            _fill(db, 500, 2)
            for i in range(1, 400, 5):
                del db[_key(i)]
            if place == "flushed":
                db.flush()
            elif place == "compacted":
                db.compact()
            then = snap.get_many(keys)
            assert then == _loop(snap, keys)
            assert then == before
            now = db.get_many(keys)
            assert now == _loop(db, keys)
            assert now != then


def test_stats_count_lookups_and_table_reads(path):
    with lamina.open(path, "c", block_size=256, memtable_size=32 << 10) as db:
        db.update((_key(i), b"v" * 40) for i in range(2000))
        db.compact()
    with lamina.open(path, "r", cache_size=8 << 10) as db:
        s = db.stats()
        assert s["point_lookups"] == 0
        assert s["data_reads_per_lookup"] == 0.0
        tables = sum(level["tables"] for level in s["levels"])
        assert s["index_filter_reads"] == tables
        assert s["other_table_reads"] == tables
        keys = [_key(i) for i in range(0, 2000, 3)]
        assert all(v is not None for v in db.get_many(keys))
        db.get(b"missing")
        assert b"key00001" in db
        s = db.stats()
        assert s["point_lookups"] == len(keys) + 2
        assert 0 < s["lookup_data_block_reads"] <= s["data_block_reads"]
        assert s["table_file_reads"] == s["data_block_reads"] + s["index_filter_reads"] + s["other_table_reads"]
        assert 0 < s["data_reads_per_lookup"] < 1
        assert 0 <= s["data_block_hit_rate"] < 1
