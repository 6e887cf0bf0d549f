"""How ``lamina.dask`` turns values into bytes and back: the value formats
(``ValueFormat``), one column stored as it is or whole rows as msgpack maps,
the checks of a column's dtype before anything runs, and the decoding of
msgpack rows with the dtypes of their columns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Union

import lamina

import msgpack
import numpy as np
import pandas as pd

from ._keys import _STR

#: How values become bytes: ``"bytes"`` (one column of bytes, or str stored
#: as UTF-8), ``"msgpack"`` (one msgpack map of column name to cell per row),
#: ``"str"`` (``read_lamina`` only: the value decoded as UTF-8), or a function.
ValueFormat = Union[Literal["bytes", "str", "msgpack"], Callable[[Any], Any]]


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
