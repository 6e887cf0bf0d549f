"""lamina and Dask: write a Dask DataFrame into a lamina database, and read a
database back as a Dask DataFrame, as ``to_parquet`` and ``read_parquet`` do
for Parquet.

``to_lamina(ddf, path)`` turns every row into one record: the key from the
index (or ``key=``), encoded by ``key_encoding``; the value from one column
(``value="col"``: its bytes or UTF-8 text) or from several (``value=[...]``
or ``None`` for all: one msgpack map per row). The frame is range-partitioned
by the *encoded* key, so each partition becomes one table whose keys no other
table holds, and the caller ingests all the tables atomically. Workers need
no shared storage: by default they send the tables' bytes back through Dask,
or they upload them to ``staging`` (any fsspec URL, such as ``s3://...``)
for the caller to download.

``read_lamina(path)`` gives the records as a Dask DataFrame indexed by key,
with known divisions, one partition per table (or ``npartitions``).

Requires the optional extra: ``pip install lamina[dask]``.

The public names are here; the work is in modules by concern: ``_keys``
and ``_values`` (how keys and values become bytes and back), ``_tables``
(the tasks that run on the workers), ``_ingest`` (the caller's side of a
write), ``_write`` (``to_lamina``) and ``_read`` (``read_lamina``).
"""

from __future__ import annotations

from ._ingest import LaminaWrite
from ._keys import KeyEncoding
from ._read import read_lamina
from ._values import ValueFormat
from ._write import to_lamina

__all__ = ["KeyEncoding", "LaminaWrite", "ValueFormat", "read_lamina", "to_lamina"]

# help(), reprs and pickles name the public objects as lamina.dask's own.
LaminaWrite.__module__ = read_lamina.__module__ = to_lamina.__module__ = __name__
