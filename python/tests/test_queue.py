"""A database used as a work queue: popitem() and firstkey() after many
deletions at the front answer exactly what a sorted model does."""

from __future__ import annotations

import random

import lamina


def test_popitem_pops_every_item_in_key_order(path):
    with lamina.open(path, "c", memtable_size=64 << 10) as db:
        n = 10_000
        keys = [b"job:%08d" % i for i in range(n)]
        shuffled = keys[:]
        random.Random(5).shuffle(shuffled)
        for k in shuffled:
            db[k] = k[4:]
        db.flush()
        popped = [db.popitem() for _ in range(n)]
        assert popped == [(k, k[4:]) for k in keys]
        assert len(db) == 0


def test_firstkey_after_deleting_a_prefix_and_writing_below_it(path):
    with lamina.open(path, "c", memtable_size=64 << 10) as db:
        for i in range(5000):
            db[b"%06d" % i] = b"x"
        for i in range(4000):
            del db[b"%06d" % i]
        assert db.firstkey() == b"004000"
        # Each answer may leave the front where the next one starts.
        assert db.firstkey() == b"004000"
        db[b"000100"] = b"back"
        assert db.firstkey() == b"000100"
        with db.snapshot() as snap:
            assert db.popitem() == (b"000100", b"back")
            assert db.firstkey() == b"004000"
            # The snapshot, taken before the pop, still sees the old front.
            assert snap.keys()[0] == b"000100"
        for i in range(4000, 5000):
            del db[b"%06d" % i]
        assert db.firstkey() is None
        db[b"999999"] = b"last"
        assert db.firstkey() == b"999999"


def test_pops_from_the_back_after_many_pops_and_a_put_above(path):
    with lamina.open(path, "c", memtable_size=64 << 10) as db:
        n = 5000
        for i in range(n):
            db[b"job:%06d" % i] = b"%d" % i
        db.flush()
        # A stack: the last key, then a delete, from a reverse iterator.
        for i in reversed(range(1000, n)):
            k, v = next(db.iterator(reverse=True))
            assert (k, v) == (b"job:%06d" % i, b"%d" % i)
            del db[k]
        assert db.keys(reverse=True)[:2] == [b"job:000999", b"job:000998"]
        db[b"job:999999"] = b"top"
        assert next(db.iterator(reverse=True)) == (b"job:999999", b"top")
        with db.snapshot() as snap:
            del db[b"job:999999"]
            assert db.items(reverse=True)[0] == (b"job:000999", b"999")
            # The snapshot, taken before the delete, still sees the old top.
            assert snap.keys(reverse=True)[0] == b"job:999999"
        for i in range(1000):
            del db[b"job:%06d" % i]
        assert db.items(reverse=True) == []
        assert list(db.iterator(reverse=True)) == []
        db[b"job:000000"] = b"again"
        assert db.items(reverse=True) == [(b"job:000000", b"again")]
