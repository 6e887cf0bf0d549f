"""How ``lamina.dask`` turns keys into bytes and back: the key encodings
(``KeyEncoding``), the checks of a key column's dtype before anything runs,
and the decoding of stored keys into a pandas index."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Union

import lamina

import numpy as np
import pandas as pd

#: How keys become bytes: ``"bytes"`` as they are; ``"str"`` as UTF-8;
#: ``"int"`` as 8 bytes big-endian with the sign bit flipped (so -1 < 0 < 1
#: in byte order too); ``"uint"`` as 8 bytes big-endian; or a function of
#: one key that returns bytes (for ``read_lamina``: of the bytes, that
#: returns the key).
KeyEncoding = Union[Literal["bytes", "str", "int", "uint"], Callable[[Any], Any]]

_KEY_ENCODINGS = ("bytes", "str", "int", "uint")
_SIGN = np.uint64(1 << 63)


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
