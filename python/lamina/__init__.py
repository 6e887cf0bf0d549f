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
keyspaces, ``stats()``, ``cursor()``. The work is done in Rust
(``lamina._lamina``), with the GIL released around engine calls that may
block; this module only maps dbm's ``open(path, flag, mode)`` onto it.

``lamina.register_dbm()`` makes ``dbm.open``, ``dbm.whichdb`` and
``shelve.open`` recognise lamina databases and create new ones with lamina;
``lamina.shelve.open(path)`` is a ``shelve.Shelf`` over lamina without it.
"""

from __future__ import annotations

import collections.abc as _abc
import errno as _errno
import functools as _functools
import io as _io
import os as _os
import stat as _stat
import sys as _sys
from typing import Any, Callable, Optional

from ._lamina import (
    OPTIONS as _OPTIONS,
    Batch,
    Conflict,
    Cursor,
    Db,
    Iterator,
    Keyspace,
    Ranges,
    Snapshot,
    TableWriter,
    Transaction,
    __version__,
    bulk_load,
    destroy,
    error,
)

__all__ = [
    "Batch",
    "Conflict",
    "Cursor",
    "Db",
    "Iterator",
    "Keyspace",
    "Ranges",
    "Snapshot",
    "TableWriter",
    "Transaction",
    "bulk_load",
    "destroy",
    "error",
    "migrate",
    "open",
    "open_flags",
    "register_dbm",
    "whichdb",
    "__version__",
]

# A database is a mutable mapping (pop, popitem, setdefault, update, ... are
# its own methods); a snapshot is a read-only one.
_abc.MutableMapping.register(Keyspace)
_abc.Mapping.register(Snapshot)

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


def _mode_text(mode: int) -> str:
    """``mode`` in octal, the way permission bits are written."""
    return f"-0o{-mode:o}" if mode < 0 else f"0o{mode:o}"


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
    A mode outside ``0`` to ``0o777`` raises ``ValueError``.

    ``options`` are engine settings: ``durability`` (``'sync'``, ``'os'``,
    ``'none'``; the default is ``'os'``: each write reaches the OS before the
    call returns, so it survives the process being killed),
    ``memory_budget`` (bytes the database may hold in memory: block cache,
    memtables, index and filter blocks together; by default an eighth of
    the machine's memory, from 64 MiB to 1 GiB), ``cache_size``,
    ``memtable_size``, ``block_size``, ``compression`` (``'lz4'``, ``'zstd'``,
    ``'none'``), ``bloom_bits_per_key``, ``blob_threshold`` (values of at
    least this many bytes, 4096 by default, are kept in blob files apart from
    the tree), ``blob_gc_ratio`` and the compaction settings listed in
    ``lamina.Db``'s documentation.
    """
    if not isinstance(flag, str):
        raise TypeError(f"flag must be a str, not {type(flag).__name__}")
    if not isinstance(mode, int):
        raise TypeError(f"mode must be an int, not {type(mode).__name__}")
    if not 0 <= mode <= 0o777:
        # dbm.gnu passes any C int on to open(2): -1 there gives a file with
        # the setuid, setgid and sticky bits, and 0o10000 one with none.
        raise ValueError(f"mode must be permission bits, 0 to 0o777, not {_mode_text(mode)}")
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
    try:
        if kind == "r":
            return Db(path, create_if_missing=False, read_only=True, **options)
        if kind == "w":
            return Db(path, create_if_missing=False, **options)
        if kind == "n":
            _clear_for_new(path)
        _make_dir(path, mode)
        return Db(path, create_if_missing=True, **options)
    except error as e:
        raise _name_other_dbm(e, path) from None


#: The files of the other dbm modules' databases, by ``dbm.whichdb``'s name
#: for them: suffixes added to the path they were opened with.
_OTHER_DBM_FILES = {
    "dbm.gnu": ("",),
    "dbm.ndbm": (".pag", ".dir", ".db"),
    "dbm.dumb": (".dat", ".dir", ".bak"),
}


def _clear_for_new(path: str) -> None:
    """For flag 'n': remove what a new database replaces, as ``dbm.gnu`` does.

    That is a lamina database at ``path``, an empty regular file (dbm's
    "database with invalid contents"), or the files of another dbm module's
    database recognised as ``dbm.whichdb`` recognises them (gdbm's magic
    number, ndbm's ``.pag``/``.dir``/``.db`` files, dumb's ``.dat``/``.dir``
    files). Anything else is left untouched, and ``open`` then refuses it
    (an empty directory is reused).
    """
    kind = whichdb(path)
    if kind == "lamina":
        destroy(path)
        return
    doomed: list[str] = []
    if kind in _OTHER_DBM_FILES:
        doomed = [path + suffix for suffix in _OTHER_DBM_FILES[kind]]
    elif _is_empty_file(path):
        doomed = [path]
    for name in doomed:
        try:
            _os.remove(name)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise error(e.errno or _errno.EIO, e.strerror or str(e), name) from e


def _is_empty_file(path: str) -> bool:
    try:
        st = _os.lstat(path)
    except OSError:
        return False
    return _stat.S_ISREG(st.st_mode) and st.st_size == 0


def _name_other_dbm(e: error, path: str) -> error:
    """``e``, or when ``path`` holds another dbm module's database, ``e`` with
    a sentence saying which one and what to do."""
    if e.errno is not None or not e.args:
        return e
    kind = _stdlib_whichdb()(path)
    if kind not in _OTHER_DBM_FILES:
        return e
    better = error(
        f"{e.args[0]} (it is a {kind} database: open it with {kind}, "
        f"copy it into a new lamina database with lamina.migrate(src, dst), "
        f"or open it with flag 'n' to replace it with a new lamina database)"
    )
    better.filename = e.filename
    return better


#: Records written to the new database per batch by ``migrate``.
_MIGRATE_BATCH = 4096


def _source_records(src: Any) -> Any:
    """Every (key, value) of an open dbm database, read one key at a time
    where the module allows (``firstkey``/``nextkey``), else from ``keys()``."""
    if hasattr(src, "firstkey") and hasattr(src, "nextkey"):
        key = src.firstkey()
        while key is not None:
            yield key, src[key]
            key = src.nextkey(key)
        return
    for key in src.keys():
        yield key, src[key]


def _open_source(path: str) -> Any:
    """The database at ``path`` opened read-only with the module that reads it."""
    import dbm
    import importlib

    kind = whichdb(path)
    if kind is None:
        raise error(_errno.ENOENT, "No such file or directory", path)
    if kind == "lamina":
        return open(path, "r")
    if kind == "":
        raise error(f"{path} is not a database any dbm module here recognises")
    try:
        module = importlib.import_module(kind)
    except ImportError:
        hint = " (Debian package python3-gdbm)" if kind == "dbm.gnu" else ""
        raise error(
            f"{path} is a {kind} database, and this Python has no {kind}{hint} to read "
            f"it; install it, or convert it with the command line: lamina load NEW {path}"
        ) from None
    return module.open(path, "r")  # type: ignore[attr-defined]


def migrate(
    src: str | bytes | _os.PathLike[Any],
    dst: str | bytes | _os.PathLike[Any],
    *,
    progress: Optional[Callable[[int], None]] = None,
) -> int:
    """Copy every record of the database at ``src`` into a new lamina database
    at ``dst``; return how many records were copied.

    ``src`` is anything ``dbm.open`` can read (a ``dbm.gnu``, ``dbm.ndbm``,
    ``dbm.dumb`` or, from Python 3.13, ``dbm.sqlite3`` database) or a lamina
    database; it is opened read-only and left as it was. ``dst`` must not
    exist (or be an empty directory): ``lamina.error`` (``EEXIST``) otherwise.
    ``progress``, if given, is called with the number of records copied so
    far after each batch of records.

    All or nothing: if anything fails (a damaged source, a full disk), the
    new database is removed and the exception propagates; on success the
    copy is flushed and durable. Keys and values are copied as bytes.
    """
    src_path = _os.fsdecode(_os.fspath(src))
    dst_path = _os.fsdecode(_os.fspath(dst))
    if _os.path.lexists(dst_path) and not (_os.path.isdir(dst_path) and not _os.listdir(dst_path)):
        raise error(_errno.EEXIST, "File exists (lamina.migrate writes a new database)", dst_path)
    source = _open_source(src_path)
    created = not _os.path.exists(dst_path)
    db: Optional[Db] = None
    copied = 0
    try:
        _make_dir(dst_path, 0o666)
        db = Db(dst_path, create_if_missing=True)
        batch = db.batch()
        pending = 0
        for key, value in _source_records(source):
            batch[key] = value
            pending += 1
            if pending == _MIGRATE_BATCH:
                batch.commit()
                copied += pending
                pending = 0
                batch = db.batch()
                if progress is not None:
                    progress(copied)
        batch.commit()
        copied += pending
        if progress is not None and pending:
            progress(copied)
        db.flush()
        db.close()
        db = None
    except BaseException:
        if db is not None:
            try:
                db.close()
            except error:
                pass
        try:
            destroy(dst_path)
        except error:
            pass
        if created:
            try:
                _os.rmdir(dst_path)
            except OSError:
                pass
        raise
    finally:
        source.close()
    return copied


def _make_dir(path: str, mode: int) -> None:
    """Create the database directory with ``mode`` unless it exists; like
    ``dbm.gnu``, a missing parent directory is an error."""
    try:
        _os.mkdir(path, _dir_mode(mode))
    except FileExistsError:
        return
    except OSError as e:
        raise error(e.errno or _errno.EIO, e.strerror or str(e), path) from e


def _is_lamina(path: str) -> bool:
    """True when ``path`` is a directory holding a lamina database: its
    ``CURRENT`` file names a manifest (docs/format.md#current)."""
    try:
        with _io.open(_os.path.join(path, "CURRENT"), "rb") as f:
            return f.read(9) == b"MANIFEST-"
    except OSError:
        return False


def _stdlib_whichdb() -> Callable[[Any], Optional[str]]:
    """``dbm.whichdb`` as the standard library defines it (not the wrapper
    ``register_dbm`` installs, which calls ``whichdb`` here)."""
    import dbm

    return getattr(dbm.whichdb, "__wrapped__", dbm.whichdb)


def whichdb(path: str | bytes | _os.PathLike[Any]) -> Optional[str]:
    """Which dbm module's database is at ``path``: ``"lamina"`` for a lamina
    database, otherwise what ``dbm.whichdb`` answers (``"dbm.gnu"``,
    ``"dbm.ndbm"``, ``"dbm.dumb"``; ``""`` for a file no module recognises;
    ``None`` when there is nothing readable at ``path``)."""
    name = _os.fsdecode(_os.fspath(path))
    if _is_lamina(name):
        return "lamina"
    return _stdlib_whichdb()(path)


def register_dbm() -> None:
    """Make the standard library's ``dbm`` (and so ``shelve``) use lamina.

    After ``lamina.register_dbm()``, ``dbm.whichdb`` recognises lamina
    databases (as ``"lamina"``), ``dbm.open`` and ``shelve.open`` open them
    with lamina, and create new databases with lamina. Databases of the other
    dbm modules are recognised and opened as before. Idempotent; affects the
    whole process.
    """
    import dbm

    module = _sys.modules[__name__]
    if "lamina" not in dbm._names:  # type: ignore[attr-defined]
        dbm._names.insert(0, "lamina")  # type: ignore[attr-defined]
    dbm._modules["lamina"] = module  # type: ignore[attr-defined]
    # dbm.open picks its default module again, the first of _names it can
    # import (lamina), and loads the others for databases whichdb names.
    dbm._defaultmod = None  # type: ignore[attr-defined]
    if not hasattr(dbm.whichdb, "__wrapped__"):
        standard = dbm.whichdb

        @_functools.wraps(standard)
        def whichdb_with_lamina(filename: Any) -> Optional[str]:
            if _is_lamina(_os.fsdecode(_os.fspath(filename))):
                return "lamina"
            return standard(filename)

        dbm.whichdb = whichdb_with_lamina


#: The names of the engine options ``open`` and ``Db`` accept as keywords.
OPTIONS: tuple[str, ...] = tuple(_OPTIONS)
