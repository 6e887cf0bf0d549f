"""``to_lamina``: its arguments checked against the frame before anything
runs, and the Dask graph that writes the frame as tables on the workers
and ingests them in the caller."""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from typing import Any

import lamina

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from ._ingest import LaminaWrite, _Ingest, _ingest_task
from ._keys import _KEY_ENCODINGS, KeyEncoding, _check_key_dtype
from ._tables import _all_written, _assign, _boundaries, _prepare, _sample, _summary, _upload, _write_table
from ._values import ValueFormat, _check_value_dtype

_TABLE_OPTIONS = ("block_size", "compression", "bloom_bits_per_key")


def to_lamina(
    df: dd.DataFrame | dd.Series,
    path: str | os.PathLike[str],
    *,
    key: str | None = None,
    value: str | Sequence[str] | None = None,
    key_encoding: KeyEncoding = "bytes",
    value_format: ValueFormat | None = None,
    npartitions: int | None = None,
    compute: bool = True,
    storage_options: dict[str, Any] | None = None,
    staging: str | os.PathLike[str] | None = None,
    keyspace: str | None = None,
    **table_options: Any,
) -> int | LaminaWrite:
    """Writes the rows of ``df`` as records into the lamina database at
    ``path`` (on this machine; created if missing), all or none: after an
    error, none of the frame's rows is in the database and nothing is left
    staged.

    - ``key``: the column holding the keys; ``None`` (default): the index.
      A null key is refused.
    - ``key_encoding``: ``"bytes"`` (keys are bytes, stored as they are),
      ``"str"`` (UTF-8), ``"int"`` (8 bytes big-endian with the sign bit
      flipped, so that byte order is numeric order), ``"uint"`` (8 bytes
      big-endian), or a function of a key returning bytes.
    - ``value``: one column name (its values are stored as they are when
      bytes, as UTF-8 when str; nulls refused), or a list of columns, or
      ``None`` for every column but the key: each row is stored as one
      msgpack map of column name to cell (``value_format="msgpack"``), which
      ``read_lamina(..., value_format="msgpack")`` turns back into columns.
    - ``value_format``: ``"bytes"`` (default for one column), ``"msgpack"``
      (default for rows), or a function returning bytes, given a cell (one
      column) or a dict of the row (several).
    - ``npartitions``: how many tables to build (default: the frame's
      partitions). The frame is range-partitioned by encoded key (sampled,
      then shuffled), unless it is indexed by the key with known divisions
      and an order-preserving ``key_encoding`` (not a function): then each
      partition becomes one table as it is. Of rows with equal keys, the
      last in the frame wins.
    - ``staging``: where workers put their tables for the caller: an fsspec
      URL (``"s3://bucket/prefix"``, with ``storage_options``) or a
      directory every worker and the caller reach. Default: none needed,
      the tables' bytes come back through Dask.
    - ``keyspace``: the keyspace to write into (created if missing).
    - ``table_options``: ``block_size``, ``compression``,
      ``bloom_bits_per_key``, as for ``lamina.TableWriter``.

    Returns the number of records written; with ``compute=False`` a
    ``LaminaWrite`` (a ``dask.delayed.Delayed``) that does the whole write
    when computed.
    """
    df = _as_frame(df)
    path = _database_path(path)
    _check_options(key_encoding, npartitions, staging, storage_options, table_options)
    value, value_format = _value_columns(df, key, value, value_format)
    # Errors the frame's dtypes already show: before anything runs.
    _check_dtypes(df._meta, key, value, key_encoding, value_format)
    plan = _plan(path, staging, storage_options)
    parts = _table_parts(df, key, value, key_encoding, value_format, npartitions)
    job = _write_job(plan, parts, keyspace, table_options)
    if compute:
        return job.compute()
    return job


def _as_frame(df: dd.DataFrame | dd.Series) -> dd.DataFrame:
    """``df`` as a Dask DataFrame (a Series becomes its one column); anything
    else is refused."""
    if isinstance(df, dd.Series):
        df = df.to_frame()
    if not isinstance(df, dd.DataFrame):
        raise TypeError(
            f"to_lamina takes a Dask DataFrame, not {type(df).__name__} (use dd.from_pandas for a pandas one)"
        )
    return df


def _database_path(path: str | os.PathLike[str]) -> str:
    """The database's absolute local path; a URL is refused."""
    path = os.fspath(path)
    if "://" in path:
        raise ValueError(f"the database must be a local path on this machine, not {path!r} (staging= takes URLs)")
    return os.path.abspath(path)


def _check_options(
    key_encoding: KeyEncoding,
    npartitions: int | None,
    staging: str | os.PathLike[str] | None,
    storage_options: dict[str, Any] | None,
    table_options: dict[str, Any],
) -> None:
    """Refuses the options that are wrong whatever the frame."""
    unknown = sorted(set(table_options) - set(_TABLE_OPTIONS))
    if unknown:
        raise TypeError(
            f"to_lamina got unexpected option(s) {', '.join(unknown)}; table options are {', '.join(_TABLE_OPTIONS)}"
        )
    if not (callable(key_encoding) or key_encoding in _KEY_ENCODINGS):
        raise ValueError(
            f"key_encoding must be one of {', '.join(map(repr, _KEY_ENCODINGS))} or a function, not {key_encoding!r}"
        )
    if staging is None and storage_options:
        raise ValueError("storage_options apply to staging=, which is not given")
    if npartitions is not None and npartitions < 1:
        raise ValueError(f"npartitions must be at least 1, not {npartitions}")


def _value_columns(
    df: dd.DataFrame,
    key: str | None,
    value: str | Sequence[str] | None,
    value_format: ValueFormat | None,
) -> tuple[str | list[str], ValueFormat]:
    """The value column (a name) or columns (a list), and the value format
    with its default filled in; columns the frame lacks, and a format that
    does not fit them, are refused."""
    columns = list(df.columns)
    if key is not None and key not in columns:
        raise KeyError(f"key column {key!r} is not in the frame (columns: {', '.join(map(str, columns))})")
    if value is None:
        value = [c for c in columns if c != key]
    elif not isinstance(value, str):
        value = list(value)
    for c in [value] if isinstance(value, str) else value:
        if c not in columns:
            raise KeyError(f"value column {c!r} is not in the frame (columns: {', '.join(map(str, columns))})")
    if value_format is None:
        value_format = "bytes" if isinstance(value, str) else "msgpack"
    if value_format == "bytes" and not isinstance(value, str):
        raise ValueError(
            f"value_format='bytes' stores one column, but value is {value!r}: name one column, or use 'msgpack'"
        )
    if not (callable(value_format) or value_format in ("bytes", "msgpack")):
        raise ValueError(f"value_format must be 'bytes', 'msgpack' or a function, not {value_format!r}")
    return value, value_format


def _check_dtypes(
    meta: pd.DataFrame,
    key: str | None,
    value: str | list[str],
    key_encoding: KeyEncoding,
    value_format: ValueFormat,
) -> None:
    """Refuses value and key columns whose dtypes the formats cannot store."""
    for c in [value] if isinstance(value, str) else value:
        _check_value_dtype(meta[c].dtype, c, value_format)
    _check_key_dtype((meta.index if key is None else meta[key]).dtype, key_encoding, key)


def _plan(
    path: str,
    staging: str | os.PathLike[str] | None,
    storage_options: dict[str, Any] | None,
) -> _Ingest:
    """The ingest into ``path``, with a prefix of its own under ``staging``
    when given; refused when the database's directory does not exist."""
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise lamina.error(f"cannot create the database {path}: the directory {parent} does not exist")
    plan = _Ingest(path, None, storage_options or {})
    if staging is not None:
        plan.prefix = f"{os.fspath(staging).rstrip('/')}/lamina-{uuid.uuid4().hex}"
    return plan


def _table_parts(
    df: dd.DataFrame,
    key: str | None,
    value: str | list[str],
    key_encoding: KeyEncoding,
    value_format: ValueFormat,
    npartitions: int | None,
) -> list[Any]:
    """One delayed partition of encoded records per table to write, the
    tables' key ranges overlapping none other."""
    in_order = (
        key is None
        and npartitions is None
        and df.known_divisions
        and not callable(key_encoding)
        and (key_encoding in ("bytes", "str") or pd.api.types.is_integer_dtype(df._meta.index.dtype))
    )
    # Keys and values are bytes: keep them, rather than let Dask turn object
    # columns into text.
    with dask.config.set({"dataframe.convert-string": False}):
        records_meta = pd.DataFrame(
            {"k": pd.Series([], dtype=object), "v": pd.Series([], dtype=object), "o": pd.Series([], dtype=np.int64)}
        )
        records = df.map_partitions(_prepare, key, value, key_encoding, value_format, meta=records_meta)
        if in_order:
            # Sorted by key already (known divisions), and the encoding keeps
            # that order: each partition is one table, overlapping no other.
            return records.to_delayed()
        tables = npartitions or df.npartitions
        points = dask.delayed(_boundaries)(tables, *[dask.delayed(_sample)(p) for p in records.to_delayed()])
        by_table = records.map_partitions(_assign, points, meta=records_meta.assign(t=pd.Series([], dtype=np.int64)))
        return by_table.set_index("t", divisions=list(range(tables + 1))).to_delayed()


def _write_job(plan: _Ingest, parts: list[Any], keyspace: str | None, table_options: dict[str, Any]) -> LaminaWrite:
    """The graph that writes each part as a table on a worker (staging it
    when ``plan`` has a prefix) and then ingests them all in the caller."""
    written = [dask.delayed(_write_table)(p, i, keyspace, table_options) for i, p in enumerate(parts)]
    if plan.prefix is None:
        out = written
    else:
        barrier = dask.delayed(_all_written)(*[dask.delayed(_summary)(w) for w in written])
        out = [dask.delayed(_upload)(w, barrier, plan.prefix, plan.storage_options) for w in written]
    last = dask.delayed(_ingest_task)(plan, *out)
    return LaminaWrite(last.key, last.dask, plan, out)
