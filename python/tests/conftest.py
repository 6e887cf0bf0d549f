"""Fixtures: a fresh database path, and the dbm modules for differential tests."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from peers import Peer, all_peers  # noqa: E402

PEERS = all_peers()


@pytest.fixture(params=PEERS, ids=[p.name for p in PEERS])
def peer(request: pytest.FixtureRequest) -> Peer:
    """Each dbm module in turn: lamina, dbm.dumb, and dbm.gnu where installed."""
    return request.param


@pytest.fixture
def path(tmp_path) -> str:
    """A path where no database exists yet."""
    return str(tmp_path / "db")


@pytest.fixture
def db(path):
    """A new, empty lamina database, closed after the test."""
    import lamina

    d = lamina.open(path, "c")
    yield d
    d.close()
