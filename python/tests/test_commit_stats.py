"""stats() counts commits and the WAL fsyncs they shared."""

from __future__ import annotations

import threading

import lamina


def test_each_synchronous_assignment_is_one_durable_commit(path):
    with lamina.open(path, "cs") as db:
        for i in range(10):
            db[b"k%d" % i] = b"v" * 256
        s = db.stats()
        assert (s["commits"], s["sync_commits"]) == (10, 10)
        assert s["wal_syncs"] >= 10
        # One thread: nothing to share an fsync with, no one to wait for.
        assert 0 < s["commits_per_fsync"] <= 1.0
        assert (s["commit_waits_yielded"], s["commit_waits_slept"]) == (0, 0)


def test_threads_share_fsyncs_and_every_commit_is_counted(path):
    with lamina.open(path, "cs") as db:

        def work(t):
            for i in range(50):
                db[b"t%d-%d" % (t, i)] = b"v" * 256

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        s = db.stats()
        assert s["sync_commits"] == 400
        assert len(db) == 400
        assert s["wal_syncs"] <= 400
        assert s["commits_per_fsync"] == s["sync_commits"] / s["wal_syncs"]
        if s["wal_syncs"] < 400:
            # A commit covered by another's sync waited for it.
            assert s["commit_waits_yielded"] + s["commit_waits_slept"] > 0


def test_batch_commits_once(path):
    with lamina.open(path, "c") as db:
        before = db.stats()["commits"]
        with db.batch() as b:
            for i in range(5):
                b[b"k%d" % i] = b"v"
        assert db.stats()["commits"] == before + 1
