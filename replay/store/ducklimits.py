"""How much memory and spill space the product's own DuckDB connections may use: the catalog
builds (``simulate``, ``index``, the dashboard's start), ``paohuzi stats`` and every page of
the dashboard. Without these, DuckDB would take up to 80 % of the machine's memory and 90 %
of the free disk for one query. The SQL page's connection is a database of its own with its
own limits (:mod:`dashboard.services.sqllimits`; smaller by default), set after these.

Each limit is an environment variable, read when a connection is opened
(:func:`replay.store.catalog.duck_connect`); the command line checks both before a command
starts, so a bad value stops it with one line before anything is written:

============================  ===========  ======================================================
variable                      default      meaning
============================  ===========  ======================================================
``PAOHUZI_DUCKDB_MEMORY``     ``4GiB``     DuckDB ``memory_limit`` (its buffer manager; at least
                                           64 MiB)
``PAOHUZI_DUCKDB_TEMP``       ``16GiB``    DuckDB ``max_temp_directory_size``: what a query may
                                           spill to disk beyond the memory limit
============================  ===========  ======================================================

Sizes are written as for the SQL page (:mod:`replay.store.sizes`). A query that needs more
fails with DuckDB's "out of memory" or "temp directory full" error, named by the command
that ran it, and :func:`failure_line` says which variable lets it through.

>>> duckdb_settings({})
{'memory_limit': '4294967296B', 'max_temp_directory_size': '17179869184B'}
>>> duckdb_settings({"PAOHUZI_DUCKDB_MEMORY": "8GiB"})["memory_limit"]
'8589934592B'
>>> import duckdb
>>> failure_line(duckdb.OutOfMemoryException("Out of Memory Error: could not allocate"), {})
'Out of Memory Error: could not allocate (over PAOHUZI_DUCKDB_MEMORY, 4 GiB: raise it to let the query through)'
>>> failure_line(ValueError("cannot read the store: Out of Memory Error\\nmore"))
'cannot read the store: Out of Memory Error'
>>> duckdb_settings({"PAOHUZI_DUCKDB_MEMORY": "lots"})
Traceback (most recent call last):
...
replay.store.ducklimits.DuckLimitsError: PAOHUZI_DUCKDB_MEMORY='lots' is not a size such as 4GiB or 512MB
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from replay.store.layout import StoreError
from replay.store.sizes import fmt_size, read_limit

__all__ = ["ENV", "DuckLimitsError", "duckdb_settings", "failure_line"]

#: DuckDB setting → (environment variable, default bytes, lowest bytes)
ENV: dict[str, tuple[str, int, int]] = {
    "memory_limit": ("PAOHUZI_DUCKDB_MEMORY", 4 * 1024**3, 64 * 1024**2),
    "max_temp_directory_size": ("PAOHUZI_DUCKDB_TEMP", 16 * 1024**3, 0),
}


class DuckLimitsError(StoreError):
    """A DuckDB limit set to a value that cannot be used; the message names the variable."""


def duckdb_settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``SET`` values of the limits (unset or empty variable: the default);
    :class:`DuckLimitsError` for a value that is not a usable size."""
    env = os.environ if environ is None else environ
    out = {}
    for setting, (var, default, lowest) in ENV.items():
        raw = (env.get(var) or "").strip()
        n = default
        if raw:
            try:
                n = read_limit(var, raw, lowest, "4GiB or 512MB")
            except ValueError as e:
                raise DuckLimitsError(str(e)) from None
        out[setting] = f"{n}B"
    return out


#: text of a DuckDB error → the setting of :data:`ENV` whose limit stopped the query (the
#: spill limit first: DuckDB reports a full temp directory as an out-of-memory error too)
_STOPPED_BY = (("max_temp_directory_size", "max_temp_directory_size"),
               ("Out of Memory", "memory_limit"))  # fmt: skip


def failure_line(error: BaseException, environ: Mapping[str, str] | None = None) -> str:
    """The first line of an error, for a one-line message; DuckDB's error for a query stopped
    by one of the limits also names the variable that raises it and its value in effect (an
    error of ours that quotes it is left as it is)."""
    import duckdb

    text = str(error).strip()
    first = text.splitlines()[0] if text else type(error).__name__
    if not isinstance(error, duckdb.Error):
        return first
    env = os.environ if environ is None else environ
    for marker, setting in _STOPPED_BY:
        if marker in text:
            var, default, _ = ENV[setting]
            value = (env.get(var) or "").strip() or fmt_size(default)
            return f"{first} (over {var}, {value}: raise it to let the query through)"
    return first
