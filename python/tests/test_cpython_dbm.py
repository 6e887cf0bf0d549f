"""CPython's own dbm tests, run against lamina.

``test.test_dbm`` (``AnyDBMTestCase``, ``WhichDBTestCase``) and
``test.test_dbm_gnu`` (``TestGdbm``) come with the interpreter; their test
classes are imported and subclassed here, pointed at lamina, and run as they
are except where noted:

- ``WhichDBTestCase.setUp`` imports a fresh copy of ``dbm`` (to check that
  whichdb's module references are defined); ``lamina.register_dbm()`` patches
  the ``dbm`` module programs import, so the subclass reads that one.
- ``TestGdbm`` removes its database with ``os.unlink``; a lamina database is
  a directory, so the tests here remove a file or a directory.
- ``TestGdbm.test_reorganize`` measures ``os.path.getsize`` of gdbm's single
  file and expects deleting a record to leave it unchanged (gdbm reuses the
  space in place). A lamina database is a directory: the size measured is
  that of its files, and a delete appends a tombstone to the WAL, so the size
  may grow until ``reorganize()`` reclaims it. The other assertions (a write
  grows it; reorganize shrinks it, not below the empty database) are kept.
- ``TestGdbm.test_context_manager`` compares the text of the error on a
  closed database with gdbm's "GDBM object has already been closed"; lamina's
  says "database has already been closed".
- ``TestGdbm.test_disallow_instantiation`` checks that dbm.gnu's C type
  cannot be instantiated (bpo-43916); ``lamina.Db(path, **options)`` is a
  documented constructor, so the test does not apply.
"""

from __future__ import annotations

import os
import shutil
import sys
import unittest

import pytest

import lamina
from peers import load_gnu

# dbm.gnu must be importable before test_dbm_gnu is (it skips otherwise), and
# test_dbm builds its classes from dbm's module list at import time, before
# any test here registers lamina in it.
_GNU = load_gnu()
pytest.importorskip("test.test_dbm")
from test import test_dbm  # noqa: E402

try:
    from test import test_dbm_gnu
except unittest.SkipTest:  # no _gdbm on this machine
    test_dbm_gnu = None  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def _scratch_dir_and_dbm_state(tmp_path, monkeypatch):
    """Runs each test in its own directory (the stdlib tests use relative
    paths) and undoes ``register_dbm`` afterwards."""
    import dbm

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(dbm, "_names", list(dbm._names))
    monkeypatch.setattr(dbm, "_modules", dict(dbm._modules))
    monkeypatch.setattr(dbm, "_defaultmod", dbm._defaultmod)
    monkeypatch.setattr(dbm, "whichdb", dbm.whichdb)
    yield


class TestAnyDBMWithLamina(test_dbm.AnyDBMTestCase, unittest.TestCase):
    module = lamina

    def setUp(self):
        lamina.register_dbm()
        super().setUp()


class TestWhichDBWithLamina(test_dbm.WhichDBTestCase):
    def setUp(self):
        super().setUp()
        lamina.register_dbm()
        import dbm

        self.dbm = dbm  # see the module docs


def _remove(path):
    """``os_helper.unlink`` for a database that may be a file or a directory."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _size(path):
    """The bytes a lamina database takes: the sizes of its files."""
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


if test_dbm_gnu is not None:

    class TestGdbmWithLamina(test_dbm_gnu.TestGdbm):
        def setUp(self):
            super().setUp()
            for name, value in (("gdbm", lamina), ("unlink", _remove)):
                self.addCleanup(setattr, test_dbm_gnu, name, getattr(test_dbm_gnu, name))
                setattr(test_dbm_gnu, name, value)

        def test_disallow_instantiation(self):
            self.skipTest("lamina.Db is a documented constructor (see the module docs)")

        def test_reorganize(self):
            filename = test_dbm_gnu.filename
            self.g = lamina.open(filename, "c")
            size0 = _size(filename)
            value_size = max(size0, 10000)
            self.g["x"] = "x" * value_size
            size1 = _size(filename)
            self.assertGreater(size1, size0)

            del self.g["x"]
            # Adapted: gdbm's file keeps its size; lamina appends a tombstone.
            self.assertGreaterEqual(_size(filename), size1)

            self.g.reorganize()
            size2 = _size(filename)
            self.assertLess(size2, size1)
            self.assertGreaterEqual(size2, size0)

        def test_context_manager(self):
            filename = test_dbm_gnu.filename
            with lamina.open(filename, "c") as db:
                db["gdbm context manager"] = "context manager"

            with lamina.open(filename, "r") as db:
                self.assertEqual(list(db.keys()), [b"gdbm context manager"])

            with self.assertRaises(lamina.error) as cm:
                db.keys()
            # Adapted: gdbm says "GDBM object has already been closed".
            self.assertEqual(str(cm.exception), "database has already been closed")


def test_the_gdbm_cases_ran_where_gdbm_is_installed():
    """The TestGdbm cases are skipped only where Debian's _gdbm is missing."""
    assert (test_dbm_gnu is None) == (_GNU is None), sys.version
