"""``lamina.migrate(src, dst)``: every record of any database ``dbm.open``
reads (or a lamina one) into a new lamina database, all or nothing."""

from __future__ import annotations

import dbm.dumb
import errno
import os

import lamina
import pytest
from peers import load_gnu

GNU = load_gnu()

RECORDS = {b"k%05d" % i: b"v" * (i % 50) for i in range(10_000)}
RECORDS[b"\x00\xff binary"] = b"\n\r\t\x00"
RECORDS[b"empty value"] = b""


def _fill(db) -> None:
    for k, v in RECORDS.items():
        db[k] = v


def _contents(path: str) -> dict[bytes, bytes]:
    with lamina.open(path, "r") as db:
        return dict(db.items())


def test_from_dbm_dumb(tmp_path):
    src = str(tmp_path / "old")
    with dbm.dumb.open(src, "c") as d:
        _fill(d)
    seen: list[int] = []
    assert lamina.migrate(src, tmp_path / "new", progress=seen.append) == len(RECORDS)
    assert _contents(str(tmp_path / "new")) == RECORDS
    assert seen == sorted(seen) and seen[-1] == len(RECORDS)


@pytest.mark.skipif(GNU is None, reason="dbm.gnu is not installed")
def test_from_dbm_gnu(tmp_path):
    src = str(tmp_path / "old.gdbm")
    with GNU.open(src, "c") as d:  # type: ignore[union-attr]
        _fill(d)
    assert lamina.migrate(src, str(tmp_path / "new")) == len(RECORDS)
    assert _contents(str(tmp_path / "new")) == RECORDS
    # The source is left as it was.
    with GNU.open(src, "r") as d:  # type: ignore[union-attr]
        assert len(d) == len(RECORDS)


def test_from_lamina(tmp_path):
    src = str(tmp_path / "old")
    with lamina.open(src, "c") as d:
        _fill(d)
    assert lamina.migrate(src, str(tmp_path / "new")) == len(RECORDS)
    assert _contents(str(tmp_path / "new")) == RECORDS


def test_an_existing_destination_is_refused(tmp_path):
    src = str(tmp_path / "old")
    with dbm.dumb.open(src, "c") as d:
        d[b"a"] = b"1"
    dst = tmp_path / "taken"
    dst.mkdir()
    (dst / "photo.jpg").write_bytes(b"")
    with pytest.raises(lamina.error) as e:
        lamina.migrate(src, dst)
    assert e.value.errno == errno.EEXIST
    assert os.listdir(dst) == ["photo.jpg"]


def test_a_missing_or_unknown_source_is_an_error_in_words(tmp_path):
    with pytest.raises(lamina.error) as e:
        lamina.migrate(tmp_path / "nothing", tmp_path / "new")
    assert e.value.errno == errno.ENOENT
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a database of any kind" * 10)
    with pytest.raises(lamina.error, match="not a database any dbm module here recognises"):
        lamina.migrate(junk, tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_a_failed_migration_leaves_no_database_behind(tmp_path):
    src = str(tmp_path / "old")
    with dbm.dumb.open(src, "c") as d:
        _fill(d)

    def stop(copied: int) -> None:
        raise KeyboardInterrupt

    dst = tmp_path / "new"
    with pytest.raises(KeyboardInterrupt):
        lamina.migrate(src, dst, progress=stop)
    assert not dst.exists()
