"""transaction() and transact(): reads that see their own writes, commits
refused with lamina.Conflict when something read changed."""

from __future__ import annotations

import threading

import pytest

import lamina


def test_reads_see_own_writes_and_commit_on_exit(db):
    db["a"] = "1"
    db["gone"] = "x"
    with db.transaction() as tx:
        assert tx["a"] == b"1"
        tx["a"] = "2"
        tx[b"b"] = b"3"
        del tx["gone"]
        assert tx["a"] == b"2"
        assert tx.get("gone") is None
        assert tx.get("gone", b"default") == b"default"
        assert "b" in tx and "gone" not in tx
        assert tx.items() == [(b"a", b"2"), (b"b", b"3")]
        assert tx.items(reverse=True) == [(b"b", b"3"), (b"a", b"2")]
        assert db["a"] == b"1"  # not visible before the commit
    assert db.items() == [(b"a", b"2"), (b"b", b"3")]


def test_missing_keys_raise_key_error(db):
    with db.transaction() as tx:
        with pytest.raises(KeyError):
            tx["missing"]
        with pytest.raises(KeyError):
            del tx["missing"]
        tx.delete("missing")  # blind: no error


def test_the_context_manager_discards_on_exception(db):
    db["k"] = "old"
    with pytest.raises(RuntimeError):
        with db.transaction() as tx:
            tx["k"] = "new"
            tx["other"] = "x"
            raise RuntimeError("boom")
    assert db.items() == [(b"k", b"old")]


def test_increment_folds_onto_the_stored_counter(db):
    db.increment("n", 5)
    with db.transaction() as tx:
        tx.increment("n")
        tx.increment("n", 10)
        tx.increment("fresh", 2)
        assert int.from_bytes(tx["n"], "little") == 16
        assert int.from_bytes(tx["fresh"], "little") == 2
    assert db.counter("n") == 16
    assert db.counter("fresh") == 2


def test_items_takes_ranges_and_prefixes(db):
    for k in ["p/1", "p/2", "q/1"]:
        db[k] = k
    with db.transaction() as tx:
        tx["p/3"] = "new"
        del tx["p/1"]
        assert tx.items(prefix="p/") == [(b"p/2", b"p/2"), (b"p/3", b"new")]
        assert tx.items("p/2", "q/") == [(b"p/2", b"p/2"), (b"p/3", b"new")]
        assert tx.items(start="q") == [(b"q/1", b"q/1")]


def test_conflict_is_raised_when_a_read_key_changed(db):
    db["x"] = "1"
    db["y"] = "1"
    t1 = db.transaction()
    t2 = db.transaction()
    for tx in (t1, t2):
        assert tx["x"] == b"1" and tx["y"] == b"1"
    t1["x"] = "0"
    t2["y"] = "0"
    t1.commit()
    with pytest.raises(lamina.Conflict) as caught:
        t2.commit()
    assert isinstance(caught.value, lamina.error)
    assert '"x"' in str(caught.value)
    assert db["y"] == b"1"
    assert db.stats()["txn_conflicts"] == 1


def test_a_scanned_prefix_conflicts_with_an_insert(db):
    db["p/1"] = "a"
    tx = db.transaction()
    tx["count"] = str(len(tx.items(prefix="p/")))
    db["p/2"] = "b"
    with pytest.raises(lamina.Conflict):
        tx.commit()
    assert "count" not in db


def test_commit_takes_durability_and_ends_the_transaction(db):
    tx = db.transaction(durability="none")
    tx["k"] = "v"
    tx.commit(durability="sync")
    assert db["k"] == b"v"
    with pytest.raises(lamina.error):
        tx.commit()
    with pytest.raises(lamina.error):
        tx["k"]
    with pytest.raises(ValueError):
        db.transaction().commit(durability="sometimes")


def test_rollback_discards(db):
    tx = db.transaction()
    tx["k"] = "v"
    tx.rollback()
    tx.rollback()
    assert "k" not in db
    with pytest.raises(lamina.error):
        tx["k"] = "again"


def test_keyspaces_commit_together(db):
    users = db.keyspace("users")
    with db.transaction() as tx:
        tx.put("1", "ada", keyspace=users)
        tx.increment("users", keyspace=users)
        assert tx.get("1", keyspace=users) == b"ada"
        assert tx.get("1") is None
        assert tx.items(keyspace=users)[0] == (b"1", b"ada")
    assert users["1"] == b"ada"


def test_transact_retries_on_conflict_and_returns_the_value(db):
    db["n"] = "0"
    calls = []

    def bump(tx):
        n = int(tx["n"])
        if not calls:
            db["n"] = "100"  # another writer, after the read: a conflict
        calls.append(n)
        tx["n"] = str(n + 1)
        return n

    assert db.transact(bump) == 100
    assert calls == [0, 100]
    assert db["n"] == b"101"


def test_transact_gives_up_after_its_retries(db):
    db["n"] = "0"

    def always_conflicts(tx):
        tx["n"]
        db["n"] = "changed"
        tx["out"] = "x"

    with pytest.raises(lamina.Conflict):
        db.transact(always_conflicts, retries=2)
    assert "out" not in db


def test_transact_does_not_retry_other_exceptions(db):
    calls = []

    def fails(tx):
        calls.append(1)
        tx["k"] = "v"
        raise KeyError("mine")

    with pytest.raises(KeyError):
        db.transact(fails)
    assert calls == [1]
    assert "k" not in db


def test_threads_incrementing_by_read_and_write_lose_nothing(db):
    db["n"] = "0"

    def work():
        for _ in range(50):
            db.transact(lambda tx: tx.put("n", str(int(tx["n"]) + 1)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db["n"] == b"200"


def test_bad_keys_are_type_errors(db):
    with db.transaction() as tx:
        with pytest.raises(TypeError):
            tx[1] = b"v"
        with pytest.raises(TypeError):
            tx.get(1.5)


def test_read_only_databases_refuse_transactions(path):
    lamina.open(path, "c").close()
    with lamina.open(path, "r") as ro:
        with pytest.raises(lamina.error):
            ro.transaction()


def test_popitem_drains_both_ends_and_conflicts_below_the_front(db):
    for i in range(100, 200):
        db[b"%03d" % i] = b"job %d" % i
    other = db.keyspace("other")
    other["x"] = "y"
    with db.transaction() as tx:
        assert tx.popitem() == (b"100", b"job 100")
        assert tx.popitem(last=True) == (b"199", b"job 199")
        assert tx.get(b"100") is None and b"199" not in tx
        tx[b"150"] = b"again"  # a write between pops
        assert tx.popitem() == (b"101", b"job 101")
        assert tx.items(b"150", b"151") == [(b"150", b"again")]
        assert tx.popitem(keyspace=other) == (b"x", b"y")
        with pytest.raises(KeyError):
            tx.popitem(keyspace=other)
    keys = list(db.keys())
    assert keys[0] == b"102" and keys[-1] == b"198"
    assert db[b"150"] == b"again" and len(other) == 0
    # A key put below the front by another writer makes the commit conflict.
    tx = db.transaction()
    assert tx.popitem()[0] == b"102"
    db[b"050"] = b"urgent"
    with pytest.raises(lamina.Conflict):
        tx.commit()
    assert db.popitem() == (b"050", b"urgent")
    # Drained in one transaction: every key, in order, then KeyError.
    with db.transaction() as tx:
        keys = []
        while True:
            try:
                keys.append(tx.popitem()[0])
            except KeyError:
                break
    assert keys == sorted(keys) and len(keys) == 97 and len(db) == 0
