"""Berkeley DB 5.3 hash access method (berkeleydb), opened as semidbm's bdb_minimal adapter does."""
from berkeleydb import db

from _bdb import open_bdb


def open(path, flag="r", mode=0o666):
    return open_bdb(path, flag, db.DB_HASH)
