"""The caller's side of ``to_lamina``: the plan of one write, the tables
brought to the database's machine (from the workers through Dask, or
downloaded from the staging area) and ingested all at once, the staging
area cleaned up, and ``LaminaWrite``, what ``compute=False`` returns."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterable
from typing import Any

import lamina

import dask
from dask.delayed import Delayed

from ._tables import _fs


class _Ingest:
    """Everything the ingest needs; runs on the database's host."""

    def __init__(self, path: str, prefix: str | None, storage_options: dict[str, Any]):
        self.path = path
        self.prefix = prefix
        self.storage_options = storage_options
        self.host = socket.gethostname()

    def local(self) -> _LocalTables:
        return _LocalTables(self)

    def clean_staging(self) -> None:
        """Removes everything this write staged (nothing if it staged nothing)."""
        if self.prefix is None:
            return
        fs, root = _fs(self.prefix, self.storage_options)
        try:
            fs.rm(root, recursive=True)
        except FileNotFoundError:
            pass
        if hasattr(fs, "invalidate_cache"):
            fs.invalidate_cache()

    def finish(self, results: Iterable[dict[str, Any] | None]) -> int:
        """Brings every table to this machine, then ingests them all; or,
        if an upload failed, removes what the others staged and raises."""
        results = list(results)
        for r in results:
            if r is not None and "error" in r:
                self.clean_staging()
                raise r["error"]
        tables = self.local()
        try:
            for r in results:
                tables.add(r)
            return tables.ingest()
        finally:
            tables.close()


class _LocalTables:
    """The caller's copies of the tables, in a directory beside the database
    (on its file system, so the ingest can link them in)."""

    def __init__(self, plan: _Ingest):
        self.plan = plan
        parent = os.path.dirname(plan.path)
        if not os.path.isdir(parent):
            raise lamina.error(f"cannot create the database {plan.path}: the directory {parent} does not exist")
        self.dir = tempfile.mkdtemp(prefix=f".{os.path.basename(plan.path)}.staging-", dir=parent)
        self.files: dict[int, tuple[str, int]] = {}

    def add(self, result: dict[str, Any] | None) -> None:
        """Writes (or downloads) one table here."""
        if result is None:
            return
        file = os.path.join(self.dir, f"part-{result['index']:06d}.sst")
        if "data" in result:
            with open(file, "wb") as f:
                f.write(result["data"])
        else:
            fs, root = _fs(result["url"], self.plan.storage_options)
            fs.get_file(root, file)
        self.files[result["index"]] = (file, result["entries"])

    def ingest(self) -> int:
        """Ingests every table at once; returns the records added."""
        plan = self.plan
        existed = os.path.exists(plan.path)
        db = lamina.open(plan.path, "c")
        try:
            files = [self.files[i][0] for i in sorted(self.files)]
            if files:
                db.ingest(files, move=True)
        except BaseException:
            db.close()
            if not existed:
                lamina.destroy(plan.path)
            raise
        db.close()
        return sum(n for _, n in self.files.values())

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.plan.clean_staging()


def _ingest_task(plan: _Ingest, *results: dict[str, Any] | None) -> int:
    """The last task of ``to_lamina(..., compute=False)`` when Dask runs it
    (``dask.compute``, ``client.compute``, ``persist``): it must run on the
    database's host."""
    if socket.gethostname() != plan.host:
        plan.clean_staging()
        raise lamina.error(
            f"to_lamina's ingest ran on {socket.gethostname()}, but the database {plan.path} is on {plan.host}: "
            "call .compute() on the object to_lamina(..., compute=False) returned, which ingests in the calling "
            "process, or use compute=True"
        )
    return plan.finish(results)


class LaminaWrite(Delayed):
    """What ``to_lamina(..., compute=False)`` returns: a Dask delayed object
    whose ``compute()`` writes every table on the cluster and then ingests
    them in the calling process, returning the number of records written.

    Computed by Dask instead (``dask.compute(w, ...)``, ``client.compute``,
    ``persist``), its last task ingests wherever Dask runs it, which must be
    the database's host (as on a ``LocalCluster``); elsewhere it raises
    ``lamina.error`` and ingests nothing.
    """

    __slots__ = ("_plan", "_parts")

    def __init__(self, key: Any, dsk: Any, plan: _Ingest, parts: list[Delayed]):
        super().__init__(key, dsk)
        self._plan = plan
        self._parts = parts

    def compute(self, **kwargs: Any) -> int:  # type: ignore[override]
        """Writes the tables on the cluster, then ingests them here."""
        plan = self._plan
        client = None if kwargs else _client()
        if client is not None and plan.prefix is None:
            return _stream(client, plan, self._parts)
        try:
            results = dask.compute(*self._parts, **kwargs)
        except BaseException:
            plan.clean_staging()
            raise
        return plan.finish(results)


def _client() -> Any:
    """The distributed Client that ``dask.compute`` would use, if any."""
    get = dask.base.get_scheduler()
    owner = getattr(get, "__self__", None)
    try:
        from distributed import Client
    except ImportError:
        return None
    return owner if isinstance(owner, Client) else None


def _stream(client: Any, plan: _Ingest, parts: list[Delayed]) -> int:
    """Fetches the tables' bytes from the workers one at a time, writing each
    beside the database as it arrives, then ingests them."""
    from distributed import as_completed

    futures = client.compute(parts)
    tables = plan.local()
    try:
        for fut in as_completed(futures):
            tables.add(fut.result())
            fut.release()
        return tables.ingest()
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        tables.close()
