"""Large values in blob files: written and read back whole from Python, the
threshold as an option, and the blob counters in stats()."""

from __future__ import annotations

import os

import pytest

import lamina


def _value(i: int, size: int) -> bytes:
    """`size` bytes, different for each `i`."""
    return ((b"%d:" % i + os.urandom(64)) * (size // 64 + 1))[:size]


def test_large_values_round_trip_through_blob_files(path):
    values = {b"k%03d" % i: _value(i, 100_000) for i in range(30)}
    with lamina.open(path, "c", blob_threshold=4096) as db:
        for k, v in values.items():
            db[k] = v
        db["small"] = "tiny"
        db.flush()
        s = db.stats()
        assert s["blob_files"] >= 1
        assert s["blob_value_bytes"] == sum(len(v) for v in values.values())
        assert s["blob_threshold"] == 4096
        assert db[b"k007"] == values[b"k007"]
    with lamina.open(path, "r") as db:
        for k, v in values.items():
            got = db[k]
            assert type(got) is bytes
            assert got == v
        assert db.get(b"k003") == values[b"k003"]
        assert db[b"small"] == b"tiny"
        assert db.check()["ok"]


def test_a_flipped_byte_in_a_blob_value_is_an_error_naming_the_file(path):
    value = _value(1, 100_000)
    with lamina.open(path, "c", blob_threshold=4096) as db:
        db[b"big"] = value
        db.flush()
        assert db[b"big"] == value
    blobs = [n for n in os.listdir(path) if n.endswith(".blob")]
    assert len(blobs) == 1
    blob = os.path.join(path, blobs[0])
    # The value starts after the file header (16 bytes), the record header
    # (16) and the tree key (4-byte keyspace id and b"big").
    at = 16 + 16 + 7 + 50_000
    with open(blob, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x40]))
    with lamina.open(path, "r") as db:
        with pytest.raises(lamina.error) as caught:
            db[b"big"]
        assert caught.value.filename == blob
        assert "checksum" in str(caught.value)
        assert "offset 39" in str(caught.value)


def test_overwritten_large_values_are_reclaimed(path):
    with lamina.open(path, "c", blob_threshold=1024) as db:
        for rnd in range(3):
            for i in range(20):
                db[b"k%d" % i] = _value(i + rnd, 50_000)
            db.flush()
        db.compact()
        s = db.stats()
        live = 20 * 50_000
        assert s["blob_value_bytes"] - s["blob_dead_bytes"] == live
        assert s["blob_file_bytes"] <= 1.5 * live
        assert len(db[b"k5"]) == 50_000
        assert db[b"k5"].startswith(b"7:")


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"blob_threshold": 0}, ValueError),
        ({"blob_threshold": "big"}, TypeError),
        ({"blob_gc_ratio": 1.5}, ValueError),
        ({"blob_gc_ratio": "half"}, TypeError),
    ],
)
def test_bad_blob_options_are_refused(path, kwargs, error):
    with pytest.raises(error):
        lamina.open(path, "c", **kwargs)


def test_a_large_value_read_again_is_the_bytes_object_read_before_until_it_changes(path):
    values = {b"k%02d" % i: _value(i, 100_000) for i in range(20)}
    with lamina.open(path, "c", blob_threshold=4096) as db:
        for k, v in values.items():
            db[k] = v
        db.flush()
    with lamina.open(path, "w", blob_threshold=4096) as db:
        first, second, third = db[b"k05"], db[b"k05"], db[b"k05"]
        assert first == second == third == values[b"k05"]
        # Kept on its second read, that object is handed out from then on,
        # from every way of reading the key.
        assert third is second and first is not second
        assert db[b"k05"] is second
        assert db.get(b"k05") is second
        assert db.get_many([b"k05"])[0] == values[b"k05"]
        with db.snapshot() as snap:
            assert snap[b"k05"] == values[b"k05"]
        # A new value, in the memtable and then in a table, is read anew.
        new = _value(99, 100_000)
        db[b"k05"] = new
        assert db[b"k05"] == new
        assert db[b"k05"] is not second
        db.flush()
        db.compact()
        for _ in range(3):
            assert db[b"k05"] == new
        del db[b"k05"]
        with pytest.raises(KeyError):
            db[b"k05"]
        assert b"k05" not in db
        # The object handed out is unchanged by all this.
        assert second == values[b"k05"]
