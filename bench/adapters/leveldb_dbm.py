"""LevelDB (through plyvel) behind a dbm-style open().

Default LevelDB options (4 MiB write buffer, 8 MiB cache, snappy) and default write options:
every put goes to the log without fsync. LevelDB has no read-only mode; 'r' opens normally.
`db[k] = v` and `del db[k]` call plyvel's put and delete directly (no Python frame between):
each open gets a class whose __setitem__ and __delitem__ are those bound methods.
"""
import os
import shutil

import plyvel


class LevelDbm:
    def __init__(self, path, flag):
        if flag == "n" and os.path.exists(path):
            shutil.rmtree(path)
        self.db = plyvel.DB(path, create_if_missing=flag != "r")
        self._get = self.db.get
        self._put = self.db.put

    def __getitem__(self, key):
        v = self._get(key)
        if v is None:
            raise KeyError(key)
        return v

    def __setitem__(self, key, value):
        self._put(key, value)

    def __delitem__(self, key):
        # Blind delete, as LevelDB's API is: see rocksdb_dbm.
        self.db.delete(key)

    def __contains__(self, key):
        return self._get(key) is not None

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None


def open(path, flag="r", mode=0o666):
    db = LevelDbm(path, flag)
    db.__class__ = type("LevelDbmFast", (LevelDbm,),
                        {"__setitem__": db.db.put, "__delitem__": db.db.delete})
    return db
