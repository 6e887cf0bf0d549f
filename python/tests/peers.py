"""The dbm modules lamina is compared with, and what each one supports.

``dbm.gnu`` needs the ``_gdbm`` extension; Debian ships it in
``python3-gdbm`` under /usr/lib/python3.X/lib-dynload, from where it loads
into any CPython of the same version (bench/setup links it into .venv).
"""

from __future__ import annotations

import dataclasses
import glob
import importlib
import importlib.util
import sys
import types


def load_gnu() -> types.ModuleType | None:
    """``dbm.gnu``, loading Debian's ``_gdbm`` by path if needed; None if absent."""
    try:
        return importlib.import_module("dbm.gnu")
    except ImportError:
        pass
    pattern = "/usr/lib/python3*/lib-dynload/_gdbm.cpython-%d%d-*.so" % sys.version_info[:2]
    for so in glob.glob(pattern):
        spec = importlib.util.spec_from_file_location("_gdbm", so)
        if spec is None or spec.loader is None:
            continue
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["_gdbm"] = mod
        sys.modules.pop("dbm.gnu", None)
        return importlib.import_module("dbm.gnu")
    return None


@dataclasses.dataclass(frozen=True)
class Peer:
    """A dbm module and the parts of the dbm contract it implements."""

    name: str
    mod: types.ModuleType
    #: ``for k in db`` works (dbm.gnu before 3.13 has no ``__iter__``).
    iterable: bool
    #: ``firstkey()``/``nextkey()``, ``reorganize()``, the ``fsu`` modifiers, ``open_flags``.
    gnu_api: bool
    #: Keys of the wrong type raise ``TypeError`` on every operation (dbm.dumb's
    #: ``db[1]`` and ``1 in db`` answer ``KeyError``/``False`` instead).
    strict_types: bool
    #: ``clear()`` (dbm.gnu has it from 3.13 only).
    has_clear: bool
    #: Keys come back in sorted order.
    ordered: bool


def all_peers() -> list[Peer]:
    import dbm.dumb

    import lamina

    peers = [
        Peer("lamina", lamina, iterable=True, gnu_api=True, strict_types=True, has_clear=True, ordered=True),
        Peer("dbm.dumb", dbm.dumb, iterable=True, gnu_api=False, strict_types=False, has_clear=True, ordered=False),
    ]
    gnu = load_gnu()
    if gnu is not None:
        peers.append(
            Peer("dbm.gnu", gnu, iterable=_gnu_iterable(gnu), gnu_api=True, strict_types=True,
                 has_clear=sys.version_info >= (3, 13), ordered=False)
        )
    return peers


def _gnu_iterable(gnu: types.ModuleType) -> bool:
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        db = gnu.open(os.path.join(d, "probe"), "n")
        try:
            return hasattr(type(db), "__iter__")
        finally:
            db.close()
