"""``read_lamina``: the partitions planned at the database's tables (or
``npartitions`` of about equal size), the frame's empty form given or found
from sampled records, and each partition's key range read into a pandas
DataFrame when Dask computes it."""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from itertools import islice
from typing import Any

import lamina

import dask
import dask.dataframe as dd
import pandas as pd

from ._keys import _KEY_ENCODINGS, _STR, KeyEncoding, _decode_keys, _is_utf8
from ._values import ValueFormat, _row_dtype, _unpack

#: Rows read_lamina decodes at the start of each of a few partitions to find
#: the dtypes of msgpack columns.
_META_ROWS = 100
_META_PARTS = 8


class _ReadRange:
    """One partition of ``read_lamina``: the records in ``[start, stop)`` (the
    last partition: from ``start`` to the last key at planning time)."""

    def __init__(
        self,
        path: str,
        keyspace: str | None,
        last: bytes | None,
        key_encoding: KeyEncoding,
        value_format: ValueFormat,
        meta: pd.DataFrame,
    ):
        self.path = path
        self.keyspace = keyspace
        self.last = last
        self.key_encoding = key_encoding
        self.value_format = value_format
        self.meta = meta

    def __dask_tokenize__(self) -> Any:
        return (
            type(self).__name__,
            self.path,
            self.keyspace,
            self.last,
            self.key_encoding,
            self.value_format,
            dask.base.tokenize(self.meta),
        )

    def __call__(self, bounds: tuple[bytes | None, bytes | None], columns: list[str] | None = None) -> pd.DataFrame:
        start, stop = bounds
        with lamina.open(self.path, "r") as db:
            items = _keyspace(db, self.keyspace, self.path).items(start, stop)
        if stop is None and self.last is not None:
            # Keys written after read_lamina planned lie beyond the last
            # division: leave them out, as the divisions promise.
            items = items[: bisect.bisect_right([k for k, _ in items], self.last)]
        return _frame(
            [k for k, _ in items], [v for _, v in items], self.key_encoding, self.value_format, self.meta, columns
        )


def _frame(
    keys: list[bytes],
    values: list[bytes],
    key_encoding: KeyEncoding,
    value_format: ValueFormat,
    meta: pd.DataFrame,
    columns: list[str] | None = None,
) -> pd.DataFrame:
    index = _decode_keys(keys, key_encoding)
    if not len(index):
        index = meta.index[:0]
    wanted = list(meta.columns) if columns is None else list(columns)
    if value_format == "msgpack":
        rows = [_unpack(v) for v in values]
        data = {}
        for c in wanted:
            cells = [r.get(c) for r in rows]
            dtype = meta[c].dtype
            try:
                data[c] = pd.Series(cells, dtype=dtype, index=index)
            except (TypeError, ValueError) as e:
                raise ValueError(
                    f"column {c!r} holds values that do not fit dtype {dtype}, which read_lamina found in the rows it "
                    f"sampled ({e}): pass meta={{{c!r}: <dtype>}} (e.g. 'Int64' or 'float64' for integers with nulls)"
                ) from None
        return pd.DataFrame(data, index=index, columns=wanted)
    col: pd.Series
    if value_format == "bytes":
        col = pd.Series(values, dtype=object, index=index)
    elif value_format == "str":
        try:
            col = pd.Series([v.decode("utf-8") for v in values], dtype=_STR, index=index)
        except UnicodeDecodeError:
            at = next(k for k, v in zip(keys, values) if not _is_utf8(v))
            raise lamina.error(
                f"the value of key {at!r} is not UTF-8 text: read it with value_format='bytes'"
            ) from None
    else:
        col = pd.Series([value_format(v) for v in values], dtype=meta["value"].dtype, index=index)
    return pd.DataFrame({"value": col}, index=index)[wanted]


def _keyspace(db: lamina.Db, name: str | None, path: str) -> lamina.Keyspace:
    if name is None:
        return db
    try:
        return db.keyspace(name, create=False)
    except KeyError:
        raise lamina.error(
            f"{path} has no keyspace {name!r} (it has: {', '.join(map(repr, db.keyspaces())) or 'none'})"
        ) from None


def _split_points(ranges: list[tuple[bytes, int]], npartitions: int | None) -> list[bytes]:
    """Keys at which partitions may start (besides the first): every table's
    first key, or with ``npartitions`` those that cut the entries into about
    that many equal parts."""
    starts = sorted({lo for lo, _ in ranges})
    if npartitions is None or npartitions > len(starts):
        return starts
    total = sum(n for _, n in ranges) or 1
    points: list[bytes] = []
    seen = 0
    for lo, n in sorted(ranges):
        # A table starts a new partition once the tables before it hold
        # the next share of the entries.
        if seen and seen * npartitions >= total * (len(points) + 1) and (not points or lo > points[-1]):
            points.append(lo)
        seen += n
    return points[: max(0, npartitions - 1)]


def _meta(
    samples: list[tuple[bytes, bytes]], key_encoding: KeyEncoding, value_format: ValueFormat, meta: Any
) -> pd.DataFrame:
    """The frame's empty form: given (``meta``), or found from sampled records."""
    if callable(key_encoding):
        index = pd.Index([key_encoding(k) for k, _ in samples[:1]], name="key")[:0]
    else:
        index = _decode_keys([], key_encoding)
    if value_format in ("bytes", "str"):
        if meta is not None:
            raise ValueError(
                f"meta= is for value_format='msgpack' or a function; value_format={value_format!r} gives one column 'value'"
            )
        dtype = object if value_format == "bytes" else _STR
        return pd.DataFrame({"value": pd.Series([], dtype=dtype)}, index=index)
    if meta is not None:
        given = (
            meta
            if isinstance(meta, pd.DataFrame)
            else pd.DataFrame({c: pd.Series([], dtype=t) for c, t in dict(meta).items()})
        )
        if callable(value_format) and list(given.columns) != ["value"]:
            raise ValueError("with value_format=<function>, meta= describes the one column 'value'")
        return given.iloc[:0].set_axis(index, axis=0)
    if callable(value_format):
        dtype = pd.Series([value_format(v) for _, v in samples]).dtype if samples else object
        return pd.DataFrame({"value": pd.Series([], dtype=dtype)}, index=index)
    rows = [_unpack(v) for _, v in samples]
    names: dict[str, None] = {}
    for r in rows:
        names.update(dict.fromkeys(r))
    return pd.DataFrame({c: pd.Series([], dtype=_row_dtype([r.get(c) for r in rows])) for c in names}, index=index)


def read_lamina(
    path: str | os.PathLike[str],
    keyspace: str | None = None,
    npartitions: int | None = None,
    columns: Sequence[str] | None = None,
    *,
    key_encoding: KeyEncoding = "bytes",
    value_format: ValueFormat = "bytes",
    meta: pd.DataFrame | dict[str, Any] | None = None,
) -> dd.DataFrame:
    """The records of the database at ``path`` (of ``keyspace``) as a Dask
    DataFrame indexed by key (named ``key``), in key order, with known
    divisions: one partition per table, or ``npartitions`` of about equal
    size, split at table boundaries; every partition holds at least one
    record, the first starts at the first key.

    - ``key_encoding``: how to decode keys, as ``to_lamina`` encoded them
      (``"bytes"``, ``"str"``, ``"int"``, ``"uint"``, or a function of the
      bytes; divisions are known when the function keeps the order).
    - ``value_format``: ``"bytes"`` (a column ``value`` of bytes), ``"str"``
      (``value`` decoded as UTF-8), ``"msgpack"`` (one column per field of
      the rows ``to_lamina`` wrote), or a function of the bytes (column
      ``value``).
    - ``columns``: the columns to read.
    - ``meta``: the columns' dtypes (an empty pandas DataFrame or a dict),
      for ``"msgpack"`` or a function; by default found from the first rows
      of a few partitions.

    The database must be reachable at ``path`` by this process (which plans
    the partitions) and by the workers (each partition opens it read-only
    when computed and reads its key range).
    """
    path = os.path.abspath(os.fspath(path))
    if not (callable(key_encoding) or key_encoding in _KEY_ENCODINGS):
        raise ValueError(
            f"key_encoding must be one of {', '.join(map(repr, _KEY_ENCODINGS))} or a function, not {key_encoding!r}"
        )
    if not (callable(value_format) or value_format in ("bytes", "str", "msgpack")):
        raise ValueError(f"value_format must be 'bytes', 'str', 'msgpack' or a function, not {value_format!r}")
    if npartitions is not None and npartitions < 1:
        raise ValueError(f"npartitions must be at least 1, not {npartitions}")
    with lamina.open(path, "r") as db:
        ks = _keyspace(db, keyspace, path)
        first = ks.firstkey()
        starts: list[bytes] = []
        last = None
        if first is not None:
            cursor = ks.cursor()
            cursor.last()
            last = cursor.key()
            # Every partition starts at a key the database holds, so none is
            # empty; a table's first key may have been deleted since.
            starts = [first]
            for point in _split_points(lamina._lamina._table_ranges(path, keyspace), npartitions):
                if point <= starts[-1]:
                    continue
                if not cursor.seek(point):
                    break
                k = cursor.key()
                assert k is not None
                if k > starts[-1]:
                    starts.append(k)
        samples: list[tuple[bytes, bytes]] = []
        if (value_format not in ("bytes", "str") and meta is None) or callable(key_encoding):
            step = max(1, len(starts) // _META_PARTS)
            for s in starts[::step][:_META_PARTS]:
                samples.extend(islice(ks.iterator(s), _META_ROWS))
    empty = _meta(samples, key_encoding, value_format, meta)
    if columns is not None:
        columns = [columns] if isinstance(columns, str) else list(columns)
        missing = [c for c in columns if c not in empty.columns]
        if missing:
            raise KeyError(
                f"column(s) {', '.join(map(repr, missing))} not in the records (columns: {', '.join(map(repr, empty.columns))})"
            )
    reader = _ReadRange(path, keyspace, last, key_encoding, value_format, empty)
    bounds: list[tuple[bytes | None, bytes | None]] = list(zip(starts, [*starts[1:], None])) or [(None, None)]
    divisions: tuple[Any, ...] | None = None
    if starts:
        assert last is not None
        edges = list(_decode_keys([*starts, last], key_encoding))
        firsts = edges[:-1]
        # A key_encoding function need not keep the order: then the
        # divisions are unknown.
        if all(a < b for a, b in zip(firsts, firsts[1:])) and firsts[-1] <= edges[-1]:
            divisions = tuple(edges)
    # Keys and values are bytes: keep them, rather than let Dask turn object
    # columns into text.
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_map(reader, bounds, meta=empty, divisions=divisions, label="read-lamina", columns=columns)
