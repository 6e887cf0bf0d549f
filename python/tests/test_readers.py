"""Read-only opens beside a live writer.

Before reader files pinned what a reader's view uses, a read-only database
opened beside a writer in the same process raised "table ... listed in the
manifest is missing" as soon as the writer compacted the tables its view
listed (`test_reader_beside_a_compaction` failed so), and a reader never saw
writes made after it opened, with no way to catch up.
"""

import subprocess
import sys
import textwrap

import lamina


def test_reader_beside_a_compaction(tmp_path):
    p = str(tmp_path / "db")
    w = lamina.open(p, "n", memtable_size=1 << 16)
    for i in range(500):
        w[b"k%d" % i] = b"old-%d" % i
    w.flush()
    r = lamina.open(p, "r")
    for i in range(500):
        w[b"k%d" % i] = b"new-%d" % i
    w.flush()
    w.compact()
    assert r[b"k1"] == b"old-1"
    assert len(list(r.keys())) == 500
    r.refresh()
    assert r[b"k1"] == b"new-1"
    stats = r.stats()
    assert stats["refreshes"] == 1
    r.close()
    w.close()


def test_refresh_sees_later_writes_and_keeps_old_snapshots(tmp_path):
    p = str(tmp_path / "db")
    w = lamina.open(p, "n")
    w[b"a"] = b"1"
    r = lamina.open(p, "r")
    snap = r.snapshot()
    w[b"a"] = b"2"
    w[b"b"] = b"3"
    assert r.get(b"b") is None
    r.refresh()
    assert r[b"a"] == b"2" and r[b"b"] == b"3"
    assert snap[b"a"] == b"1" and snap.get(b"b") is None
    w.refresh()  # a writable database always reads the newest: nothing to do
    r.close()
    w.close()


def test_readers_in_other_processes_beside_a_writer(tmp_path):
    """Reader processes open, read and refresh while this one writes,
    flushes and compacts: no error, and no key goes back in time."""
    p = str(tmp_path / "db")
    w = lamina.open(p, "n", memtable_size=1 << 16)
    w[b"k0"] = (0).to_bytes(8, "big")
    reader = textwrap.dedent(
        """
        import sys, time, lamina
        p = sys.argv[1]
        last = {}
        deadline = time.time() + 3
        opens = 0
        while time.time() < deadline:
            r = lamina.open(p, "r")
            opens += 1
            for _ in range(3):
                for k, v in r.items():
                    n = int.from_bytes(v[:8], "big")
                    assert n >= last.get(k, 0), (k, n, last.get(k))
                    assert v == n.to_bytes(8, "big") + bytes(len(v) - 8), "torn value"
                    last[k] = n
                r.refresh()
            r.close()
        print(opens)
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", reader, p], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    n = 0
    while any(pr.poll() is None for pr in procs):
        n += 1
        for k in range(50):
            size = 8000 if k % 5 == 0 else 40  # values above and below the blob threshold
            w[b"k%d" % k] = n.to_bytes(8, "big") + bytes(size - 8)
        if n % 10 == 0:
            w.flush()
        if n % 35 == 0:
            w.compact()
    for pr in procs:
        out, err = pr.communicate()
        assert pr.returncode == 0, err.decode()
        assert int(out) > 0
    w.close()
