"""lamina.dask on a real distributed cluster: two worker processes build the
tables of an unsorted frame, the caller ingests them; read_lamina gives the
database back."""

from __future__ import annotations

import random

import pytest

pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")

import lamina  # noqa: E402
from lamina.dask import read_lamina, to_lamina  # noqa: E402

N = 2_000_000


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def key(i: int) -> str:
    return f"{i:07d}"


#: Rows are generated on the workers, chunk by chunk, in a scrambled order:
#: row j of the frame is record (j * STRIDE) mod N (STRIDE is prime to N).
STRIDE = 1_000_003
CHUNKS = 8


def chunk(c: int) -> pd.DataFrame:
    size = N // CHUNKS
    ids = [(j * STRIDE) % N for j in range(c * size, (c + 1) * size)]
    return pd.DataFrame({"k": [key(i) for i in ids], "v": [f"v{i}" for i in ids]})


def test_two_million_unsorted_rows_land_whole_and_read_back(tmp_path, client):
    ddf = dd.from_map(chunk, range(CHUNKS))
    path = str(tmp_path / "calls.lamina")

    assert to_lamina(ddf, path, key="k", value="v") == N
    # Every worker wrote its tables; the database holds them all, and the
    # staging directory is gone.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calls.lamina"]
    with lamina.open(path, "r") as db:
        assert len(db) == N
        for i in random.Random(8).sample(range(N), 500):
            assert db[key(i)] == f"v{i}".encode()
        assert db.get(key(N)) is None
        in_db = list(db.items())

    back = read_lamina(path)
    assert back.npartitions > 1
    got = back.compute()
    assert len(got) == N
    assert list(zip(got["key"], got["value"])) == in_db

    # With a partition count: the same records, in that many partitions or fewer.
    four = read_lamina(path, npartitions=4)
    assert 1 < four.npartitions <= 4
    assert four.map_partitions(len).compute().sum() == N


def test_into_a_keyspace_of_an_existing_database(tmp_path, client):
    path = str(tmp_path / "db")
    with lamina.open(path, "c") as db:
        db["outside"] = "kept"
    frame = pd.DataFrame({"id": [3, 1, 2, 1], "name": ["c", "a", "b", "A"]})
    n = to_lamina(dd.from_pandas(frame, npartitions=2), path, key="id", value="name", keyspace="people")
    # Of the two rows with id 1, one survives.
    assert n == 3
    with lamina.open(path, "r") as db:
        assert db["outside"] == b"kept"
        people = db.keyspace("people")
        assert sorted(people.keys()) == [b"1", b"2", b"3"]
        assert people[b"2"] == b"b"
    got = read_lamina(path, keyspace="people").compute()
    assert list(got["key"]) == [b"1", b"2", b"3"]
