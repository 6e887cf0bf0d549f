"""increment(): blind 64-bit counters through the engine's merge."""

from __future__ import annotations

import pytest


def test_increment_counts_from_zero(db):
    assert db.counter("hits") == 0
    db.increment("hits")
    db.increment("hits", 41)
    assert db.counter("hits") == 42
    assert db["hits"] == (42).to_bytes(8, "little")


def test_negative_increments_and_wrapping(db):
    db.increment("c", 5)
    db.increment("c", -7)
    assert db.counter("c") == -2
    db.increment("big", 2**63 - 1)
    db.increment("big", 1)
    assert db.counter("big") == -(2**63)


def test_increment_rejects_non_ints_and_huge_ints(db):
    with pytest.raises(TypeError):
        db.increment("c", "1")
    with pytest.raises(OverflowError):
        db.increment("c", 2**64)


def test_counter_of_a_non_counter_value_is_a_value_error(db):
    db["text"] = "hello"
    with pytest.raises(ValueError):
        db.counter("text")


def test_counters_survive_reopen(path):
    import lamina

    with lamina.open(path, "c") as db:
        for _ in range(100):
            db.increment(b"n", 3)
    with lamina.open(path, "r") as db:
        assert db.counter(b"n") == 300
