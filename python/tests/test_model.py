"""A Hypothesis state machine: random operations on lamina against a dict,
including close and reopen (with every flag), batches and snapshots.

Each run prints the failing sequence as a minimal program; freeze a find as a
regression test in test_regressions.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import lamina

# Few distinct keys so that overwrites, deletes of existing keys and range
# edges are common.
keys = st.binary(max_size=4).map(lambda b: b[:1] * (len(b) % 3) + b) | st.sampled_from(
    [b"", b"a", b"ab", b"b", b"\xff", b"\x00"]
)
values = st.binary(max_size=64)
bounds = st.none() | keys


class LaminaVsDict(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="lamina-model-")
        self.path = os.path.join(self.dir, "db")
        self.db = lamina.open(self.path, "n")
        self.model: dict[bytes, bytes] = {}
        self.snap = None
        self.snap_model: dict[bytes, bytes] = {}

    def teardown(self) -> None:
        if self.snap is not None:
            self.snap.close()
        self.db.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule(k=keys, v=values)
    def put(self, k, v):
        self.db[k] = v
        self.model[k] = v

    @rule(k=keys)
    def delete(self, k):
        if k in self.model:
            del self.db[k]
            del self.model[k]
        else:
            try:
                del self.db[k]
            except KeyError:
                pass
            else:
                raise AssertionError("del of a missing key did not raise KeyError")

    @rule(k=keys)
    def get(self, k):
        assert self.db.get(k) == self.model.get(k)
        assert (k in self.db) == (k in self.model)

    @rule(k=keys, v=values)
    def setdefault(self, k, v):
        assert self.db.setdefault(k, v) == self.model.setdefault(k, v)

    @rule(ops=st.lists(st.tuples(keys, st.none() | values), max_size=8), fail=st.booleans())
    def batch(self, ops, fail):
        try:
            with self.db.batch() as b:
                for k, v in ops:
                    if v is None:
                        b.delete(k)
                    else:
                        b[k] = v
                if fail:
                    raise ValueError("abandon")
        except ValueError:
            return
        for k, v in ops:
            if v is None:
                self.model.pop(k, None)
            else:
                self.model[k] = v

    @rule(k=keys, n=st.integers(-5, 5))
    def increment(self, k, n):
        old = self.model.get(k, (0).to_bytes(8, "little"))
        if len(old) != 8:
            return  # folding onto a non-counter fails at read time; not modelled
        self.db.increment(k, n)
        self.model[k] = ((int.from_bytes(old, "little") + n) % 2**64).to_bytes(8, "little")

    @rule(start=bounds, stop=bounds, prefix=st.none() | st.binary(max_size=2), reverse=st.booleans())
    def scan(self, start, stop, prefix, reverse):
        want = sorted(
            k
            for k in self.model
            if (start is None or k >= start) and (stop is None or k < stop) and (prefix is None or k.startswith(prefix))
        )
        if reverse:
            want.reverse()
        assert self.db.keys(start, stop, prefix=prefix, reverse=reverse) == want
        assert list(self.db.iterator(start, stop, prefix=prefix, reverse=reverse, keys=False)) == [
            self.model[k] for k in want
        ]

    @rule()
    def take_snapshot(self):
        if self.snap is not None:
            self.snap.close()
        self.snap = self.db.snapshot()
        self.snap_model = dict(self.model)

    @precondition(lambda self: self.snap is not None)
    @rule()
    def read_snapshot(self):
        assert self.snap.items() == sorted(self.snap_model.items())

    @rule(flag=st.sampled_from(["c", "w", "cf", "cs", "r"]))
    def reopen(self, flag):
        if self.snap is not None:
            self.snap.close()
            self.snap = None
        self.db.close()
        self.db = lamina.open(self.path, flag)
        if flag == "r":
            # Check everything read-only, then reopen for writing.
            assert self.db.items() == sorted(self.model.items())
            self.db.close()
            self.db = lamina.open(self.path, "w")

    @rule()
    def reorganize(self):
        self.db.reorganize()

    @rule()
    def walk_with_firstkey_nextkey(self):
        seen = []
        k = self.db.firstkey()
        while k is not None:
            seen.append(k)
            k = self.db.nextkey(k)
        assert seen == sorted(self.model)

    @invariant()
    def same_length(self):
        assert len(self.db) == len(self.model)
        assert bool(self.db) == bool(self.model)


LaminaVsDict.TestCase.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
test_lamina_behaves_like_a_dict = LaminaVsDict.TestCase
