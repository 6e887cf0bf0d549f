"""``shelve`` over lamina: a persistent dict of pickled Python objects.

``lamina.shelve.open(path)`` is ``shelve.open(path)`` with lamina as the
dbm module, whatever ``dbm.open`` would have chosen::

    import lamina.shelve
    with lamina.shelve.open("objects.lamina") as shelf:
        shelf["config"] = {"retries": 3}
"""

from __future__ import annotations

import os
import shelve
from typing import Any

import lamina

__all__ = ["open"]


def open(
    filename: str | bytes | os.PathLike[Any],
    flag: str = "c",
    protocol: int | None = None,
    writeback: bool = False,
) -> shelve.Shelf[Any]:
    """A ``shelve.Shelf`` over the lamina database at ``filename``; ``flag``,
    ``protocol`` and ``writeback`` mean what they mean for ``shelve.open``
    (``flag`` as for ``lamina.open``)."""
    return shelve.Shelf(lamina.open(filename, flag), protocol, writeback)
