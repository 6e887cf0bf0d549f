"""The tasks of ``to_lamina`` that run on the workers: each partition's rows
as records of encoded keys and values, the sampled boundaries that
range-partition them by key, one table written per partition, and its
upload to the staging area when there is one."""

from __future__ import annotations

import bisect
import os
import pickle
import shutil
import tempfile
from typing import Any

import lamina

import numpy as np
import pandas as pd

from ._keys import KeyEncoding, _encode_keys
from ._values import ValueFormat, _encode_values

#: Positions of rows in the frame: partition number << 32 | row in partition.
_ROW_BITS = 32
#: Keys each input partition contributes to choosing the table boundaries.
_SAMPLES = 256


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
