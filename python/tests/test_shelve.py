"""A shelve.Shelf over a lamina database: the dbm use Python programs most often make."""

from __future__ import annotations

import shelve

import lamina


def test_shelf_stores_python_objects_and_reopens(path):
    with shelve.Shelf(lamina.open(path, "c")) as shelf:
        shelf["list"] = [1, 2, {"three": 3}]
        shelf["tuple"] = ("a", b"b", 3.5)
        shelf["é"] = None
        assert shelf["list"][2]["three"] == 3
        assert len(shelf) == 3
    with shelve.Shelf(lamina.open(path, "r")) as shelf:
        assert shelf["tuple"] == ("a", b"b", 3.5)
        assert sorted(shelf.keys()) == ["list", "tuple", "é"]
        assert "é" in shelf and shelf["é"] is None
        assert dict(shelf.items())["list"] == [1, 2, {"three": 3}]


def test_shelf_delete_get_and_missing(path):
    with shelve.Shelf(lamina.open(path, "c")) as shelf:
        shelf["a"] = 1
        del shelf["a"]
        assert shelf.get("a", "default") == "default"
        assert "a" not in shelf
        try:
            shelf["a"]
        except KeyError:
            pass
        else:
            raise AssertionError("KeyError expected")


def test_shelf_writeback_persists_mutations(path):
    with shelve.Shelf(lamina.open(path, "c"), writeback=True) as shelf:
        shelf["l"] = []
        shelf["l"].append(1)
        shelf["l"].append(2)
    with shelve.Shelf(lamina.open(path, "r")) as shelf:
        assert shelf["l"] == [1, 2]


def test_shelf_pop_update_and_iteration(path):
    with shelve.Shelf(lamina.open(path, "c")) as shelf:
        shelf.update({"x": 1, "y": 2, "z": 3})
        assert shelf.pop("y") == 2
        assert list(shelf) == ["x", "z"]
        shelf.sync()


def test_shelf_on_a_read_only_database_refuses_writes(path):
    lamina.open(path, "c").close()
    with shelve.Shelf(lamina.open(path, "r")) as shelf:
        try:
            shelf["k"] = 1
        except lamina.error:
            pass
        else:
            raise AssertionError("lamina.error expected")
