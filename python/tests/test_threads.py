"""Several Python threads on one database: writes and reads overlap, nothing is lost."""

from __future__ import annotations

import threading

import lamina

THREADS = 8
PER_THREAD = 2000


def _run(workers):
    errors = []

    def wrap(fn, *args):
        try:
            fn(*args)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=w) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_threads_writing_disjoint_keys_lose_nothing(path):
    with lamina.open(path, "c") as db:

        def writer(t):
            for i in range(PER_THREAD):
                db[b"t%d-%06d" % (t, i)] = b"%d" % (t * i)

        _run([(writer, t) for t in range(THREADS)])
        assert len(db) == THREADS * PER_THREAD
        for t in range(THREADS):
            assert db[b"t%d-%06d" % (t, PER_THREAD - 1)] == b"%d" % (t * (PER_THREAD - 1))
    with lamina.open(path, "r") as db:
        assert len(db) == THREADS * PER_THREAD


def test_readers_see_whole_values_while_writers_run(path):
    with lamina.open(path, "c") as db:
        for i in range(500):
            db[b"%04d" % i] = b"0" * 100
        stop = threading.Event()

        def writer(t):
            for round_ in range(1, 30):
                for i in range(t, 500, 4):
                    db[b"%04d" % i] = (b"%d" % round_) * 100

        def reader():
            while not stop.is_set():
                for k, v in db.iterator(values=True):
                    assert len(set(v)) <= 2 and len(v) >= 100, (k, v[:10])
                assert len(db.keys()) == 500

        readers = [threading.Thread(target=reader) for _ in range(2)]
        for r in readers:
            r.start()
        try:
            _run([(writer, t) for t in range(4)])
        finally:
            stop.set()
            for r in readers:
                r.join()
        assert len(db) == 500


def test_concurrent_counters_add_up(path):
    with lamina.open(path, "c") as db:

        def bump(_):
            for _ in range(1000):
                db.increment(b"n")

        _run([(bump, t) for t in range(THREADS)])
        assert db.counter(b"n") == THREADS * 1000


def test_concurrent_batches_are_each_atomic(path):
    with lamina.open(path, "c") as db:

        def batcher(t):
            for i in range(200):
                with db.batch() as b:
                    b[b"a%d" % t] = b"%d" % i
                    b[b"b%d" % t] = b"%d" % i

        def checker():
            for _ in range(200):
                with db.snapshot() as s:
                    for t in range(4):
                        assert s.get(b"a%d" % t) == s.get(b"b%d" % t)

        _run([(batcher, t) for t in range(4)] + [(checker,)])


def test_the_gil_is_released_during_engine_work(path):
    """While one thread is inside a long engine call, another keeps running
    Python code (with the GIL held throughout, it would not run at all)."""
    with lamina.open(path, "c") as db:
        keys = [b"%08d" % i for i in range(100_000)]
        db.update((k, b"v" * 50) for k in keys)
        done = threading.Event()
        spins = 0

        def reader():
            for _ in range(5):
                db.get_many(keys)
            done.set()

        t = threading.Thread(target=reader)
        t.start()
        while not done.is_set():
            spins += 1
        t.join()
        assert spins > 1000
