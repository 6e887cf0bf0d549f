"""lamina.dask on a real distributed cluster without shared storage: two
worker processes with their own local directories (and temporary
directory) that the caller never reads; tables reach the caller through
Dask itself or through an S3 bucket (a moto server the test starts)."""

from __future__ import annotations

import os
import random
import socket

import pytest

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")
dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")
msgpack = pytest.importorskip("msgpack")

import lamina  # noqa: E402
import lamina.dask  # noqa: E402
from dask.delayed import Delayed  # noqa: E402
from lamina.dask import read_lamina, to_lamina  # noqa: E402


@pytest.fixture(scope="module")
def worker_dirs(tmp_path_factory):
    """The workers' own directories: Dask's local_directory (one subdirectory
    per worker) and TMPDIR."""
    root = tmp_path_factory.mktemp("workers")
    (root / "local").mkdir()
    (root / "tmp").mkdir()
    return root


@pytest.fixture(scope="module")
def client(worker_dirs):
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            local_directory=str(worker_dirs / "local"),
            env={"TMPDIR": str(worker_dirs / "tmp")},
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        # Each worker has a directory of its own, apart from the caller's.
        homes = c.run(lambda dask_worker: dask_worker.local_directory)
        assert len(set(homes.values())) == 2
        assert all(h.startswith(str(worker_dirs / "local")) for h in homes.values())
        tmps = c.run(lambda: __import__("tempfile").gettempdir())
        assert set(tmps.values()) == {str(worker_dirs / "tmp")}
        yield c


class _Watched:
    """A database opened by the caller: every file it ingests must be one the
    caller wrote itself, in its own directory beside the database."""

    def __init__(self, db, allowed: str, seen: list[str]):
        self._db, self._allowed, self._seen = db, allowed, seen

    def ingest(self, paths, move=False):
        paths = [os.fspath(p) for p in paths]
        for p in paths:
            assert os.path.commonpath([p, self._allowed]) == self._allowed, p
        self._seen.extend(paths)
        return self._db.ingest(paths, move=move)

    def __getattr__(self, name):
        return getattr(self._db, name)

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self._db.close()


@pytest.fixture
def driver(tmp_path, worker_dirs, monkeypatch):
    """The caller's directory; checks that the caller ingests only files it
    wrote there, and that the workers leave no table behind."""
    home = tmp_path / "driver"
    home.mkdir()
    seen: list[str] = []

    class Lamina:
        """lamina as lamina.dask's ingest sees it in this process."""

        def __getattr__(self, name):
            return getattr(lamina, name)

        @staticmethod
        def open(*args, **kwargs):
            return _Watched(lamina.open(*args, **kwargs), str(home), seen)

    monkeypatch.setattr(lamina.dask._ingest, "lamina", Lamina())
    yield home
    left = [os.path.join(d, f) for d, _, files in os.walk(worker_dirs) for f in files if f.endswith(".sst")]
    assert left == []


def levels(path: str) -> dict[int, int]:
    """Tables per level, for the levels that hold any."""
    with lamina.open(path, "r") as db:
        return {lv["level"]: lv["tables"] for lv in db.stats()["levels"] if lv["tables"]}


#: Rows are generated on the workers, chunk by chunk, in a scrambled order:
#: row j of the frame is record (j * STRIDE) mod N (STRIDE is prime to N).
N = 20_000
STRIDE = 7_919
CHUNKS = 4


def chunk(c: int) -> pd.DataFrame:
    size = N // CHUNKS
    ids = [(j * STRIDE) % N for j in range(c * size, (c + 1) * size)]
    return pd.DataFrame({"k": [f"{i:07d}" for i in ids], "v": [f"v{i}" for i in ids]})


def test_unsorted_rows_land_whole_in_tables_that_do_not_overlap(driver, client):
    path = str(driver / "calls.lamina")
    ddf = dd.from_map(chunk, range(CHUNKS))

    assert to_lamina(ddf, path, key="k", value="v", key_encoding="str") == N
    # The caller's copies of the tables are gone.
    assert sorted(p.name for p in driver.iterdir()) == ["calls.lamina"]
    with lamina.open(path, "r") as db:
        assert len(db) == N
        for i in random.Random(8).sample(range(N), 200):
            assert db[f"{i:07d}"] == f"v{i}".encode()
    # Range-partitioned by key: the tables overlap neither each other nor
    # anything else, so none lands in level 0.
    lv = levels(path)
    assert 0 not in lv and sum(lv.values()) == CHUNKS


def test_read_lamina_head_and_divisions(driver, client):
    path = str(driver / "db")
    with lamina.open(path, "c"):
        pass
    files = []
    for t in range(3):
        files.append(str(driver / f"t{t}.sst"))
        with lamina.TableWriter(files[-1]) as w:
            w.put(f"k{t}a", "x")
            w.put(f"k{t}b", "y")
    with lamina.open(path, "w") as db:
        db.ingest(files, move=True)
        del db["k1a"]  # a partition may start where a table's first key is gone

    ddf = read_lamina(path)
    assert ddf.known_divisions
    assert ddf.divisions == (b"k0a", b"k1b", b"k2a", b"k2b")
    assert ddf.map_partitions(len).compute().tolist() == [2, 1, 2]
    head = ddf.head(2)
    assert list(head.index) == [b"k0a", b"k0b"] and list(head["value"]) == [b"x", b"y"]
    assert list(ddf.loc[b"k1b":b"k2a"].compute()["value"]) == [b"y", b"x"]
    assert len(read_lamina(path, npartitions=1).compute()) == 5
    assert read_lamina(path, npartitions=2).npartitions == 2

    # Records still in the write-ahead log, in no table: one partition.
    recent = str(driver / "recent")
    with lamina.open(recent, "c") as db:
        db.update({"b": "2", "a": "1"})
    small = read_lamina(recent, value_format="str")
    assert small.divisions == (b"a", b"b")
    assert small.head().to_dict() == {"value": {b"a": "1", b"b": "2"}}


def test_integer_keys_read_back_in_numeric_order(driver, client):
    path = str(driver / "ints")
    ids = [10, 2, -3, 1, -(2**63), 2**63 - 1, 0, 100, 7, -1]
    frame = pd.DataFrame({"id": ids, "name": [f"n{i}" for i in ids]})
    assert (
        to_lamina(dd.from_pandas(frame, npartitions=3), path, key="id", value="name", key_encoding="int", npartitions=2)
        == 10
    )
    with lamina.open(path, "r") as db:
        # Byte order is numeric order: 8 bytes, sign bit flipped.
        assert db.keys()[:3] == [b"\x00" * 8, (2**63 - 3).to_bytes(8, "big"), (2**63 - 1).to_bytes(8, "big")]
    assert 0 not in levels(path)

    back = read_lamina(path, key_encoding="int", value_format="str")
    assert back.known_divisions and back.divisions[0] == -(2**63) and back.divisions[-1] == 2**63 - 1
    got = back.compute()
    assert list(got.index) == sorted(ids)
    assert list(got["value"]) == [f"n{i}" for i in sorted(ids)]
    assert got.index.dtype == np.int64


def test_a_frame_sorted_by_key_writes_one_table_per_partition(driver, client):
    path = str(driver / "sorted")
    frame = pd.DataFrame({"id": np.arange(1000, dtype=np.int64), "v": [f"{i}" for i in range(1000)]}).set_index("id")
    ddf = dd.from_pandas(frame, npartitions=4)
    assert ddf.known_divisions
    assert to_lamina(ddf, path, value="v", key_encoding="uint") == 1000
    assert levels(path) == {6: 4}
    got = read_lamina(path, key_encoding="uint", value_format="str").compute()
    assert list(got.index) == list(range(1000))


def test_several_columns_round_trip_as_rows(driver, client):
    path = str(driver / "rows")
    frame = pd.DataFrame(
        {
            "id": [3, 1, 2, 4],
            "price": [1.5, np.nan, 2.25, -0.5],
            "qty": np.array([7, 8, 9, 10], dtype=np.int64),
            "name": ["c", "a", None, "d"],
            "raw": [b"\x00\xff", b"", b"x", b"y"],
            "ok": [True, False, True, True],
            "when": pd.to_datetime(["2024-01-01 00:00", None, "2024-03-01 12:00", "2024-04-01 00:00"]),
        }
    )
    with dask.config.set({"dataframe.convert-string": False}):  # keep bytes as bytes
        ddf = dd.from_pandas(frame, npartitions=2)
    assert to_lamina(ddf, path, key="id", key_encoding="int") == 4

    back = read_lamina(path, key_encoding="int", value_format="msgpack")
    assert back.known_divisions
    got = back.compute()
    want = frame.set_index("id").sort_index()
    want.index.name = "key"
    want["when"] = want["when"].astype("datetime64[ns]")
    assert list(got.columns) == ["price", "qty", "name", "raw", "ok", "when"]
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert got["qty"].dtype == np.int64 and got["ok"].dtype == bool and got["when"].dtype == "datetime64[ns]"
    # One msgpack map per row; a null is nil (never b'nan').
    with lamina.open(path, "r") as db:
        row = msgpack.unpackb(db[(2**63 + 1).to_bytes(8, "big")])
    assert row["price"] is None and row["name"] == "a" and row["qty"] == 8 and row["raw"] == b""

    # Some of the columns, written and read.
    part = str(driver / "part")
    to_lamina(ddf, part, key="id", value=["qty", "name"], key_encoding="int")
    got = read_lamina(part, key_encoding="int", value_format="msgpack", columns=["name"]).compute()
    assert list(got.columns) == ["name"]
    assert got["name"].iloc[0] == "a" and pd.isna(got["name"].iloc[1])


def test_clear_errors_before_and_while_writing(driver, client):
    path = str(driver / "refused")
    frame = pd.DataFrame({"k": ["a", "b", None], "n": [1, 2, 3], "s": ["x", None, "z"], "f": [0.5, None, 1.0]})
    ddf = dd.from_pandas(frame, npartitions=1)
    with pytest.raises(TypeError, match=r"column 'n' has dtype int64.*value=\['n'\]"):
        to_lamina(ddf, path, key="k", value="n", key_encoding="str")
    with pytest.raises(TypeError, match=r"column 'k' has dtype .*key_encoding='bytes'.*key_encoding='str'"):
        to_lamina(ddf, path, key="k", value="s")
    with pytest.raises(TypeError, match=r"column 'f' has dtype float64.*key_encoding='int'"):
        to_lamina(ddf, path, key="f", value="s", key_encoding="int")
    with pytest.raises(ValueError, match=r"column 'k' holds 1 null key"):
        to_lamina(ddf, path, key="k", value="s", key_encoding="str")
    with pytest.raises(ValueError, match=r"column 's' holds 1 null value"):
        to_lamina(ddf[ddf["k"].notnull()], path, key="k", value="s", key_encoding="str")
    with pytest.raises(ValueError, match=r"-1, which is not an unsigned 64-bit integer"):
        to_lamina(dd.from_pandas(pd.DataFrame({"s": ["x"]}, index=[-1]), npartitions=1), path, key_encoding="uint")
    assert not os.path.exists(path)
    with pytest.raises(lamina.error, match=r"the directory .*nowhere does not exist"):
        # Before any work is planned, let alone done.
        to_lamina(ddf, str(driver / "nowhere" / "db"), key="k", value="s", key_encoding="str", compute=False)
    with pytest.raises(TypeError, match=r"unexpected option\(s\) blocksize"):
        to_lamina(ddf, path, key="k", value="s", key_encoding="str", blocksize=4096)

    # A function for what the formats refuse.
    n = to_lamina(
        ddf[ddf["k"].notnull()], path, key="k", value="n", key_encoding="str", value_format=lambda x: b"%d" % x
    )
    assert n == 2
    with lamina.open(path, "r") as db:
        assert db.items() == [(b"a", b"1"), (b"b", b"2")]


def test_compute_false_writes_when_computed(driver, client):
    path = str(driver / "later")
    ddf = dd.from_map(chunk, range(CHUNKS))
    job = to_lamina(ddf, path, key="k", value="v", key_encoding="str", compute=False)
    assert isinstance(job, Delayed)
    assert not os.path.exists(path)
    assert job.compute() == N
    with lamina.open(path, "r") as db:
        assert len(db) == N

    # Computed by Dask, two at once: the ingests are the last tasks, on
    # workers of this host.
    jobs = [to_lamina(ddf, str(driver / name), key="k", value="v", key_encoding="str", compute=False) for name in "ab"]
    assert dask.compute(*jobs) == (N, N)
    for name in "ab":
        with lamina.open(str(driver / name), "r") as db:
            assert db[b"0000007"] == b"v7"
    assert sorted(p.name for p in driver.iterdir()) == ["a", "b", "later"]

    # An ingest task that runs away from the database's host refuses.
    job = to_lamina(ddf, str(driver / "far"), key="k", value="v", key_encoding="str", compute=False)
    job._plan.host = "elsewhere"
    with pytest.raises(lamina.error, match=r"database .*far is on elsewhere: call \.compute\(\)"):
        dask.compute(job)
    assert sorted(p.name for p in driver.iterdir()) == ["a", "b", "later"]


def broken(c: int) -> pd.DataFrame:
    if c == 2:
        raise RuntimeError("chunk 2 is unreadable")
    return chunk(c)


def test_a_failing_partition_leaves_nothing(driver, client):
    path = str(driver / "db")
    with lamina.open(path, "c") as db:
        db["kept"] = "yes"
    for divisions in (None, tuple(f"{i:07d}" for i in range(0, N + 1, N // CHUNKS))):
        # Unsorted (shuffled) and sorted (a table per partition) alike.
        ddf = dd.from_map(broken, range(CHUNKS), divisions=divisions)
        with pytest.raises(RuntimeError, match="chunk 2 is unreadable"):
            to_lamina(ddf, path, key="k", value="v", key_encoding="str")
        with lamina.open(path, "r") as db:
            assert db.items() == [(b"kept", b"yes")]
        assert sorted(p.name for p in driver.iterdir()) == ["db"]


def test_into_a_keyspace_of_an_existing_database(driver, client):
    path = str(driver / "db")
    with lamina.open(path, "c") as db:
        db["outside"] = "kept"
    frame = pd.DataFrame({"id": [3, 1, 2, 1], "name": ["c", "a", "b", "A"]})
    n = to_lamina(
        dd.from_pandas(frame, npartitions=2), path, key="id", value="name", key_encoding="int", keyspace="people"
    )
    # Of the two rows with id 1, the later one in the frame wins.
    assert n == 3
    with lamina.open(path, "r") as db:
        assert db["outside"] == b"kept"
        people = db.keyspace("people")
        assert people.get((2**63 + 1).to_bytes(8, "big")) == b"A"
    got = read_lamina(path, keyspace="people", key_encoding="int", value_format="str").compute()
    assert got["value"].to_dict() == {1: "A", 2: "b", 3: "c"}
    with pytest.raises(lamina.error, match="has no keyspace 'nobody'"):
        read_lamina(path, keyspace="nobody")


# --------------------------------------------------------------------------
# Staging in S3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    """An S3-compatible server on 127.0.0.1 with an empty bucket; yields
    (storage_options, boto3 client)."""
    pytest.importorskip("s3fs", reason="the S3 staging test needs s3fs (pip install s3fs)")
    pytest.importorskip("boto3", reason="the S3 staging test needs boto3 (pip install boto3)")
    server = pytest.importorskip("moto.server", reason="the S3 staging test needs moto (pip install 'moto[server]')")
    import boto3

    port = _free_port()
    moto = server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    moto.start()
    url = f"http://127.0.0.1:{port}"
    creds = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}
    s3 = boto3.client("s3", endpoint_url=url, **creds)
    s3.create_bucket(Bucket="stage")
    options = {"key": "test", "secret": "test", "client_kwargs": {"endpoint_url": url, "region_name": "us-east-1"}}
    try:
        yield options, s3
    finally:
        moto.stop()


def bucket(s3) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket="stage").get("Contents", [])]


def test_staging_in_s3(driver, client, s3):
    options, s3c = s3
    path = str(driver / "calls.lamina")
    s3c.put_object(Bucket="stage", Key="other/keep.txt", Body=b"not ours")
    ddf = dd.from_map(chunk, range(CHUNKS))

    n = to_lamina(ddf, path, key="k", value="v", key_encoding="str", staging="s3://stage/runs", storage_options=options)
    assert n == N
    with lamina.open(path, "r") as db:
        assert len(db) == N and db[b"0012345"] == b"v12345"
    assert bucket(s3c) == ["other/keep.txt"]

    # A failing partition: nothing uploaded (uploads wait for every table),
    # nothing ingested.
    sorted_ddf = dd.from_map(broken, range(CHUNKS), divisions=tuple(f"{i:07d}" for i in range(0, N + 1, N // CHUNKS)))
    with pytest.raises(RuntimeError, match="chunk 2 is unreadable"):
        to_lamina(
            sorted_ddf,
            str(driver / "new"),
            key="k",
            value="v",
            key_encoding="str",
            staging="s3://stage/runs",
            storage_options=options,
        )
    assert not os.path.exists(driver / "new")
    assert bucket(s3c) == ["other/keep.txt"]

    # Uploads that fail (no such bucket): the error, and nothing ingested.
    with pytest.raises(FileNotFoundError):
        to_lamina(
            ddf, path, key="k", value="v", key_encoding="str", staging="s3://missing/runs", storage_options=options
        )
    with lamina.open(path, "r") as db:
        assert len(db) == N
    assert sorted(p.name for p in driver.iterdir()) == ["calls.lamina"]
