"""The store: run folders of Parquet shards with a manifest, and a DuckDB catalog over them.

Layout under the data directory (``--data DIR``, default ``$PAOHUZI_DATA`` or ``./data``)::

    data/
      paohuzi.duckdb                      catalog: views runs, hands, events (+ code tables)
      runs/
        run=NAME/
          manifest.json                   what the run is and which shards are finished
          hands/part-00000.parquet        one row per hand
          events/part-00000.parquet       one row per action

Safety rules (DESIGN "Shards are atomic"):

* every file is written under a temporary name (``.NAME.tmp-PID``), flushed, fsynced and
  renamed, so a reader never sees half a file;
* the manifest (itself written that way) lists only finished shards, with row counts, sizes
  and SHA-256 checksums; a writer holds ``run=NAME/.lock`` (``flock``, released by the kernel
  even on SIGKILL), and on resume deletes leftover temporary files;
* the catalog is rebuilt in a temporary file and renamed over the old one, so readers holding
  it open (read-only) never block a writer. Its views glob the shard files, so a run appears
  as soon as its first shard is written.

Modules: :mod:`~replay.store.layout` (paths, names, ``--data``), :mod:`~replay.store.files`
(atomic writes, shard files), :mod:`~replay.store.manifest` (manifest, lock),
:mod:`~replay.store.catalog` (the DuckDB catalog) and :mod:`~replay.store.runs` (reading).
The names below are importable from ``replay.store`` itself, loaded on first use.

Readers use :func:`open_store`:

>>> import tempfile
>>> from replay.store import open_store
>>> store = open_store(tempfile.mkdtemp())
>>> store.runs()
[]
>>> con = store.connect()
>>> con.execute("SELECT count(*) FROM hands").fetchone()
(0,)
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "DATA_ENV": "layout",
    "DEFAULT_DATA": "layout",
    "CATALOG_NAME": "layout",
    "MANIFEST_NAME": "layout",
    "MANIFEST_FORMAT": "layout",
    "RUN_NAME_RE": "layout",
    "StoreError": "layout",
    "RunMismatch": "layout",
    "default_data_dir": "layout",
    "data_option": "layout",
    "ensure_writable": "layout",
    "run_dir": "layout",
    "check_run_name": "layout",
    "shard_file": "layout",
    "atomic_write": "files",
    "write_json": "files",
    "PARQUET_OPTIONS": "files",
    "COMPRESSION_LEVEL": "files",
    "parquet_bytes": "files",
    "write_shard_file": "files",
    "cleanup_temp": "files",
    "read_manifest": "manifest",
    "write_manifest": "manifest",
    "RunLock": "manifest",
    "listed_files": "catalog",
    "create_code_tables": "catalog",
    "refresh_catalog": "catalog",
    "HandRecord": "runs",
    "Run": "runs",
    "Store": "runs",
    "open_store": "runs",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"replay.store.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'replay.store' has no attribute {name!r}")
