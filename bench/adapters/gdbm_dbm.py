"""GNU dbm (`dbm.gnu`), importable even where this CPython was built without `_gdbm`.

Debian's python3-gdbm ships `_gdbm.cpython-311-*.so`, built for CPython 3.11; it loads in any
CPython 3.11 here. If `import dbm.gnu` fails, the extension is loaded from where Debian puts it.
"""
import glob
import importlib.util
import sys


def _load():
    try:
        import dbm.gnu as gnu
        return gnu
    except ImportError:
        pass
    tag = "cpython-%d%d" % sys.version_info[:2]
    for so in sorted(glob.glob(f"/usr/lib/python3*/lib-dynload/_gdbm.{tag}-*.so")):
        spec = importlib.util.spec_from_file_location("_gdbm", so)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["_gdbm"] = mod
        sys.modules.pop("dbm.gnu", None)
        import dbm.gnu as gnu
        return gnu
    raise ImportError("dbm.gnu: no _gdbm in this Python and no Debian python3-gdbm "
                      f"_gdbm.{tag}-*.so (apt-get install python3-gdbm)")


_gnu = _load()
open = _gnu.open
error = _gnu.error
