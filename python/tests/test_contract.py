"""The dbm contract, run against lamina and, as a differential check, against
dbm.dumb and dbm.gnu (where installed) for the parts each one supports.

Each test states one promise of the dbm documentation (or of dbm.gnu's
behaviour) and checks every module that makes it.
"""

from __future__ import annotations

import os
import pathlib

import pytest
from peers import Peer


def need(cond: bool, why: str) -> None:
    if not cond:
        pytest.skip(why)


# --- types ---------------------------------------------------------------


def test_error_is_a_subclass_of_oserror(peer: Peer):
    assert issubclass(peer.mod.error, OSError)


def test_str_and_bytes_keys_are_the_same_key(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["alpha"] = "one"
        assert db[b"alpha"] == b"one"
        db[b"beta"] = b"two"
        assert db["beta"] == b"two"
        assert "alpha" in db and b"alpha" in db


def test_str_is_encoded_utf8(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["clé"] = "valeur é"
        assert db["clé".encode()] == "valeur é".encode()
        assert "clé".encode() in db.keys()


def test_values_come_back_as_bytes(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "text"
        db["e"] = b""
        assert type(db["k"]) is bytes
        assert db["e"] == b""


def test_binary_keys_and_values_round_trip(peer: Peer, path):
    data = {bytes([i, 0, 255 - i]): bytes(range(i, i + 40)) for i in range(0, 200, 7)}
    with peer.mod.open(path, "c") as db:
        for k, v in data.items():
            db[k] = v
        for k, v in data.items():
            assert db[k] == v


def test_the_empty_key_is_a_key_like_any_other(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db[b""] = b"empty"
        db["a"] = "1"
        assert db[""] == b"empty"
        assert b"" in db
        assert sorted(db.keys()) == [b"", b"a"]
        assert len(db) == 2
    with peer.mod.open(path, "w") as db:
        assert db[b""] == b"empty"
        del db[""]
        assert b"" not in db
        with pytest.raises(KeyError):
            db[b""]
        assert len(db) == 1


@pytest.mark.parametrize("bad", [1, 1.5, None, ("a",), object()])
def test_storing_a_non_bytes_key_is_a_type_error(peer: Peer, path, bad):
    with peer.mod.open(path, "c") as db:
        with pytest.raises(TypeError):
            db[bad] = b"v"


@pytest.mark.parametrize("bad", [1, 1.5, None, ["a"], object()])
def test_storing_a_non_bytes_value_is_a_type_error(peer: Peer, path, bad):
    with peer.mod.open(path, "c") as db:
        with pytest.raises(TypeError):
            db["k"] = bad
        assert "k" not in db


@pytest.mark.parametrize("bad", [1, None, bytearray(b"k")])
def test_reading_with_a_non_bytes_key_is_a_type_error(peer: Peer, path, bad):
    need(peer.strict_types, f"{peer.name} answers KeyError/False for keys of other types")
    with peer.mod.open(path, "c") as db:
        db["k"] = "v"
        with pytest.raises(TypeError):
            db[bad]
        with pytest.raises(TypeError):
            bad in db  # noqa: B015
        with pytest.raises(TypeError):
            del db[bad]
        with pytest.raises(TypeError):
            db.get(bad)


# --- mapping behaviour ---------------------------------------------------


def test_missing_key_raises_key_error_naming_it(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        with pytest.raises(KeyError) as e:
            db[b"nope"]
        assert e.value.args[0] in (b"nope", "nope")
        with pytest.raises(KeyError):
            db["nope"]


def test_deleting_a_missing_key_raises_key_error(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["there"] = "1"
        with pytest.raises(KeyError):
            del db["nope"]
        del db["there"]
        assert "there" not in db
        with pytest.raises(KeyError):
            del db["there"]


def test_overwrite_replaces_the_value(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "1"
        db["k"] = "22"
        assert db["k"] == b"22"
        assert len(db) == 1


def test_len_and_keys_count_every_key_once(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        assert len(db) == 0
        assert db.keys() == [] or list(db.keys()) == []
        for i in range(300):
            db[f"key{i:04d}"] = str(i)
        del db["key0007"]
        db["key0008"] = "again"
        keys = list(db.keys())
        assert len(db) == 299 == len(keys)
        assert all(type(k) is bytes for k in keys)
        assert set(keys) == {f"key{i:04d}".encode() for i in range(300)} - {b"key0007"}


def test_keys_returns_a_list(peer: Peer, path):
    need(peer.gnu_api, "dbm.dumb returns a view")
    with peer.mod.open(path, "c") as db:
        db["b"] = "1"
        db["a"] = "2"
        assert isinstance(db.keys(), list)


def test_get_returns_the_default_when_missing(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "v"
        assert db.get("k") == b"v"
        assert db.get(b"k", b"d") == b"v"
        assert db.get("nope") is None
        assert db.get("nope", b"d") == b"d"
        sentinel = object()
        assert db.get("nope", sentinel) is sentinel


def test_setdefault_stores_only_when_missing(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "v"
        assert db.setdefault("k", b"other") == b"v"
        assert db.setdefault("new", b"d") == b"d"
        assert db["new"] == b"d"


def test_setdefault_without_default_on_a_missing_key_is_a_type_error(peer: Peer, path):
    need(peer.gnu_api, "dbm.dumb stores b'' (MutableMapping.setdefault)")
    with peer.mod.open(path, "c") as db:
        with pytest.raises(TypeError):
            db.setdefault("new")
        assert "new" not in db


def test_iteration_yields_every_key_as_bytes(peer: Peer, path):
    need(peer.iterable, f"{peer.name} objects are not iterable")
    with peer.mod.open(path, "c") as db:
        for i in range(50):
            db[f"k{i}"] = "v"
        keys = list(iter(db))
        assert sorted(keys) == sorted(f"k{i}".encode() for i in range(50))
        assert all(type(k) is bytes for k in keys)


def test_keys_are_ordered(peer: Peer, path):
    need(peer.ordered, f"{peer.name} keeps keys in hash order")
    with peer.mod.open(path, "c") as db:
        for k in ["m", "a", "z", "b", "aa"]:
            db[k] = k
        assert db.keys() == [b"a", b"aa", b"b", b"m", b"z"]
        assert list(db) == db.keys()


def test_firstkey_nextkey_walk_every_key(peer: Peer, path):
    need(peer.gnu_api, "firstkey/nextkey are dbm.gnu's")
    with peer.mod.open(path, "c") as db:
        assert db.firstkey() is None
        want = {f"k{i}".encode() for i in range(40)}
        for k in want:
            db[k] = b"v"
        seen = []
        k = db.firstkey()
        while k is not None:
            seen.append(k)
            k = db.nextkey(k)
        assert sorted(seen) == sorted(want)


def test_clear_removes_everything(peer: Peer, path):
    need(peer.has_clear, f"{peer.name} has no clear()")
    with peer.mod.open(path, "c") as db:
        for i in range(100):
            db[f"k{i}"] = "v"
        db.clear()
        assert len(db) == 0
        assert "k1" not in db
        db["after"] = "1"
        assert db.keys() == [b"after"] or list(db.keys()) == [b"after"]


# --- flags ----------------------------------------------------------------


def test_open_flags_lists_the_gnu_flags(peer: Peer):
    need(peer.gnu_api, "open_flags is dbm.gnu's")
    assert set(peer.mod.open_flags) == set("rwcnfsu")


def test_flag_r_on_a_missing_path_raises_error_naming_it(peer: Peer, path):
    with pytest.raises(peer.mod.error) as e:
        peer.mod.open(path, "r")
    assert os.fsdecode(e.value.filename).startswith(path)
    assert not os.path.exists(path)


def test_flag_w_on_a_missing_path_raises_error(peer: Peer, path):
    with pytest.raises(peer.mod.error) as e:
        peer.mod.open(path, "w")
    assert e.value.filename is not None
    assert not os.path.exists(path)


def test_flag_c_creates_then_reopens(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "v"
    with peer.mod.open(path, "c") as db:
        assert db["k"] == b"v"


def test_flag_n_always_starts_empty(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["old"] = "v"
    with peer.mod.open(path, "n") as db:
        assert len(db) == 0
        assert "old" not in db
        db["new"] = "v"
    with peer.mod.open(path, "r") as db:
        assert list(db.keys()) == [b"new"]


def test_flag_w_writes_an_existing_database(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "1"
    with peer.mod.open(path, "w") as db:
        db["k"] = "2"
        db["j"] = "3"
    with peer.mod.open(path, "r") as db:
        assert db["k"] == b"2" and db["j"] == b"3"


@pytest.mark.parametrize("flag", ["cf", "cs", "cu", "cfu", "nf", "wsu"])
def test_modifier_flags_are_accepted(peer: Peer, path, flag):
    need(peer.gnu_api, "the f s u modifiers are dbm.gnu's")
    if flag.startswith("w"):
        peer.mod.open(path, "c").close()
    with peer.mod.open(path, flag) as db:
        db["k"] = "v"
        assert db["k"] == b"v"


@pytest.mark.parametrize("flag", ["x", "", "rx", "cz", "rr"])
def test_unknown_flags_raise_error(peer: Peer, path, flag):
    need(peer.gnu_api, "dbm.dumb raises ValueError")
    with pytest.raises(peer.mod.error):
        peer.mod.open(path, flag)


def test_path_may_be_a_pathlike(peer: Peer, path):
    with peer.mod.open(pathlib.Path(path), "c") as db:
        db["k"] = "v"
    with peer.mod.open(pathlib.Path(path), "r") as db:
        assert db["k"] == b"v"


# --- read-only databases -----------------------------------------------------


def _read_only(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "v"
        db["j"] = "w"
    return peer.mod.open(path, "r")


def test_read_only_database_reads(peer: Peer, path):
    with _read_only(peer, path) as db:
        assert db["k"] == b"v"
        assert len(db) == 2
        assert sorted(db.keys()) == [b"j", b"k"]
        assert db.get("nope") is None


@pytest.mark.parametrize(
    "write",
    [
        lambda db: db.__setitem__("k", "x"),
        lambda db: db.__setitem__("new", "x"),
        lambda db: db.__delitem__("k"),
        lambda db: db.__delitem__("missing"),
        lambda db: db.setdefault("missing", b"x"),
    ],
    ids=["overwrite", "insert", "delete", "delete-missing", "setdefault"],
)
def test_read_only_database_refuses_writes_with_error(peer: Peer, path, write):
    with _read_only(peer, path) as db:
        with pytest.raises(peer.mod.error):
            write(db)
        assert db["k"] == b"v"
        assert "new" not in db


def test_read_only_refuses_reorganize_and_clear(peer: Peer, path):
    need(peer.gnu_api, "reorganize is dbm.gnu's")
    with _read_only(peer, path) as db:
        with pytest.raises(peer.mod.error):
            db.reorganize()
        if peer.has_clear:
            with pytest.raises(peer.mod.error):
                db.clear()
        db.sync()
        assert len(db) == 2


def test_setdefault_of_an_existing_key_works_read_only(peer: Peer, path):
    need(peer.gnu_api, "dbm.dumb refuses any setdefault read-only")
    with _read_only(peer, path) as db:
        assert db.setdefault("k", b"x") == b"v"


# --- lifetime ---------------------------------------------------------------


def test_data_survives_close_and_reopen(peer: Peer, path):
    data = {f"key{i}".encode(): os.urandom(i % 50) for i in range(500)}
    with peer.mod.open(path, "c") as db:
        for k, v in data.items():
            db[k] = v
        for k in list(data)[::3]:
            del db[k]
            del data[k]
    with peer.mod.open(path, "r") as db:
        assert len(db) == len(data)
        assert {k: db[k] for k in db.keys()} == data


def test_close_is_idempotent(peer: Peer, path):
    db = peer.mod.open(path, "c")
    db["k"] = "v"
    db.close()
    db.close()


@pytest.mark.parametrize(
    "use",
    [
        lambda db: db["k"],
        lambda db: db.__setitem__("k", "v"),
        lambda db: db.__delitem__("k"),
        lambda db: db.keys(),
        lambda db: len(db),
        lambda db: "k" in db,
    ],
    ids=["get", "set", "del", "keys", "len", "contains"],
)
def test_using_a_closed_database_raises_error(peer: Peer, path, use):
    db = peer.mod.open(path, "c")
    db["k"] = "v"
    db.close()
    with pytest.raises(peer.mod.error):
        use(db)


def test_context_manager_closes(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "v"
    with pytest.raises(peer.mod.error):
        db["k"]


def test_sync_keeps_everything(peer: Peer, path):
    with peer.mod.open(path, "c") as db:
        db["k"] = "v"
        db.sync()
        assert db["k"] == b"v"


def test_reorganize_keeps_live_data(peer: Peer, path):
    need(peer.gnu_api, "reorganize is dbm.gnu's")
    with peer.mod.open(path, "c") as db:
        for i in range(2000):
            db[f"k{i}"] = b"x" * 100
        for i in range(0, 2000, 2):
            del db[f"k{i}"]
        db.reorganize()
        assert len(db) == 1000
        assert db["k1"] == b"x" * 100
        assert "k0" not in db


def test_mode_sets_permissions_of_what_is_created(peer: Peer, tmp_path):
    need(peer.name != "dbm.dumb", "dbm.dumb applies the mode only to new files of its own")
    path = str(tmp_path / "db")
    old = os.umask(0o022)
    try:
        peer.mod.open(path, "c", 0o640).close()
    finally:
        os.umask(old)
    mode = os.stat(path).st_mode & 0o777
    if os.path.isdir(path):  # lamina: a directory gets x wherever r is granted
        assert mode == 0o750
    else:
        assert mode == 0o640
