"""Shared part of the Berkeley DB adapters (semidbm's bdb_minimal adapter, for berkeleydb)."""
from berkeleydb import db


def open_bdb(path, flag, dbtype):
    if flag == "r":
        flags = db.DB_RDONLY
    elif flag in ("w", "rw"):
        flags = 0
    elif flag == "c":
        flags = db.DB_CREATE
    elif flag == "n":
        flags = db.DB_TRUNCATE | db.DB_CREATE
    else:
        raise db.DBError("flag should be one of 'r', 'w', 'c' or 'n'")
    d = db.DB(None)
    d.open(path, None, dbtype, flags)
    return d
