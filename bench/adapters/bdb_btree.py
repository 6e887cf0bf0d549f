"""Berkeley DB 5.3 btree access method (berkeleydb), opened as semidbm's bdb_btopen adapter does."""
from berkeleydb import db

from _bdb import open_bdb


def open(path, flag="r", mode=0o666):
    return open_bdb(path, flag, db.DB_BTREE)
