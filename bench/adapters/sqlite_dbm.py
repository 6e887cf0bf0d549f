"""SQLite (Python's sqlite3) behind a dbm-style open().

One table `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`; each open is one transaction,
committed by close() (as LMDB's adapter), with the default rollback journal and synchronous=FULL.
"""
import os
import sqlite3


class SqliteDbm:
    def __init__(self, path, flag):
        if flag == "n" and os.path.exists(path):
            os.remove(path)
        if flag == "r":
            if not os.path.exists(path):
                raise sqlite3.OperationalError(f"{path}: no such database")
            self.con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        else:
            self.con = sqlite3.connect(path)
            self.con.execute("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
            self.con.commit()
        self.cur = self.con.cursor()
        self.cur.execute("BEGIN")

    def __getitem__(self, key):
        row = self.cur.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return row[0]

    def __setitem__(self, key, value):
        self.cur.execute("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (key, value))

    def __delitem__(self, key):
        if self.cur.execute("DELETE FROM kv WHERE k = ?", (key,)).rowcount == 0:
            raise KeyError(key)

    def __contains__(self, key):
        return self.cur.execute("SELECT 1 FROM kv WHERE k = ?", (key,)).fetchone() is not None

    def close(self):
        if self.con is not None:
            self.con.commit()
            self.con.close()
            self.con = None


def open(path, flag="r", mode=0o666):
    return SqliteDbm(path, flag)
