"""lamina and Dask: write a Dask DataFrame into a lamina database, and read a
database back as a Dask DataFrame, as ``to_parquet`` and ``read_parquet`` do
for Parquet.

``to_lamina(ddf, path)`` turns every row into one record: the key from the
index (or ``key=``), encoded by ``key_encoding``; the value from one column
(``value="col"``: its bytes or UTF-8 text) or from several (``value=[...]``
or ``None`` for all: one msgpack map per row). The frame is range-partitioned
by the *encoded* key, so each partition becomes one table whose keys no other
table holds, and the caller ingests all the tables atomically. Workers need
no shared storage: by default they send the tables' bytes back through Dask,
or they upload them to ``staging`` (any fsspec URL, such as ``s3://...``)
for the caller to download.

``read_lamina(path)`` gives the records as a Dask DataFrame indexed by key,
with known divisions, one partition per table (or ``npartitions``).

Requires the optional extra: ``pip install lamina[dask]``.
"""

from __future__ import annotations

import bisect
import os
import pickle
import shutil
import socket
import tempfile
import uuid
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import Any, Literal, Union

import lamina

import dask
import dask.dataframe as dd
import msgpack
import numpy as np
import pandas as pd
from dask.delayed import Delayed

__all__ = ["KeyEncoding", "LaminaWrite", "ValueFormat", "read_lamina", "to_lamina"]

#: How keys become bytes: ``"bytes"`` as they are; ``"str"`` as UTF-8;
#: ``"int"`` as 8 bytes big-endian with the sign bit flipped (so -1 < 0 < 1
#: in byte order too); ``"uint"`` as 8 bytes big-endian; or a function of
#: one key that returns bytes (for ``read_lamina``: of the bytes, that
#: returns the key).
KeyEncoding = Union[Literal["bytes", "str", "int", "uint"], Callable[[Any], Any]]
#: How values become bytes: ``"bytes"`` (one column of bytes, or str stored
#: as UTF-8), ``"msgpack"`` (one msgpack map of column name to cell per row),
#: ``"str"`` (``read_lamina`` only: the value decoded as UTF-8), or a function.
ValueFormat = Union[Literal["bytes", "str", "msgpack"], Callable[[Any], Any]]

_KEY_ENCODINGS = ("bytes", "str", "int", "uint")
_TABLE_OPTIONS = ("block_size", "compression", "bloom_bits_per_key")
_SIGN = np.uint64(1 << 63)
#: Positions of rows in the frame: partition number << 32 | row in partition.
_ROW_BITS = 32
#: Keys each input partition contributes to choosing the table boundaries.
_SAMPLES = 256
#: Rows read_lamina decodes at the start of each of a few partitions to find
#: the dtypes of msgpack columns.
_META_ROWS = 100
_META_PARTS = 8


# --------------------------------------------------------------------------
# Keys


def _where(name: str | None) -> str:
    return "the index" if name is None else f"column {name!r}"


def _encode_keys(keys: pd.Series | pd.Index, encoding: KeyEncoding, name: str | None) -> list[bytes]:
    """The keys ``keys`` (the index, or the column ``name``) as bytes."""
    nulls = int(pd.isna(keys).sum()) if len(keys) else 0
    if nulls and not callable(encoding):
        raise ValueError(
            f"{_where(name)} holds {nulls} null key(s) (None/NaN/NA): a key cannot be null; drop or fill those rows first"
        )
    if callable(encoding):
        out = [encoding(k) for k in keys.tolist()]
        for k in out:
            if not isinstance(k, bytes):
                raise TypeError(
                    f"key_encoding function returned {type(k).__name__} for {_where(name)}: it must return bytes"
                )
        return out
    if encoding in ("int", "uint"):
        return _encode_ints(keys, encoding, name)
    vals = keys.tolist()
    want = bytes if encoding == "bytes" else str
    for v in vals:
        if not isinstance(v, want):
            hint = {
                "bytes": "key_encoding='str' stores text as UTF-8, 'int' integers in numeric order",
                "str": "key_encoding='bytes' stores bytes, 'int' integers in numeric order",
            }[encoding]
            raise TypeError(
                f"{_where(name)} holds {type(v).__name__} keys (dtype {keys.dtype}), but key_encoding={encoding!r} "
                f"takes {want.__name__} only: {hint}, or pass a function that returns bytes"
            )
    if encoding == "str":
        return [v.encode("utf-8") for v in vals]
    return vals


def _check_key_dtype(dtype: Any, encoding: KeyEncoding, name: str | None) -> None:
    """Refuses, before anything runs, keys whose dtype the encoding cannot take."""
    if callable(encoding) or dtype == object:
        return
    if encoding == "bytes":
        ok = "binary" in str(dtype)
        hint = "key_encoding='str' stores text as UTF-8, 'int' integers in numeric order"
        if pd.api.types.is_string_dtype(dtype):
            hint += (
                " (if these were bytes, Dask made them text: build the frame inside "
                "dask.config.set({'dataframe.convert-string': False}))"
            )
    elif encoding == "str":
        ok = pd.api.types.is_string_dtype(dtype)
        hint = "key_encoding='int' stores integers in numeric order"
    else:
        ok = pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        hint = "key_encoding='str' stores text as UTF-8"
    if not ok:
        raise TypeError(
            f"{_where(name)} has dtype {dtype}, which key_encoding={encoding!r} does not take: {hint}, "
            "or pass a function that returns bytes"
        )


def _encode_ints(keys: pd.Series | pd.Index, encoding: str, name: str | None) -> list[bytes]:
    dtype = keys.dtype
    if pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        vals: Sequence[int] | np.ndarray = keys.to_numpy()
    elif dtype == object and all(isinstance(v, int) and not isinstance(v, bool) for v in keys.tolist()):
        vals = keys.tolist()
    else:
        raise TypeError(
            f"{_where(name)} has dtype {dtype}, but key_encoding={encoding!r} takes integers: "
            "use key_encoding='str' or 'bytes', or a function that returns bytes"
        )
    if len(vals) == 0:
        return []
    lo, hi = (-(1 << 63), (1 << 63) - 1) if encoding == "int" else (0, (1 << 64) - 1)
    small, big = int(min(vals)), int(max(vals))
    if small < lo or big > hi:
        bad = small if small < lo else big
        kind = "a signed" if encoding == "int" else "an unsigned"
        other = "'uint'" if encoding == "int" else "'int'"
        raise ValueError(
            f"{_where(name)} holds {bad}, which is not {kind} 64-bit integer (key_encoding={encoding!r}; try {other})"
        )
    if encoding == "int":
        u = np.asarray(vals, dtype=np.int64).view(np.uint64) ^ _SIGN
    else:
        u = np.asarray(vals, dtype=np.uint64)
    buf = u.astype(">u8").tobytes()
    return [buf[i : i + 8] for i in range(0, len(buf), 8)]


def _decode_keys(keys: list[bytes], encoding: KeyEncoding) -> pd.Index:
    if callable(encoding):
        return pd.Index([encoding(k) for k in keys], name="key")
    if encoding == "bytes":
        return pd.Index(keys, dtype=object, name="key")
    if encoding == "str":
        try:
            return pd.Index([k.decode("utf-8") for k in keys], dtype=_STR, name="key")
        except UnicodeDecodeError:
            bad = next(k for k in keys if not _is_utf8(k))
            raise lamina.error(
                f"key {bad!r} is not UTF-8 text, so it was not written with key_encoding='str': read it with key_encoding='bytes'"
            ) from None
    for k in keys:
        if len(k) != 8:
            raise lamina.error(
                f"key {k!r} is {len(k)} bytes, not 8, so it was not written with key_encoding={encoding!r}: "
                "read it with key_encoding='bytes'"
            )
    u = np.frombuffer(b"".join(keys), dtype=">u8").astype(np.uint64)
    if encoding == "int":
        return pd.Index((u ^ _SIGN).view(np.int64), dtype=np.int64, name="key")
    return pd.Index(u, dtype=np.uint64, name="key")


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


#: The dtype pandas gives a column of str (``str`` in pandas 3, object before).
_STR = pd.Series(["x"]).dtype


# --------------------------------------------------------------------------
# Values


def _check_value_dtype(dtype: Any, name: str, value_format: ValueFormat) -> None:
    """Refuses, before anything runs, a column its value format cannot store."""
    if callable(value_format):
        return
    if value_format == "bytes":
        if not (dtype == object or pd.api.types.is_string_dtype(dtype)):
            raise TypeError(
                f"column {name!r} has dtype {dtype}, but value_format='bytes' stores bytes or str: "
                f"write whole rows instead (value=[{name!r}], stored as msgpack), or pass value_format=<function returning bytes>"
            )
        return
    _row_kind(dtype, name)


def _row_kind(dtype: Any, name: Any) -> str:
    """How a column of ``dtype`` goes into a msgpack row: ``datetime``,
    ``plain`` (tolist gives msgpack's types) or ``object`` (checked per cell)."""
    if not isinstance(name, str):
        raise TypeError(
            f"column {name!r} is not named by a str: value_format='msgpack' stores rows as maps of column name to cell"
        )
    if isinstance(dtype, pd.CategoricalDtype):
        return "object"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_float_dtype(dtype):
        return "plain"
    if pd.api.types.is_integer_dtype(dtype) or (pd.api.types.is_string_dtype(dtype) and dtype != object):
        return "plain"
    if dtype == object:
        return "object"
    raise TypeError(
        f"column {name!r} has dtype {dtype}, which value_format='msgpack' does not store (it stores bool, integers, "
        "floats, str, bytes, datetimes and nulls): convert the column first, or pass value_format=<function of a row dict>"
    )


def _row_cells(col: pd.Series, name: str) -> list[Any]:
    """The cells of one column as msgpack packs them; nulls become None (nil)."""
    kind = _row_kind(col.dtype, name)
    mask = col.isna().to_numpy()
    if kind == "datetime":
        idx = pd.DatetimeIndex(col)
        if idx.tz is not None:
            idx = idx.tz_convert("UTC").tz_localize(None)
        ns = idx.as_unit("ns").asi8
        return [None if m else msgpack.Timestamp.from_unix_nano(int(v)) for v, m in zip(ns, mask)]
    cells = col.tolist()
    if mask.any():
        cells = [None if m else v for v, m in zip(cells, mask)]
    if kind == "object":
        for i, v in enumerate(cells):
            if v is None or isinstance(v, (str, bytes, bool, float)):
                continue
            if isinstance(v, int):
                if not -(1 << 63) <= v < (1 << 64):
                    raise ValueError(f"column {name!r} holds {v}, beyond the 64-bit integers msgpack stores")
            elif isinstance(v, (np.integer, np.floating, np.bool_)):
                cells[i] = v.item()
            elif isinstance(v, pd.Timestamp):
                ts = v.tz_convert("UTC").tz_localize(None) if v.tz is not None else v
                cells[i] = msgpack.Timestamp.from_unix_nano(int(ts.as_unit("ns").value))
            else:
                raise TypeError(
                    f"column {name!r} (dtype {col.dtype}) holds a {type(v).__name__}, which value_format='msgpack' "
                    "does not store: convert it, or pass value_format=<function of a row dict>"
                )
    return cells


def _encode_values(part: pd.DataFrame, value: str | list[str], value_format: ValueFormat) -> list[bytes]:
    if isinstance(value, str):
        col = part[value]
        if callable(value_format):
            out = [value_format(v) for v in col.tolist()]
        elif value_format == "bytes":
            _check_value_dtype(col.dtype, value, "bytes")
            nulls = int(col.isna().sum())
            if nulls:
                raise ValueError(
                    f"column {value!r} holds {nulls} null value(s), which value_format='bytes' cannot store: "
                    f"fill or drop them first, or write rows (value=[{value!r}]), where a null is stored as msgpack nil"
                )
            out = []
            for v in col.tolist():
                if isinstance(v, str):
                    v = v.encode("utf-8")
                elif not isinstance(v, bytes):
                    raise TypeError(
                        f"column {value!r} (dtype {col.dtype}) holds a {type(v).__name__}, but value_format='bytes' "
                        f"stores bytes or str: write rows (value=[{value!r}]) or pass value_format=<function returning bytes>"
                    )
                out.append(v)
            return out
        else:
            value = [value]
    if callable(value_format) and not isinstance(value, str):
        rows = part[value].to_dict("records")
        out = [value_format(r) for r in rows]
    elif not callable(value_format):
        columns = [_row_cells(part[c], c) for c in value]
        packer = msgpack.Packer(use_bin_type=True)
        out = (
            [packer.pack(dict(zip(value, cells))) for cells in zip(*columns)]
            if columns
            else [packer.pack({})] * len(part)
        )
    for v in out:
        if not isinstance(v, bytes):
            raise TypeError(f"value_format function returned {type(v).__name__}: it must return bytes")
    return out


def _row_dtype(values: list[Any]) -> Any:
    """The dtype of a msgpack column, from a sample of its decoded cells."""
    seen = [v for v in values if v is not None]
    nulls = len(seen) < len(values)
    if not seen:
        return object
    if all(isinstance(v, bool) for v in seen):
        return "boolean" if nulls else np.dtype(bool)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in seen):
        return "Int64" if nulls else np.dtype(np.int64)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seen):
        return np.dtype(np.float64)
    if all(isinstance(v, str) for v in seen):
        return _STR
    if all(isinstance(v, pd.Timestamp) for v in seen):
        return np.dtype("datetime64[ns]")
    return object


def _unpack(raw: bytes) -> dict[str, Any]:
    row = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    if not isinstance(row, dict):
        raise lamina.error(
            f"value {raw[:40]!r} is not a msgpack map, so it was not written with value_format='msgpack'"
        )
    for k, v in row.items():
        if isinstance(v, msgpack.Timestamp):
            row[k] = pd.Timestamp(v.to_unix_nano())
    return row


# --------------------------------------------------------------------------
# Writing: tasks that run on the workers


def _prepare(
    part: pd.DataFrame,
    key: str | None,
    value: str | list[str],
    key_encoding: KeyEncoding,
    value_format: ValueFormat,
    partition_info: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """One partition as records: ``k`` and ``v`` (bytes), and ``o``, the rows'
    position in the frame (of equal keys the last row wins)."""
    keys = _encode_keys(part.index if key is None else part[key], key_encoding, key)
    values = _encode_values(part, value, value_format)
    number = partition_info["number"] if partition_info else 0
    order = (np.int64(number) << _ROW_BITS) + np.arange(len(part), dtype=np.int64)
    return pd.DataFrame(
        {"k": pd.Series(keys, dtype=object), "v": pd.Series(values, dtype=object), "o": order},
        index=pd.RangeIndex(len(part)),
    )


def _sample(records: pd.DataFrame) -> tuple[int, list[bytes]]:
    """Evenly spaced keys of one partition, and how many rows it has."""
    keys = sorted(records["k"].tolist())
    if len(keys) <= _SAMPLES:
        return len(keys), keys
    step = len(keys) / _SAMPLES
    return len(keys), [keys[int(i * step)] for i in range(_SAMPLES)]


def _boundaries(tables: int, *samples: tuple[int, list[bytes]]) -> list[bytes]:
    """Keys at which tables 1..tables-1 start: quantiles of the sampled keys,
    each weighted by the rows it stands for."""
    weighted = sorted((k, rows / len(keys)) for rows, keys in samples for k in keys)
    total = sum(w for _, w in weighted)
    points: list[bytes] = []
    seen = 0.0
    for k, w in weighted:
        if len(points) == tables - 1:
            break
        if seen >= total * (len(points) + 1) / tables and (not points or k > points[-1]) and k > weighted[0][0]:
            points.append(k)
        seen += w
    return points


def _assign(records: pd.DataFrame, points: list[bytes]) -> pd.DataFrame:
    """Adds ``t``, the table each record goes to."""
    t = [bisect.bisect_right(points, k) for k in records["k"].tolist()]
    return records.assign(t=np.asarray(t, dtype=np.int64))


def _scratch_dir() -> str:
    """Where this worker writes a table before sending it on: its own local
    directory (nothing another machine, or the caller, reads)."""
    try:
        from distributed import get_worker

        return get_worker().local_directory
    except (ImportError, ValueError):
        return tempfile.gettempdir()


def _write_table(
    records: pd.DataFrame, index: int, keyspace: str | None, options: dict[str, Any]
) -> dict[str, Any] | None:
    """Sorts one partition's records by key (of equal keys the last in the
    frame wins) and writes them as a table; returns its bytes and summary,
    or None if the partition is empty."""
    if len(records) == 0:
        return None
    keys, values, order = records["k"].tolist(), records["v"].tolist(), records["o"].tolist()
    rows = sorted(range(len(keys)), key=lambda i: (keys[i], order[i]))
    scratch = tempfile.mkdtemp(prefix="lamina-table-", dir=_scratch_dir())
    try:
        file = os.path.join(scratch, "table.sst")
        with lamina.TableWriter(file, keyspace=keyspace, **options) as w:
            for j, i in enumerate(rows):
                if j + 1 < len(rows) and keys[rows[j + 1]] == keys[i]:
                    continue
                w.put(keys[i], values[i])
            info = w.finish()
        with open(file, "rb") as f:
            data = f.read()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"index": index, "entries": int(info["entries"]), "data": data}


def _summary(table: dict[str, Any] | None) -> int:
    return 0 if table is None else 1


def _all_written(*written: int) -> int:
    return sum(written)


def _upload(
    table: dict[str, Any] | None, _written: int, prefix: str, storage_options: dict[str, Any]
) -> dict[str, Any] | None:
    """Uploads one table to the staging area. Runs only once every table is
    written (``_written``), so a partition that fails leaves nothing staged.
    An upload that fails is reported, not raised, so the caller cleans up
    only after every upload has ended."""
    if table is None:
        return None
    url = f"{prefix}/part-{table['index']:06d}.sst"
    try:
        fs, root = _fs(url, storage_options)
        try:
            fs.pipe_file(root, table["data"])
        except FileNotFoundError:
            # A local directory (a shared file system) needs its parent
            # made; elsewhere (a missing bucket) the error stands.
            from fsspec.implementations.local import LocalFileSystem

            if not isinstance(fs, LocalFileSystem):
                raise
            fs.makedirs(fs._parent(root), exist_ok=True)
            fs.pipe_file(root, table["data"])
    except Exception as e:  # noqa: BLE001 -- reported to the caller, which raises it
        return {"index": table["index"], "error": _portable(e), "url": url}
    return {"index": table["index"], "entries": table["entries"], "url": url}


def _portable(e: BaseException) -> BaseException:
    """``e`` if it survives pickling (to reach the caller), else its text."""
    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:  # noqa: BLE001
        return lamina.error(f"{type(e).__name__}: {e}")


def _fs(url: str, storage_options: dict[str, Any]) -> tuple[Any, str]:
    from fsspec.core import url_to_fs

    return url_to_fs(url, **storage_options)


# --------------------------------------------------------------------------
# Writing: the caller's side


class _Ingest:
    """Everything the ingest needs; runs on the database's host."""

    def __init__(self, path: str, prefix: str | None, storage_options: dict[str, Any]):
        self.path = path
        self.prefix = prefix
        self.storage_options = storage_options
        self.host = socket.gethostname()

    def local(self) -> _LocalTables:
        return _LocalTables(self)

    def clean_staging(self) -> None:
        """Removes everything this write staged (nothing if it staged nothing)."""
        if self.prefix is None:
            return
        fs, root = _fs(self.prefix, self.storage_options)
        try:
            fs.rm(root, recursive=True)
        except FileNotFoundError:
            pass
        if hasattr(fs, "invalidate_cache"):
            fs.invalidate_cache()

    def finish(self, results: Iterable[dict[str, Any] | None]) -> int:
        """Brings every table to this machine, then ingests them all; or,
        if an upload failed, removes what the others staged and raises."""
        results = list(results)
        for r in results:
            if r is not None and "error" in r:
                self.clean_staging()
                raise r["error"]
        tables = self.local()
        try:
            for r in results:
                tables.add(r)
            return tables.ingest()
        finally:
            tables.close()


class _LocalTables:
    """The caller's copies of the tables, in a directory beside the database
    (on its file system, so the ingest can link them in)."""

    def __init__(self, plan: _Ingest):
        self.plan = plan
        parent = os.path.dirname(plan.path)
        if not os.path.isdir(parent):
            raise lamina.error(f"cannot create the database {plan.path}: the directory {parent} does not exist")
        self.dir = tempfile.mkdtemp(prefix=f".{os.path.basename(plan.path)}.staging-", dir=parent)
        self.files: dict[int, tuple[str, int]] = {}

    def add(self, result: dict[str, Any] | None) -> None:
        """Writes (or downloads) one table here."""
        if result is None:
            return
        file = os.path.join(self.dir, f"part-{result['index']:06d}.sst")
        if "data" in result:
            with open(file, "wb") as f:
                f.write(result["data"])
        else:
            fs, root = _fs(result["url"], self.plan.storage_options)
            fs.get_file(root, file)
        self.files[result["index"]] = (file, result["entries"])

    def ingest(self) -> int:
        """Ingests every table at once; returns the records added."""
        plan = self.plan
        existed = os.path.exists(plan.path)
        db = lamina.open(plan.path, "c")
        try:
            files = [self.files[i][0] for i in sorted(self.files)]
            if files:
                db.ingest(files, move=True)
        except BaseException:
            db.close()
            if not existed:
                lamina.destroy(plan.path)
            raise
        db.close()
        return sum(n for _, n in self.files.values())

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.plan.clean_staging()


def _ingest_task(plan: _Ingest, *results: dict[str, Any] | None) -> int:
    """The last task of ``to_lamina(..., compute=False)`` when Dask runs it
    (``dask.compute``, ``client.compute``, ``persist``): it must run on the
    database's host."""
    if socket.gethostname() != plan.host:
        plan.clean_staging()
        raise lamina.error(
            f"to_lamina's ingest ran on {socket.gethostname()}, but the database {plan.path} is on {plan.host}: "
            "call .compute() on the object to_lamina(..., compute=False) returned, which ingests in the calling "
            "process, or use compute=True"
        )
    return plan.finish(results)


class LaminaWrite(Delayed):
    """What ``to_lamina(..., compute=False)`` returns: a Dask delayed object
    whose ``compute()`` writes every table on the cluster and then ingests
    them in the calling process, returning the number of records written.

    Computed by Dask instead (``dask.compute(w, ...)``, ``client.compute``,
    ``persist``), its last task ingests wherever Dask runs it, which must be
    the database's host (as on a ``LocalCluster``); elsewhere it raises
    ``lamina.error`` and ingests nothing.
    """

    __slots__ = ("_plan", "_parts")

    def __init__(self, key: Any, dsk: Any, plan: _Ingest, parts: list[Delayed]):
        super().__init__(key, dsk)
        self._plan = plan
        self._parts = parts

    def compute(self, **kwargs: Any) -> int:  # type: ignore[override]
        """Writes the tables on the cluster, then ingests them here."""
        plan = self._plan
        client = None if kwargs else _client()
        if client is not None and plan.prefix is None:
            return _stream(client, plan, self._parts)
        try:
            results = dask.compute(*self._parts, **kwargs)
        except BaseException:
            plan.clean_staging()
            raise
        return plan.finish(results)


def _client() -> Any:
    """The distributed Client that ``dask.compute`` would use, if any."""
    get = dask.base.get_scheduler()
    owner = getattr(get, "__self__", None)
    try:
        from distributed import Client
    except ImportError:
        return None
    return owner if isinstance(owner, Client) else None


def _stream(client: Any, plan: _Ingest, parts: list[Delayed]) -> int:
    """Fetches the tables' bytes from the workers one at a time, writing each
    beside the database as it arrives, then ingests them."""
    from distributed import as_completed

    futures = client.compute(parts)
    tables = plan.local()
    try:
        for fut in as_completed(futures):
            tables.add(fut.result())
            fut.release()
        return tables.ingest()
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        tables.close()


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
    if isinstance(df, dd.Series):
        df = df.to_frame()
    if not isinstance(df, dd.DataFrame):
        raise TypeError(
            f"to_lamina takes a Dask DataFrame, not {type(df).__name__} (use dd.from_pandas for a pandas one)"
        )
    path = os.fspath(path)
    if "://" in path:
        raise ValueError(f"the database must be a local path on this machine, not {path!r} (staging= takes URLs)")
    path = os.path.abspath(path)
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
    meta = df._meta
    for c in [value] if isinstance(value, str) else value:
        _check_value_dtype(meta[c].dtype, c, value_format)
    # Errors the frame's dtypes already show: before anything runs.
    _check_key_dtype((meta.index if key is None else meta[key]).dtype, key_encoding, key)

    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise lamina.error(f"cannot create the database {path}: the directory {parent} does not exist")
    plan = _Ingest(path, None, storage_options or {})
    if staging is not None:
        plan.prefix = f"{os.fspath(staging).rstrip('/')}/lamina-{uuid.uuid4().hex}"

    in_order = (
        key is None
        and npartitions is None
        and df.known_divisions
        and not callable(key_encoding)
        and (key_encoding in ("bytes", "str") or pd.api.types.is_integer_dtype(meta.index.dtype))
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
            parts = records.to_delayed()
        else:
            tables = npartitions or df.npartitions
            points = dask.delayed(_boundaries)(tables, *[dask.delayed(_sample)(p) for p in records.to_delayed()])
            by_table = records.map_partitions(
                _assign, points, meta=records_meta.assign(t=pd.Series([], dtype=np.int64))
            )
            parts = by_table.set_index("t", divisions=list(range(tables + 1))).to_delayed()
    written = [dask.delayed(_write_table)(p, i, keyspace, table_options) for i, p in enumerate(parts)]
    if plan.prefix is None:
        out = written
    else:
        barrier = dask.delayed(_all_written)(*[dask.delayed(_summary)(w) for w in written])
        out = [dask.delayed(_upload)(w, barrier, plan.prefix, plan.storage_options) for w in written]
    last = dask.delayed(_ingest_task)(plan, *out)
    job = LaminaWrite(last.key, last.dask, plan, out)
    if compute:
        return job.compute()
    return job


# --------------------------------------------------------------------------
# Reading


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
