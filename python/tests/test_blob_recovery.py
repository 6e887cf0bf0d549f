"""Values written to a blob file at commit and made durable by a sync are
never silently dropped by recovery: their blob file damaged, every open says
so, naming the file, and nothing is truncated."""

from __future__ import annotations

import os

import pytest

import lamina


def _value(i: int) -> bytes:
    """20 KB, past the blob threshold, different for each `i`."""
    return bytes((i * 31 + j * 7 + 1) % 256 for j in range(20_000))


def _fifty_synced_puts(path: str) -> str:
    """The user's steps: 50 puts of 20 KB with flag 'ns' (each a `Sync`
    commit), then close(). Returns the blob file of the unflushed memtable."""
    db = lamina.open(path, "ns")
    for i in range(50):
        db[b"key%03d" % i] = _value(i)
    db.close()
    blobs = [n for n in os.listdir(path) if n.endswith(".blob")]
    assert len(blobs) == 1, blobs
    return os.path.join(path, blobs[0])


def _files(path: str) -> dict[str, bytes]:
    out = {}
    for n in sorted(os.listdir(path)):
        if n != "LOCK":
            with open(os.path.join(path, n), "rb") as f:
                out[n] = f.read()
    return out


def _every_open_fails_naming(path: str, blob: str) -> None:
    before = _files(path)
    for flag in ["r", "w", "r", "w"]:
        with pytest.raises(lamina.error) as caught:
            with lamina.open(path, flag) as db:
                len(db)
        assert caught.value.filename == blob, str(caught.value)
        assert "durable" in str(caught.value), str(caught.value)
        assert _files(path) == before, f"an open with flag {flag!r} changed a file"


def test_a_deleted_blob_file_of_synced_puts_is_an_error_at_every_open(path):
    # Before the fix: lamina.open(path, "r") succeeded with all 50 values
    # gone, and the next read-write open made the loss permanent.
    blob = _fifty_synced_puts(path)
    os.remove(blob)
    _every_open_fails_naming(path, blob)


def test_a_blob_file_of_synced_puts_cut_mid_value_is_an_error_at_every_open(path):
    # Before the fix: 30 of the 50 values came back, the rest silently gone.
    blob = _fifty_synced_puts(path)
    record = 16 + 4 + 6 + 20_000
    value_30 = 16 + 30 * record + 26
    os.truncate(blob, value_30 + 7_000)
    _every_open_fails_naming(path, blob)
