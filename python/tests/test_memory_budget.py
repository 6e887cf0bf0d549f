"""``memory_budget``: one number bounding cache and memtables, reported by
``stats()`` with the stall counters."""

import pytest

import lamina


def test_budget_derives_the_cache_and_charges_memtables(tmp_path):
    budget = 12 << 20
    with lamina.open(str(tmp_path / "db"), "n", memory_budget=budget) as db:
        s = db.stats()
        assert s["memory_budget"] == budget
        assert s["cache_capacity"] == 8 << 20
        for i in range(5000):
            db[b"key%08d" % i] = b"v" * 100
        s = db.stats()
        assert 0 < s["memory_charged_bytes"] <= budget
        assert s["cache_capacity"] < 8 << 20, "memtables are charged to the cache"
        db.sync()
        for name in ("write_delay_micros", "write_stops", "write_stop_micros",
                     "level0_delay_micros", "pending_bytes_delay_micros",
                     "memtables_delay_micros", "level0_stops", "pending_bytes_stops",
                     "memtables_stops", "pending_compaction_bytes"):
            assert s[name] >= 0, name
        assert s["write_stops"] == s["level0_stops"] + s["pending_bytes_stops"] + s["memtables_stops"]
        assert db[b"key%08d" % 4999] == b"v" * 100


def test_an_explicit_cache_size_wins(tmp_path):
    with lamina.open(str(tmp_path / "db"), "n", memory_budget=9 << 20, cache_size=3 << 20) as db:
        for i in range(2000):
            db[b"k%d" % i] = b"v"
        s = db.stats()
        assert s["cache_capacity"] == 3 << 20
        assert s["memory_charged_bytes"] == 0


def test_a_budget_out_of_range_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="memory_budget is 1000"):
        lamina.open(str(tmp_path / "db"), "n", memory_budget=1000)
    with pytest.raises(TypeError, match="memory_budget must be a non-negative int"):
        lamina.open(str(tmp_path / "db"), "n", memory_budget="big")
