"""What survives a killed process: every write acknowledged under the default
durability ('os') and under the 's' flag, and nothing torn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import lamina

_WRITER = textwrap.dedent(
    """
    import sys, lamina
    db = lamina.open(sys.argv[1], sys.argv[2])
    for i in range(int(sys.argv[3])):
        db[b"%06d" % i] = b"value-%d" % i
    with db.batch() as b:
        b["batch-a"] = "1"
        b["batch-b"] = "1"
    print("written", flush=True)
    sys.stdin.readline()
    """
)


@pytest.mark.parametrize("flag", ["c", "cs"])
def test_acknowledged_writes_survive_sigkill(path, flag):
    n = 2000
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, path, flag, str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "written"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    with lamina.open(path, "r") as db:
        assert len(db) == n + 2
        assert db[b"%06d" % (n - 1)] == b"value-%d" % (n - 1)
        assert db["batch-a"] == db["batch-b"] == b"1"
