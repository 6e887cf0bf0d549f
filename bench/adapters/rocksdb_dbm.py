"""RocksDB (through rocksdict, which bundles its own RocksDB) behind a dbm-style open().

rocksdict's Rdict is itself a mapping (`db[k]`, `db[k] = v`, `del db[k]`, KeyError for a missing
key, close()), so open() returns it as it is: raw bytes keys and values, default RocksDB options
and default write options (every put goes to the WAL without fsync, the same durability as
dbm.gnu or lamina's default). `del` is RocksDB's blind delete; the benchmark deletes only keys
that exist.
"""
import os
import shutil

from rocksdict import AccessType, Options, Rdict


def open(path, flag="r", mode=0o666):
    if flag == "n" and os.path.exists(path):
        Rdict.destroy(path)
        shutil.rmtree(path, ignore_errors=True)
    opts = Options(raw_mode=True)
    opts.create_if_missing(flag != "r")
    if flag == "r":
        return Rdict(path, opts, access_type=AccessType.read_only())
    return Rdict(path, opts)
