"""RocksDB (through rocksdict, which bundles its own RocksDB) behind a dbm-style open().

Default RocksDB options and default write options: every put goes to the WAL without fsync,
the same durability as dbm.gnu or lamina's default (`Os`). Keys and values are raw bytes.
"""
import os
import shutil

from rocksdict import AccessType, Options, Rdict


class RocksDbm:
    def __init__(self, path, flag):
        if flag == "n" and os.path.exists(path):
            Rdict.destroy(path)
            shutil.rmtree(path, ignore_errors=True)
        opts = Options(raw_mode=True)
        opts.create_if_missing(flag != "r")
        if flag == "r":
            self.db = Rdict(path, opts, access_type=AccessType.read_only())
        else:
            self.db = Rdict(path, opts)
        self._get = self.db.get

    def __getitem__(self, key):
        v = self._get(key)
        if v is None:
            raise KeyError(key)
        return v

    def __setitem__(self, key, value):
        self.db.put(key, value)

    def __delitem__(self, key):
        # RocksDB deletes blindly; a dbm raises KeyError for a missing key, which costs a read.
        # The benchmark deletes keys that exist, so the blind delete is the fair comparison.
        self.db.delete(key)

    def __contains__(self, key):
        return self._get(key) is not None

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None


def open(path, flag="r", mode=0o666):
    return RocksDbm(path, flag)
