"""Random operation logs run on lamina and on each peer dbm module; every
result (value or exception class) and the final contents must agree.

The log is built from the seed alone, so a failure names a reproducible case.
"""

from __future__ import annotations

import os
import random

import pytest
from conftest import PEERS

import lamina

OTHERS = [p for p in PEERS if p.name != "lamina"]


def _ops(seed: int, n: int = 300):
    rng = random.Random(seed)
    keys = [b"k%d" % i for i in range(20)] + ["s%d" % i for i in range(5)] + [b"", ""]
    for _ in range(n):
        kind = rng.choice(["set", "set", "get", "getdef", "del", "in", "len", "setdefault", "keys", "reopen"])
        key = rng.choice(keys)
        value = rng.choice([b"", b"v", os.urandom(rng.randrange(1, 200)), "text-é"])
        yield kind, key, value


def _apply(db, kind, key, value):
    try:
        if kind == "set":
            db[key] = value
            return None
        if kind == "get":
            return db[key]
        if kind == "getdef":
            return db.get(key, b"default")
        if kind == "del":
            del db[key]
            return None
        if kind == "in":
            return key in db
        if kind == "len":
            return len(db)
        if kind == "setdefault":
            return db.setdefault(key, b"sd")
        if kind == "keys":
            return sorted(db.keys())
    except Exception as e:  # noqa: BLE001 - the class is compared
        return type(e).__name__
    raise AssertionError(kind)


@pytest.mark.parametrize("other", OTHERS, ids=[p.name for p in OTHERS])
@pytest.mark.parametrize("seed", range(6))
def test_same_results_as_peer(tmp_path, other, seed):
    paths = {"lamina": str(tmp_path / "lamina"), "other": str(tmp_path / "other")}
    mods = {"lamina": lamina, "other": other.mod}
    dbs = {name: mods[name].open(paths[name], "c") for name in mods}
    try:
        for step, (kind, key, value) in enumerate(_ops(seed)):
            if kind == "reopen":
                for name in dbs:
                    dbs[name].close()
                    dbs[name] = mods[name].open(paths[name], "w")
                continue
            got = {name: _apply(db, kind, key, value) for name, db in dbs.items()}
            assert got["lamina"] == got["other"], f"seed {seed} step {step}: {kind} {key!r}"
        final = {name: {k: db[k] for k in db.keys()} for name, db in dbs.items()}
        assert final["lamina"] == final["other"]
    finally:
        for db in dbs.values():
            db.close()
