"""What a user reads when something is wrong: every ``lamina.error`` prints
its message, the file and, where the system gave one, the errno.

Before: an error without an errno but with a file (opening an old gdbm file,
an empty file, a directory of photos) printed as
``[Errno None] None: 'old.gdbm'``, the words only in ``e.args[0]``; and
``lamina.open(path, 'n')`` refused an empty file where dbm.gnu and dbm.dumb
give a new empty database (CPython's
``test_anydbm_creation_n_file_exists_with_invalid_contents``).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap

import dbm.dumb
import pytest

import lamina
from peers import load_gnu

GNU = load_gnu()


def _gdbm_file(path):
    """A gdbm database at ``path``: made by dbm.gnu where installed, else its magic number."""
    if GNU is not None:
        with GNU.open(path, "c") as g:
            g[b"k"] = b"v"
    else:
        with open(path, "wb") as f:
            f.write(struct.pack("=l", 0x13579ACE) + b"\0" * 60)


def test_a_file_is_not_a_database_in_words(tmp_path):
    old = tmp_path / "old.dat"
    old.write_bytes(b"")
    with pytest.raises(lamina.error) as e:
        lamina.open(str(old), "r")
    assert str(e.value) == f"{old} is not a lamina database: it is a file, not a directory"
    assert e.value.filename == str(old)
    assert e.value.errno is None
    assert "[Errno None]" not in repr(e.value)


def test_relative_paths_are_printed_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.gdbm").write_bytes(b"not gdbm, not lamina")
    with pytest.raises(lamina.error) as e:
        lamina.open("old.gdbm", "w")
    assert str(e.value) == "old.gdbm is not a lamina database: it is a file, not a directory"


def test_a_gdbm_file_is_named_with_what_to_do(tmp_path):
    path = str(tmp_path / "old.gdbm")
    _gdbm_file(path)
    for flag in ("r", "w", "c"):
        with pytest.raises(lamina.error) as e:
            lamina.open(path, flag)
        assert str(e.value) == (
            f"{path} is not a lamina database: it is a file, not a directory "
            "(it is a dbm.gnu database: open it with dbm.gnu, "
            "copy it into a new lamina database with lamina.migrate(src, dst), "
            "or open it with flag 'n' to replace it with a new lamina database)"
        )
        assert e.value.filename == path
    assert lamina.whichdb(path) == "dbm.gnu"


def test_a_directory_of_other_files_is_refused_in_words(tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    (d / "cat.jpg").write_bytes(b"meow")
    for flag in ("r", "w", "c", "n"):
        with pytest.raises(lamina.error) as e:
            lamina.open(str(d), flag)
        assert str(e.value) == (
            f'{d} is not a lamina database: the directory holds "cat.jpg", which is not a lamina file'
        )
    assert os.listdir(d) == ["cat.jpg"]


def test_flag_n_replaces_an_empty_file(tmp_path):
    path = tmp_path / "db"
    path.write_bytes(b"")
    with lamina.open(str(path), "n") as db:
        assert len(db) == 0
        db["k"] = "v"
    assert path.is_dir()
    assert lamina.whichdb(str(path)) == "lamina"


def test_flag_n_replaces_a_gdbm_database(tmp_path):
    path = str(tmp_path / "old.gdbm")
    _gdbm_file(path)
    with lamina.open(path, "n") as db:
        assert db.keys() == []
    assert lamina.whichdb(path) == "lamina"


def test_flag_n_replaces_a_dumb_database(tmp_path):
    path = str(tmp_path / "old")
    with dbm.dumb.open(path, "c") as d:
        d[b"k"] = b"v"
    d.close()
    assert sorted(os.listdir(tmp_path)) == ["old.bak", "old.dat", "old.dir"]
    with lamina.open(path, "n") as db:
        assert db.keys() == []
    assert os.listdir(tmp_path) == ["old"]
    assert lamina.whichdb(path) == "lamina"


def test_flag_n_leaves_a_file_with_contents_alone(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    with pytest.raises(lamina.error) as e:
        lamina.open(str(notes), "n")
    assert str(e.value) == f"{notes} is not a lamina database: it is a file, not a directory"
    assert notes.read_text() == "hello"


def test_a_missing_database_says_so_with_errno(tmp_path):
    path = str(tmp_path / "missing")
    with pytest.raises(lamina.error) as e:
        lamina.open(path, "r")
    assert e.value.errno == 2
    assert str(e.value) == f"[Errno 2] No such file or directory: {path!r}"


def test_closed_and_read_only_say_what_happened(path):
    db = lamina.open(path, "c")
    db.close()
    with pytest.raises(lamina.error) as e:
        db["k"]
    assert str(e.value) == "database has already been closed"
    with lamina.open(path, "r") as db:
        with pytest.raises(lamina.error) as e:
            db["k"] = "v"
        assert str(e.value) == "database is open read-only (flag 'r'): it cannot be changed"


def test_a_locked_database_says_so_with_errno(path):
    lamina.open(path, "c").close()
    holder = textwrap.dedent(
        """
        import sys, lamina
        db = lamina.open(sys.argv[1], "w")
        print("ready", flush=True)
        sys.stdin.readline()
        db.close()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", holder, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        with pytest.raises(lamina.error) as e:
            lamina.open(path, "w")
        assert str(e.value) == f"[Errno 11] database is locked by another process or handle: {path!r}"
    finally:
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.close()
        assert child.wait(timeout=30) == 0


def test_errors_raised_by_hand_print_their_message():
    assert str(lamina.error("plain words")) == "plain words"
    e = lamina.error("words about a file")
    e.filename = "f"
    assert str(e) == "words about a file"
    assert str(lamina.error(2, "No such file or directory", "f")) == "[Errno 2] No such file or directory: 'f'"


def test_a_dropped_keyspace_s_handle_says_it_was_dropped(tmp_path):
    """A handle of a dropped keyspace used to raise `KeyError: 'a'` on a
    read (which reads as a missing key) and `KeyError: 'id 1'` on a write."""
    db = lamina.open(str(tmp_path / "db"), "c")
    ks = db.keyspace("a")
    ks[b"x"] = b"1"
    db.drop_keyspace("a")
    with pytest.raises(lamina.error, match='keyspace "a" was dropped'):
        ks[b"x"]
    with pytest.raises(lamina.error, match="keyspace .* was dropped"):
        ks[b"y"] = b"2"
    db.close()


def test_increment_of_a_value_that_is_not_a_counter_says_so(tmp_path):
    """`increment` over a text value used to raise `ValueError: cannot fold
    merge operands: ... add: stored value is 1 bytes` (the engine's words)."""
    db = lamina.open(str(tmp_path / "db"), "c")
    db["k"] = "x"
    with pytest.raises(ValueError) as info:
        db.increment("k")
        db["k"]
    text = str(info.value)
    assert "1 byte long, not an 8-byte counter" in text and "fold" not in text
    db.close()
