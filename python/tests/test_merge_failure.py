"""increment() on a value that is not a counter is a problem of that key only.

Before the fix: after `d[b'k'] = b'hello'; d.increment(b'k', 1)`, `len(d)`,
`keys()`, iteration and even `del d[b'k']` raised ValueError, without naming
the key."""

from __future__ import annotations

import pytest

import lamina


def test_increment_onto_text_in_the_memtable_is_refused_at_the_call(path):
    with lamina.open(path, "c") as d:
        d[b"k"] = b"hello"
        with pytest.raises(ValueError, match=r'key "k"'):
            d.increment(b"k", 1)
        assert d[b"k"] == b"hello"


def test_an_unfoldable_key_breaks_nothing_else(path):
    with lamina.open(path, "c") as d:
        d[b"a"] = b"1"
        d[b"k"] = b"hello"
        d[b"z"] = b"26"
        d.flush()
    with lamina.open(path, "w") as d:
        # The stored value is in a table, not the memtable: the operand is taken.
        d.increment(b"k", 1)
        with pytest.raises(ValueError, match=r'key "k" in the default keyspace'):
            d[b"k"]
        assert len(d) == 3
        assert d.keys() == [b"a", b"k", b"z"]
        assert list(d) == [b"a", b"k", b"z"]
        assert b"k" in d
        assert d[b"z"] == b"26"
        del d[b"k"]
        assert b"k" not in d
        assert d.items() == [(b"a", b"1"), (b"z", b"26")]
