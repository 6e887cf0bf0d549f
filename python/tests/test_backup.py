"""``Db.backup`` from a read-only handle while another process writes, and
its errors.

Before: a destination that exists raised ``ValueError`` (not
``lamina.error``), and only the process owning the database could back it
up (``lamina backup`` beside it exited 4, locked).
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import time

import lamina
import pytest

SLOTS = 97


def _value(i: int) -> bytes:
    # Every seventh value is large enough for a blob file.
    return b"%d." % i + b"x" * (5000 if i % 7 == 0 else 20)


def _writer(path: str, acked, stop) -> None:  # type: ignore[no-untyped-def]
    """Writes 0, 1, 2, ... to slot i % SLOTS, counting each acknowledged write."""
    with lamina.open(path, "c", memtable_size=64 << 10) as db:
        i = 0
        while not stop.is_set():
            db[b"slot%03d" % (i % SLOTS)] = _value(i)
            i += 1
            acked.value = i
            if i % 2500 == 0:
                db.flush()


def _history_prefix(path: str) -> int:
    """The n such that the database at ``path`` is the state after writes
    0..n exactly; fails if it is no such state."""
    with lamina.open(path, "r") as db:
        got = {k: db[k] for k in db.keys()}
    n = 0
    for v in got.values():
        n = max(n, int(v.split(b".")[0]) + 1)
    want = {}
    for slot in range(min(n, SLOTS)):
        last = slot + (n - 1 - slot) // SLOTS * SLOTS
        want[b"slot%03d" % slot] = _value(last)
    assert got == want, f"not the state after writes 0..{n}"
    return n


def test_backup_beside_a_writing_process_is_a_prefix_of_its_history(tmp_path):
    path = str(tmp_path / "db")
    ctx = multiprocessing.get_context("spawn")
    acked = ctx.Value("q", 0)
    stop = ctx.Event()
    proc = ctx.Process(target=_writer, args=(path, acked, stop))
    proc.start()
    try:
        deadline = time.monotonic() + 60
        seen = []
        for round in range(4):
            while acked.value < 3000 * (round + 1):
                assert proc.is_alive() and time.monotonic() < deadline
                time.sleep(0.01)
            dest = str(tmp_path / f"backup{round}")
            before = acked.value
            with lamina.open(path, "r") as r:
                r.backup(dest)
            after = acked.value
            with lamina.open(dest, "r") as b:
                report = b.check()
            assert report["ok"], report
            n = _history_prefix(dest)
            assert before <= n <= after, (before, n, after)
            seen.append(n)
        assert seen == sorted(seen)
    finally:
        stop.set()
        proc.join(60)
    assert proc.exitcode == 0


def test_backup_onto_an_existing_destination_is_a_lamina_error(db, tmp_path):
    db[b"k"] = b"v"
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep").write_bytes(b"mine")
    with pytest.raises(lamina.error) as e:
        db.backup(str(dest))
    assert e.value.errno == errno.EEXIST
    assert e.value.filename == str(dest)
    assert os.listdir(dest) == ["keep"]
    afile = tmp_path / "afile"
    afile.write_bytes(b"")
    with pytest.raises(lamina.error) as e:
        db.backup(str(afile))
    assert e.value.errno == errno.EEXIST


def test_a_database_written_once_is_small(tmp_path):
    """A one-key database took 1.1 MB (a 1 MiB WAL preallocated); gdbm's 16 KB."""
    path = str(tmp_path / "t")
    for _ in range(20):
        with lamina.open(path, "c") as d:
            d["a"] = "1"
    size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    assert size < 64 << 10, f"{size} bytes: {sorted(os.listdir(path))}"
