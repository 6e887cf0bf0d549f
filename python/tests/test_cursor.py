"""``cursor()``: a position that seeks and moves both ways, over a database,
a keyspace or a snapshot."""

from __future__ import annotations

import threading

import pytest

import lamina

KEYS = [b"", b"b", b"d", b"f"]


@pytest.fixture
def filled(db):
    for k in KEYS:
        db[k] = b"v" + k
    return db


def _forward(c):
    out = []
    while c.valid():
        out.append(c.key())
        c.next()
    return out


def _backward(c):
    out = []
    while c.valid():
        out.append(c.key())
        c.prev()
    return out


def test_a_new_cursor_is_on_no_entry(filled):
    c = filled.cursor()
    assert not c.valid()
    assert c.key() is None and c.value() is None and c.item() is None
    assert c.next() is False and c.prev() is False


def test_forward_and_backward(filled):
    c = filled.cursor()
    assert c.first() is True
    assert _forward(c) == KEYS
    assert c.last() is True
    assert _backward(c) == KEYS[::-1]


def test_seek_and_turning_around(filled):
    c = filled.cursor()
    assert c.seek(b"c") and c.key() == b"d" and c.value() == b"vd"
    assert c.prev() and c.item() == (b"b", b"vb")
    assert c.next() and c.key() == b"d"
    assert c.next() and c.key() == b"f"
    assert c.seek("b") and c.key() == b"b"  # str keys are UTF-8
    assert c.seek_for_prev(b"c") and c.key() == b"b"
    assert c.seek_for_prev(b"d") and c.key() == b"d"
    assert c.seek_for_prev(b"") and c.key() == b""
    assert c.prev() is False and not c.valid()


def test_seek_past_either_end(filled):
    c = filled.cursor()
    assert c.seek(b"g") is False and c.key() is None
    assert c.seek(b"\xff" * 10) is False
    assert c.seek_for_prev(b"") is True and c.key() == b""
    assert c.first() and c.prev() is False
    assert c.last() and c.next() is False
    assert c.next() is False  # stays on no entry


def test_an_empty_database(db):
    c = db.cursor()
    assert c.first() is False and c.last() is False and c.seek(b"a") is False


def test_the_cursor_sees_the_data_as_of_its_creation(filled):
    c = filled.cursor()
    filled[b"c"] = b"new"
    del filled[b"d"]
    assert c.first() and _forward(c) == KEYS
    assert filled.cursor().seek(b"c")


def test_cursor_over_a_keyspace_and_with_keyspace_argument(filled):
    ks = filled.keyspace("other")
    ks[b"x"] = b"1"
    ks[b"y"] = b"2"
    assert ks.cursor().last() and _backward(ks.cursor()) == []
    c = ks.cursor()
    c.last()
    assert _backward(c) == [b"y", b"x"]
    c = filled.cursor(keyspace=ks)
    c.first()
    assert _forward(c) == [b"x", b"y"]


def test_cursor_over_a_snapshot_while_writers_go_on(filled):
    snap = filled.snapshot()
    stop = threading.Event()

    # A bounded writer: every entry it adds is one the cursor's passes must
    # skip, so an unbounded one makes each pass slower than the last, and on
    # a busy machine the test never ends.
    def writer():
        i = 0
        while not stop.is_set() and i < 50_000:
            filled[b"c%06d" % i] = b"w"
            if i % 7 == 0:
                filled.delete(b"d")
                filled[b"d"] = b"again"
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(20):
            c = snap.cursor()
            assert c.first()
            assert _forward(c) == KEYS
            assert c.seek(b"c") and c.item() == (b"d", b"vd")
            assert c.last() and _backward(c) == KEYS[::-1]
    finally:
        stop.set()
        t.join()
    assert len(filled) > len(KEYS)
    snap.close()
    with pytest.raises(lamina.error, match="snapshot has already been closed"):
        snap.cursor()


def test_a_cursor_of_a_closed_database_raises(filled):
    c = filled.cursor()
    c.first()
    filled.close()
    with pytest.raises(lamina.error, match="database has already been closed"):
        c.next()


def test_range_methods_are_written_once_for_keyspaces_and_snapshots(filled):
    """Keyspace and Snapshot take their range reads from one base class."""
    assert lamina.Keyspace.keys is lamina.Ranges.keys
    assert lamina.Snapshot.items is lamina.Ranges.items
    with filled.snapshot() as snap:
        filled[b"z"] = b"late"
        assert snap.count() == 4 and filled.count() == 5
        assert snap.keys(prefix=b"d") == filled.keys(prefix=b"d") == [b"d"]


def test_keyspace_argument_takes_a_keyspace_of_the_same_database(filled, tmp_path):
    with filled.snapshot() as snap:
        with pytest.raises(TypeError, match="keyspace= takes a Keyspace or a Db, not a Snapshot"):
            filled.keys(keyspace=snap)
    with lamina.open(str(tmp_path / "other"), "c") as other:
        with pytest.raises(lamina.error, match="belongs to another database handle"):
            filled.items(keyspace=other)
    assert filled.keys(keyspace=filled) == KEYS
