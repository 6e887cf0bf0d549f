"""lamina and Dask: build a database from a Dask DataFrame on a cluster, and
read one back as a Dask DataFrame.

``to_lamina(ddf, path)`` range-partitions the frame by key on the cluster
(``set_index``, which samples quantiles and shuffles), has every worker write
each of its partitions as one table with ``lamina.TableWriter``, then ingests
all the tables into the database at ``path`` in one atomic step, on the
machine that calls it. The tables are written to a staging directory that the
workers and the caller must both reach (shared storage; by default a
directory beside the database, which suits a local cluster or a shared file
system).

``read_lamina(path)`` returns a Dask DataFrame of ``key`` and ``value``
(bytes), split at the database's table boundaries; each partition opens the
database read-only and scans its key range.

Requires the optional extra: ``pip install lamina[dask]``.
"""

from __future__ import annotations

import os
import shutil
import uuid
from typing import Any

import lamina

import dask
import dask.dataframe as dd
import pandas as pd

__all__ = ["to_lamina", "read_lamina"]


def _as_bytes(x: Any) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    return str(x).encode("utf-8")


def _write_partition(
    part: pd.DataFrame, file: str, value: str, keyspace: str | None, options: dict[str, Any]
) -> dict[str, Any] | None:
    """Writes one partition (indexed by key) as a table; None if it is empty.

    Keys are sorted again as bytes (the frame's own order may differ, e.g. for
    numbers), and of equal keys the last row wins.
    """
    if len(part) == 0:
        return None
    rows: dict[bytes, bytes] = {}
    for k, v in zip(part.index, part[value]):
        rows[_as_bytes(k)] = _as_bytes(v)
    with lamina.TableWriter(file, keyspace=keyspace, **options) as w:
        for k in sorted(rows):
            w.put(k, rows[k])
        return w.finish()


def to_lamina(
    ddf: dd.DataFrame,
    path: str | os.PathLike[str],
    key: str = "k",
    value: str = "v",
    *,
    npartitions: int | None = None,
    keyspace: str | None = None,
    staging: str | os.PathLike[str] | None = None,
    **options: Any,
) -> int:
    """Writes the ``key`` and ``value`` columns of ``ddf`` into the lamina
    database at ``path`` (created if missing), atomically: after it returns
    every row is in the database, after an error none is.

    The frame need not be sorted. ``npartitions`` sets how many tables are
    built (default: the frame's partitions). ``keyspace`` names the keyspace
    to write into. ``staging`` is the directory for the tables between the
    workers and the ingest (default: ``<path>.staging-<random>`` beside the
    database); it must be reachable by every worker and by this process, and
    is removed afterwards. ``options`` are table settings (``block_size``,
    ``compression``, ``bloom_bits_per_key``). Keys and values that are not
    bytes are stored as their UTF-8 text. Returns the number of records
    ingested.
    """
    path = os.fspath(path)
    stage = os.fspath(staging) if staging is not None else f"{path.rstrip(os.sep)}.staging-{uuid.uuid4().hex}"
    os.makedirs(stage, exist_ok=True)
    try:
        frame = ddf[[key, value]]
        parts = npartitions or frame.npartitions
        by_key = frame.set_index(key, npartitions=parts)
        tasks = [
            dask.delayed(_write_partition)(part, os.path.join(stage, f"part-{i:06}.sst"), value, keyspace, options)
            for i, part in enumerate(by_key.to_delayed())
        ]
        infos = [i for i in dask.compute(*tasks) if i is not None]
        files = [os.fspath(i["path"]) for i in infos]
        db = lamina.open(path, "c")
        try:
            if files:
                db.ingest(files, move=True)
        finally:
            db.close()
        return sum(int(i["entries"]) for i in infos)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _read_range(path: str, start: bytes | None, stop: bytes | None, keyspace: str | None) -> pd.DataFrame:
    """One partition: the records in ``[start, stop)``, from a read-only open."""
    db = lamina.open(path, "r")
    try:
        ks = db.keyspace(keyspace) if keyspace else db
        items = list(ks.items(start, stop))
    finally:
        db.close()
    return pd.DataFrame(
        {"key": pd.Series([k for k, _ in items], dtype=object), "value": pd.Series([v for _, v in items], dtype=object)}
    )


def _split_points(ranges: list[tuple[bytes, int]], npartitions: int | None) -> list[bytes]:
    """Keys at which partitions start (besides the first): every table's
    first key, or with ``npartitions`` those that cut the entries into about
    that many equal parts."""
    starts = sorted({lo for lo, _ in ranges if lo})
    if npartitions is None or npartitions > len(starts):
        return starts
    total = sum(n for _, n in ranges) or 1
    points: list[bytes] = []
    seen = 0
    for lo, n in sorted(ranges):
        # A table starts a new partition once the tables before it hold
        # the next share of the entries.
        if lo and seen * npartitions >= total * (len(points) + 1) and (not points or lo > points[-1]):
            points.append(lo)
        seen += n
    return points[: max(0, npartitions - 1)]


def read_lamina(
    path: str | os.PathLike[str], npartitions: int | None = None, *, keyspace: str | None = None
) -> dd.DataFrame:
    """The records of the database at ``path`` as a Dask DataFrame with
    columns ``key`` and ``value`` (bytes), in key order, one partition per
    table (or ``npartitions`` partitions of about equal size, split at table
    boundaries). Each partition opens the database read-only when computed:
    it sees the database as it is then.
    """
    path = os.fspath(path)
    ranges = lamina._lamina._table_ranges(path, keyspace)
    points = _split_points(ranges, npartitions)
    bounds = list(zip([None, *points], [*points, None]))
    meta = pd.DataFrame({"key": pd.Series([], dtype=object), "value": pd.Series([], dtype=object)})
    parts = [dask.delayed(_read_range)(path, lo, hi, keyspace) for lo, hi in bounds]
    # Keys and values are bytes: keep them, rather than let Dask turn object
    # columns into text.
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_delayed(parts, meta=meta)
