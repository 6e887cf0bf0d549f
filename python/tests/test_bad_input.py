"""Bad input never crashes the interpreter nor loses data: each case raises a
clear Python exception and leaves the database as it was."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import lamina


def test_wrong_key_types_are_type_errors_and_change_nothing(db):
    db["k"] = "v"
    for bad in (1, 2.5, None, bytearray(b"k"), memoryview(b"k"), ["k"], {"k": 1}):
        with pytest.raises(TypeError):
            db[bad] = b"v"
        with pytest.raises(TypeError):
            db[bad]
        with pytest.raises(TypeError):
            db.increment(bad)
    assert db.items() == [(b"k", b"v")]


def test_str_that_cannot_be_utf8_is_a_unicode_error(db):
    with pytest.raises(UnicodeEncodeError):
        db["\udc80"] = "v"
    assert len(db) == 0


def test_huge_keys_are_value_errors(db):
    db["k"] = "v"
    with pytest.raises(ValueError):
        db[b"x" * (64 * 1024 + 1)] = b"v"
    with pytest.raises(ValueError):
        with db.batch() as b:
            b["fine"] = "1"
            b[b"y" * (64 * 1024 + 1)] = b"v"
    db[b"x" * (64 * 1024)] = b"largest"
    assert db[b"x" * (64 * 1024)] == b"largest"
    assert db[b"k"] == b"v"
    assert "fine" not in db
    assert len(db) == 2


def test_a_directory_that_is_not_a_database_is_refused_and_untouched(tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    (d / "cat.jpg").write_bytes(b"\xff\xd8meow")
    for flag in ("r", "w", "c"):
        with pytest.raises(lamina.error) as e:
            lamina.open(str(d), flag)
        assert os.fsdecode(e.value.filename) == str(d)
    with pytest.raises(lamina.error):
        lamina.open(str(d), "n")
    assert sorted(os.listdir(d)) == ["cat.jpg"]
    assert (d / "cat.jpg").read_bytes() == b"\xff\xd8meow"


def test_a_regular_file_is_refused_and_untouched(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello")
    for flag in ("r", "w", "c", "n"):
        with pytest.raises(lamina.error) as e:
            lamina.open(str(f), flag)
        assert os.fsdecode(e.value.filename) == str(f)
    assert f.read_text() == "hello"


def test_a_missing_parent_directory_is_an_error_naming_the_path(tmp_path):
    path = str(tmp_path / "no" / "such" / "db")
    for flag in ("r", "w", "c", "n"):
        with pytest.raises(lamina.error) as e:
            lamina.open(path, flag)
        assert e.value.errno == 2
        assert os.fsdecode(e.value.filename) == path
    assert not os.path.exists(tmp_path / "no")


_HOLDER = textwrap.dedent(
    """
    import sys, lamina
    db = lamina.open(sys.argv[1], "c")
    db["from-child"] = "yes"
    db.sync()
    print("ready", flush=True)
    sys.stdin.readline()
    db.close()
    """
)


def test_a_database_locked_by_another_process_is_a_clear_error(path):
    lamina.open(path, "c").close()
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for flag in ("w", "c", "n", "wu"):
            with pytest.raises(lamina.error) as e:
                lamina.open(path, flag)
            assert e.value.errno == 11
            assert os.fsdecode(e.value.filename) == path
        with lamina.open(path, "r") as reader:  # readers need no lock
            assert reader.get("from-child") in (b"yes", None)
    finally:
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.close()
        assert child.wait(timeout=30) == 0
    with lamina.open(path, "w") as db:
        assert db["from-child"] == b"yes"


def test_the_same_database_opened_twice_in_one_process_is_refused(path):
    with lamina.open(path, "c") as db:
        db["k"] = "v"
        with pytest.raises(lamina.error):
            lamina.open(path, "w")
        assert db["k"] == b"v"


def test_bad_flag_and_mode_types(path):
    with pytest.raises(TypeError):
        lamina.open(path, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        lamina.open(path, "c", "0o666")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        lamina.open(12345, "c")  # type: ignore[arg-type]
    assert not os.path.exists(path)


@pytest.mark.parametrize("mode", [-1, -0o1000, 0o1000, 0o1777, 0o7777, 0o10000, 2**40])
def test_a_mode_outside_the_permission_bits_is_refused(path, mode):
    """Regression: ``lamina.open(p, 'c', mode=-1)`` made the database
    directory with the sticky bit (``-1 | ...`` masked by ``mkdir``), and
    0o1000 to 0o7777 asked for the setuid, setgid and sticky bits, as
    ``dbm.gnu`` passes any C int on to ``open(2)``. A mode is permission
    bits: anything outside 0 to 0o777 is refused, before anything is made.
    Before the fix these opens succeeded."""
    with pytest.raises(ValueError, match="mode must be permission bits, 0 to 0o777"):
        lamina.open(path, "c", mode)
    assert not os.path.exists(path)


@pytest.mark.parametrize("mode", [0o600, 0o777])
def test_modes_within_the_permission_bits_are_taken(path, mode):
    lamina.open(path, "c", mode).close()
    assert os.stat(path).st_mode & 0o7000 == 0
    with lamina.open(path, "w") as db:
        db[b"k"] = b"v"


def test_errors_inside_iteration_do_not_crash(db):
    db.update((b"%03d" % i, b"v") for i in range(300))
    it = iter(db)
    next(it)
    db.close()
    with pytest.raises(lamina.error):
        list(it)


def _files(path, suffix):
    return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(suffix) or f.startswith(suffix))


def test_damaged_manifest_is_an_error_not_a_crash(path):
    with lamina.open(path, "c") as db:
        db.update((b"%04d" % i, b"v" * 100) for i in range(1000))
        db.flush()
    for name in _files(path, "MANIFEST"):
        with open(name, "r+b") as f:
            f.seek(0)
            f.write(b"\x00garbage" * 8)
    with pytest.raises(lamina.error) as e:
        with lamina.open(path, "r") as db:
            db.keys()
    assert e.value.filename is not None


def test_damaged_table_is_reported_not_a_crash(path):
    with lamina.open(path, "c") as db:
        db.update((b"%05d" % i, os.urandom(100)) for i in range(5000))
        db.flush()
    tables = _files(path, ".sst")
    assert tables
    for name in tables:
        size = os.path.getsize(name)
        with open(name, "r+b") as f:
            f.seek(size // 3)
            f.write(os.urandom(512))
    try:
        db = lamina.open(path, "r")
    except lamina.error:
        return  # refused at open: fine
    with db:
        with pytest.raises(lamina.error):
            for _ in db.iterator():
                pass
        assert db.check()["ok"] is False
