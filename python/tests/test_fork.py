"""A database handle belongs to the process that opened it: a child forked
after the open gets lamina.error from every use of the inherited handle, and
never writes to the parent's files, not even when it closes or drops it.

Before the fix: parent and child both wrote 5,000 keys through the same
handle; on reopen only 348 of the parent's acknowledged writes were there and
`lamina check` said OK, or the database no longer opened ("non-zero bytes in
a block trailer" in its WAL)."""

from __future__ import annotations

import os
import sys

import pytest

import lamina

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")


def _child(db) -> int:
    """Uses the inherited handle; the exit code says what went wrong."""
    for i in range(5000):
        try:
            db[b"child%05d" % i] = b"from the child"
        except lamina.error as e:
            if "open the database in this process" not in str(e):
                return 3
            break
        except BaseException:
            return 2
    else:
        return 1
    try:
        db.close()
    except lamina.error:
        pass
    except BaseException:
        return 4
    del db
    return 0


def test_a_forked_child_gets_an_error_and_the_parent_loses_nothing(path):
    db = lamina.open(path, "c")
    for i in range(100):
        db[b"parent%05d" % i] = b"before the fork"
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 5
        try:
            code = _child(db)
        finally:
            os._exit(code)
    for i in range(100, 5000):
        db[b"parent%05d" % i] = b"after the fork"
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status)
    assert os.WEXITSTATUS(status) == 0, "the child's writes were not refused"
    db.close()

    with lamina.open(path, "r") as again:
        keys = sorted(again.keys())
        assert keys == [b"parent%05d" % i for i in range(5000)]
        assert again[b"parent00000"] == b"before the fork"
        assert again[b"parent04999"] == b"after the fork"
