"""lamina: a persistent, ordered dict of bytes, and a drop-in ``dbm``.

Switch from ``dbm.gnu`` (or ``dbm.dumb``, ``semidbm``) by changing the import::

    import lamina
    with lamina.open("cache.lamina", "c") as db:
        db[b"key"] = b"value"       # str keys and values are stored UTF-8
        db.get("missing", b"")      # -> b""
        del db["key"]               # KeyError if missing

A database is a directory. Beyond dbm: ordered ranges (``items(start, stop,
prefix=..., reverse=...)``, ``iterator(...)``), ``snapshot()``, atomic
``batch()``, ``increment()`` counters, ``get_many``/``update``, named
keyspaces, ``stats()``. The work is done in Rust (``lamina._lamina``), with
the GIL released around engine calls that may block; this module only maps
dbm's ``open(path, flag, mode)`` onto it.
"""

from __future__ import annotations

import errno as _errno
import os as _os
from typing import Any

from ._lamina import (
    OPTIONS as _OPTIONS,
    Batch,
    Db,
    Iterator,
    Keyspace,
    Snapshot,
    __version__,
    destroy,
    error,
)

__all__ = [
    "Batch",
    "Db",
    "Iterator",
    "Keyspace",
    "Snapshot",
    "destroy",
    "error",
    "open",
    "open_flags",
    "__version__",
]

#: The flag letters ``open`` accepts, as ``dbm.gnu.open_flags`` lists its own:
#: one of ``r`` (read-only), ``w`` (read-write), ``c`` (read-write, create if
#: missing), ``n`` (always a new, empty database), then any of ``f`` (fast: no
#: flush to the OS per write), ``s`` (sync: every write on disk before it
#: returns), ``u`` (do not lock; honoured for read-only opens, which never
#: lock, and ignored for writers, which always lock: unlocked writers would
#: corrupt each other).
open_flags = "rwcnfsu"

_DURABILITY = {"f": "none", "s": "sync"}
_SET_BY_FLAG = ("create_if_missing", "error_if_exists", "read_only")


def _dir_mode(mode: int) -> int:
    """A directory mode from a dbm file mode: search (x) wherever read is granted."""
    return mode | ((mode & 0o444) >> 2)


def open(path: str | bytes | _os.PathLike[Any], flag: str = "r", mode: int = 0o666, **options: Any) -> Db:
    """Open the lamina database at ``path``, as ``dbm.gnu.open`` does.

    ``flag`` is ``'r'`` (read-only, the default), ``'w'`` (read-write),
    ``'c'`` (read-write, created if missing) or ``'n'`` (a new empty database,
    replacing an existing lamina database at ``path``), optionally followed
    by ``'f'`` (fast), ``'s'`` (sync) and ``'u'`` (no lock); see
    ``open_flags``. A missing database with ``'r'`` or ``'w'``, a path that is
    not a lamina database, a missing parent directory or a database locked by
    another process raise ``lamina.error`` naming the file.

    ``mode`` sets the permissions of the database directory when it is
    created (with search permission added wherever read is granted, and the
    umask applied, so the default ``0o666`` gives ``0o777 & ~umask``); the
    files inside are created with the process umask and guarded by the
    directory, so ``0o600`` keeps other users out of the whole database.

    ``options`` are engine settings: ``durability`` (``'sync'``, ``'os'``,
    ``'none'``; the default is ``'os'``: each write reaches the OS before the
    call returns, so it survives the process being killed), ``cache_size``,
    ``memtable_size``, ``block_size``, ``compression`` (``'lz4'``, ``'zstd'``,
    ``'none'``), ``bloom_bits_per_key``, ``blob_threshold`` (values of at
    least this many bytes, 8192 by default, are kept in blob files apart from
    the tree), ``blob_gc_ratio`` and the compaction settings listed in
    ``lamina.Db``'s documentation.
    """
    if not isinstance(flag, str):
        raise TypeError(f"flag must be a str, not {type(flag).__name__}")
    if not isinstance(mode, int):
        raise TypeError(f"mode must be an int, not {type(mode).__name__}")
    if not flag or flag[0] not in "rwcn":
        raise error("First flag must be one of 'r', 'w', 'c' or 'n'")
    for modifier in flag[1:]:
        if modifier not in "fsu":
            raise error(f"Flag '{modifier}' is not supported.")
    for name in _SET_BY_FLAG:
        if name in options:
            raise TypeError(f"{name} is set by the flag argument of lamina.open")
    # An explicit durability= wins over the f and s modifiers; s wins over f.
    for modifier in "sf":
        if modifier in flag[1:]:
            options.setdefault("durability", _DURABILITY[modifier])

    path = _os.fsdecode(_os.fspath(path))
    kind = flag[0]
    if kind == "r":
        return Db(path, create_if_missing=False, read_only=True, **options)
    if kind == "w":
        return Db(path, create_if_missing=False, **options)
    if kind == "n":
        _remove_old(path)
    _make_dir(path, mode)
    return Db(path, create_if_missing=True, **options)


def _remove_old(path: str) -> None:
    """For flag 'n': destroy the lamina database at ``path``, if one is there.

    Anything else at ``path`` is left alone (an empty directory is reused;
    other things make ``open`` fail with ``lamina.error``).
    """
    if not _os.path.lexists(path):
        return
    try:
        destroy(path)
    except error:
        if _os.path.isdir(path) and not _os.listdir(path):
            return
        raise


def _make_dir(path: str, mode: int) -> None:
    """Create the database directory with ``mode`` unless it exists; like
    ``dbm.gnu``, a missing parent directory is an error."""
    try:
        _os.mkdir(path, _dir_mode(mode))
    except FileExistsError:
        return
    except OSError as e:
        raise error(e.errno or _errno.EIO, e.strerror or str(e), path) from e


#: The names of the engine options ``open`` and ``Db`` accept as keywords.
OPTIONS: tuple[str, ...] = tuple(_OPTIONS)
