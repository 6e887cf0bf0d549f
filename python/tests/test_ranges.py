"""Ordered reads: keys/values/items/iterator with start, stop, prefix, reverse."""

from __future__ import annotations

import pytest

KEYS = [b"a", b"ab", b"abc", b"b", b"ba", b"c", b"\xff", b"\xff\xff\x00"]


@pytest.fixture
def full(db):
    for k in KEYS:
        db[k] = k.upper()
    return db


def test_no_arguments_gives_everything_in_order(full):
    assert full.keys() == sorted(KEYS)
    assert full.values() == [k.upper() for k in sorted(KEYS)]
    assert full.items() == [(k, k.upper()) for k in sorted(KEYS)]


def test_start_is_inclusive_and_stop_exclusive(full):
    assert full.keys(b"ab", b"ba") == [b"ab", b"abc", b"b"]
    assert full.keys(start="b") == [b"b", b"ba", b"c", b"\xff", b"\xff\xff\x00"]
    assert full.keys(stop="ab") == [b"a"]
    assert full.keys("c", "b") == []


def test_prefix_selects_keys_beginning_with_it(full):
    assert full.keys(prefix=b"ab") == [b"ab", b"abc"]
    assert full.keys(prefix="a", start="ab", stop="abc") == [b"ab"]
    assert full.keys(prefix=b"\xff") == [b"\xff", b"\xff\xff\x00"]
    assert full.keys(prefix=b"") == sorted(KEYS)
    assert full.keys(prefix="zz") == []
    assert full.count(prefix="a") == 3


def test_reverse_walks_backwards(full):
    assert full.keys(reverse=True) == sorted(KEYS, reverse=True)
    assert full.keys("ab", "c", reverse=True) == [b"ba", b"b", b"abc", b"ab"]
    assert [k for k, _ in full.items(prefix="a", reverse=True)] == [b"abc", b"ab", b"a"]


def test_iterator_is_lazy_and_selects_keys_or_values(full):
    it = full.iterator(start="b")
    assert next(it) == (b"b", b"B")
    assert list(full.iterator(prefix="a", values=False)) == [b"a", b"ab", b"abc"]
    assert list(full.iterator(prefix="a", keys=False)) == [b"A", b"AB", b"ABC"]
    assert list(full.iterator(reverse=True, values=False))[:2] == [b"\xff\xff\x00", b"\xff"]
    with pytest.raises(ValueError):
        full.iterator(keys=False, values=False)


def test_an_iterator_sees_the_data_as_of_its_creation(db):
    for i in range(1000):
        db[b"%04d" % i] = b"old"
    it = db.iterator()
    first = next(it)
    for i in range(1000):
        db[b"%04d" % i] = b"new"
    db[b"9999"] = b"added"
    rest = list(it)
    assert first == (b"0000", b"old")
    assert len(rest) == 999 and all(v == b"old" for _, v in rest)


def test_long_walk_crosses_fetch_batches(db):
    n = 3000
    db.update((b"%06d" % i, b"v" * (i % 700)) for i in range(n))
    assert sum(1 for _ in db) == n
    assert [k for k in db.iterator(values=False, reverse=True)] == [b"%06d" % i for i in reversed(range(n))]


def test_nextkey_of_an_absent_key_is_the_following_key(full):
    assert full.nextkey(b"aa") == b"ab"
    assert full.nextkey(b"\xff\xff\x00") is None
    assert full.firstkey() == b"a"


def test_bool_is_cheap_and_right(db):
    assert not db
    db["k"] = "v"
    assert db


def test_bad_range_arguments_are_type_errors(full):
    with pytest.raises(TypeError):
        full.keys(start=5)
    with pytest.raises(TypeError):
        full.items(prefix=3.5)


def test_the_empty_key_comes_first(db):
    db.update({b"": b"e", b"a": b"1", b"b": b"2"})
    assert db.keys() == [b"", b"a", b"b"]
    assert db.keys(reverse=True) == [b"b", b"a", b""]
    assert db.keys(start=b"") == [b"", b"a", b"b"]
    assert db.keys(stop=b"") == []
    assert db.keys(stop=b"a") == [b""]
    assert db.keys(prefix=b"") == [b"", b"a", b"b"]
    assert db.keys(prefix=b"a") == [b"a"]
    assert db.firstkey() == b"" and db.nextkey(b"") == b"a"
    assert list(db.iterator(reverse=True, values=False)) == [b"b", b"a", b""]
    assert db.count() == 3 == len(db)


def test_empty_keys_are_per_keyspace(db):
    ks = db.keyspace("other")
    db[b""] = b"default"
    ks[b""] = b"other"
    with pytest.raises(ValueError, match="not an 8-byte counter"):
        db.increment(b"", 0)  # not a counter: refused at the call
    assert ks[b""] == b"other"
    assert db.keyspaces() == ["other"]
    assert db.stats()["keyspaces"] == ["other"]
    db.drop_keyspace("other")
    ks2 = db.keyspace("other")
    assert b"" not in ks2
    assert db[b""] == b"default"
    with db.batch() as b:
        b[b""] = b"batched"
    assert db[b""] == b"batched"
    del db[b""]
    assert b"" not in db and db.get(b"") is None
    with pytest.raises(KeyError):
        del db[b""]
    db[b""] = b"again"
    db.clear()
    assert len(db) == 0 and b"" not in db
