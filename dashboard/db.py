"""The one read-only DuckDB connection of the dashboard, and running a query on it.

The connection (:func:`replay.store.catalog.open_catalog`) is shared by every session through
``st.cache_resource``; it is rebuilt when the store's signature changes (a run added or a
shard listed). A DuckDB connection is not thread-safe, so each query runs on its own
``cursor()``. DuckDB errors become :class:`StoreReadError`, one line that the page shows.

The SQL page's typed queries run on a connection of their own, with the limits of
:mod:`dashboard.services.sqllimits` (memory, spill space, threads; rows, bytes and seconds of
the result). Every text a page shows from here names files relative to the store
(:func:`redact`), never by the server's absolute paths.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import streamlit as st

from dashboard.services import sqllimits
from dashboard.services.paths import Redactor
from dashboard.services.sqlguard import RefusedSQL, check_select
from dashboard.services.sqllimits import SqlLimits
from replay.store.catalog import open_catalog, prepare_catalog
from replay.store.layout import default_data_dir
from replay.store.scan import StoreState, quick_signature, scan_store, signature


class StoreReadError(Exception):
    """The store could not be read for a query (a corrupt shard, a vanished file)."""


def data_root() -> str:
    """The data directory: ``$PAOHUZI_DATA`` (set by ``paohuzi dashboard --data``) or ./data."""
    return str(default_data_dir().resolve())


@st.cache_resource(show_spinner=False, max_entries=4)
def _scan(root: str, sig: str) -> StoreState:
    """The checked store (immutable), shared like the connection built from it: both are
    made once per store signature, not once per emptied data cache. Its ``signature`` is
    ``sig`` (:func:`current_signature`), the key the pages' queries are cached on."""
    return dataclasses.replace(scan_store(root), signature=sig)


_RENDER = threading.local()  # the signature of the page render on this thread, if any


@contextlib.contextmanager
def one_signature() -> Any:
    """Within: the store's signature (:func:`current_signature`) is taken once, by the
    first :func:`store_state`, and every later query of this thread reads that state of
    the store. app.py wraps each page render in it, so one render is one consistent state
    and the next render sees any change."""
    _RENDER.sig = None
    _RENDER.active = True
    try:
        yield
    finally:
        _RENDER.active = False
        _RENDER.sig = None


#: How often, at most, the full signature (a stat of every shard file) is taken again while
#: the quick one (manifests and table folders) is unchanged: an edit in place of a shard file,
#: which no writer of the store does, is noticed within this many seconds; anything else
#: (a shard added or replaced, a manifest rewritten) at the next render.
FULL_SIGNATURE_EVERY = 10.0
_FULL: dict[str, tuple[str, float, str]] = {}  # root: (quick signature, when, full signature)
_FULL_LOCK = threading.Lock()


def current_signature(root: str) -> str:
    """The store's signature for the dashboard: :func:`replay.store.scan.quick_signature`
    with the full :func:`~replay.store.scan.signature`, which is taken again when the quick
    one changed or every :data:`FULL_SIGNATURE_EVERY` seconds."""
    quick = quick_signature(root)
    now = time.monotonic()
    with _FULL_LOCK:
        got = _FULL.get(root)
    if got is None or got[0] != quick or now - got[1] > FULL_SIGNATURE_EVERY:
        got = (quick, now, signature(root))
        with _FULL_LOCK:
            _FULL[root] = got
    return f"{quick}{got[2]}"


def _signature(root: str) -> str:
    if not getattr(_RENDER, "active", False):
        return current_signature(root)
    got = _RENDER.sig
    if got is None or got[0] != root:
        got = (root, current_signature(root))
        _RENDER.sig = got
    return got[1]


def store_state() -> StoreState:
    """The store now (manifests are re-read only when one of them changed)."""
    root = data_root()
    return _scan(root, _signature(root))


def state_at(sig: str) -> StoreState:
    """The store as of signature ``sig`` (what a cached query keyed on ``sig`` reads),
    without taking the signature again."""
    return _scan(data_root(), sig)


#: Files of the dashboard's own connections (the temporary catalog, its spill folder): never
#: shown on a page.
_PRIVATE: set[str] = set()


def _remember_private(con: duckdb.DuckDBPyConnection) -> None:
    cur = con.cursor()
    try:
        rows = cur.execute(
            "SELECT path FROM duckdb_databases() WHERE path IS NOT NULL"
            " UNION ALL SELECT current_setting('temp_directory')"
        ).fetchall()
    except duckdb.Error:  # pragma: no cover - both exist in every DuckDB the project uses
        rows = []
    finally:
        cur.close()
    for (p,) in rows:
        if p and os.path.isabs(str(p)):
            _PRIVATE.add(str(p))


#: The prepared catalog file (replay.store.catalog.prepare_catalog) per store signature: the
#: page connection and the SQL page's connection are each a copy of it.
_PREPARED: dict[tuple[str, str], Path] = {}
_PREPARED_LOCK = threading.Lock()


def _prepared(root: str, sig: str) -> Path:
    with _PREPARED_LOCK:
        path = _PREPARED.get((root, sig))
        if path is not None and path.exists():
            return path
        for old in _PREPARED.values():  # an older state of the store: not needed again
            with contextlib.suppress(OSError):
                old.unlink()
        _PREPARED.clear()
        folder = Path(tempfile.mkdtemp(prefix="paohuzi-catalog-"))
        atexit.register(shutil.rmtree, folder, True)
        path = folder / "catalog.duckdb"
        _PRIVATE.update((str(folder), str(path)))  # never shown on a page
        prepare_catalog(_scan(root, sig), path)
        _PREPARED[(root, sig)] = path
        return path


def _open(root: str, sig: str, settings: dict[str, str] | None = None) -> duckdb.DuckDBPyConnection:
    con = open_catalog(_scan(root, sig), settings=settings, prepared=_prepared(root, sig))
    _remember_private(con)
    return con


@st.cache_resource(show_spinner=False, max_entries=1)
def _connection(root: str, sig: str) -> duckdb.DuckDBPyConnection:
    return _open(root, sig)


@st.cache_resource(show_spinner=False, max_entries=1)
def _sql_connection(
    root: str, sig: str, settings: tuple[tuple[str, str], ...]
) -> duckdb.DuckDBPyConnection:
    return _open(root, sig, dict(settings))


def connection() -> duckdb.DuckDBPyConnection:
    st_ = store_state()
    return _connection(st_.root, st_.signature)


def redact(text: str) -> str:
    """``text`` as a page shows it: paths in the store relative to it, the store by its
    label, the dashboard's private files and the home directory hidden
    (:class:`dashboard.services.paths.Redactor`)."""
    return Redactor(data_root(), _PRIVATE)(text)


def sql_limits() -> SqlLimits:
    """The SQL page's limits from the environment (:func:`dashboard.services.sqllimits.from_env`;
    :class:`~dashboard.services.sqllimits.LimitsError` for a bad value)."""
    return sqllimits.from_env(os.environ)


def sql_connection(limits: SqlLimits) -> duckdb.DuckDBPyConnection:
    """The SQL page's connection: the same catalog, opened with ``limits``' DuckDB settings."""
    st_ = store_state()
    return _sql_connection(st_.root, st_.signature, tuple(limits.duckdb_settings().items()))


def sql_settings_in_effect(limits: SqlLimits) -> tuple[dict[str, str], list[str]]:
    """The DuckDB settings the SQL page's connection has (as DuckDB writes them), and one
    line for each that differs from ``limits``."""
    cur = sql_connection(limits).cursor()
    try:
        rows = cur.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN"
            " ('memory_limit', 'max_temp_directory_size', 'threads')"
        ).fetchall()
    finally:
        cur.close()
    have = {str(n): str(v) for n, v in rows}
    want = limits.duckdb_settings()
    off = []
    for name, value in want.items():
        got = have.get(name, "?")
        a, b = sqllimits.parse_size(got), sqllimits.parse_size(value)
        same = a is not None and b is not None and abs(a - b) <= max(1, b) * 0.01
        if not same:
            off.append(f"{name} is {got}, not {value}")
    return have, off


def _one_line(e: Exception) -> str:
    text = str(e).strip()
    return redact(text.splitlines()[0] if text else type(e).__name__)


def query(sql: str, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Run one statement (its ``$name`` parameters' values in ``params``) on a fresh cursor;
    a DataFrame."""
    cur = connection().cursor()
    try:
        return cur.execute(sql, dict(params or {})).df()
    except duckdb.Error as e:
        raise StoreReadError(f"cannot read the store: {_one_line(e)}") from None
    finally:
        cur.close()


def _unique(names: list[str]) -> list[str]:
    """Column names made unique (``x``, ``x_2``, …): a table cannot show two ``x``."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}_{seen[n]}")
    return out


@dataclass(frozen=True)
class UserResult:
    """What a query typed into the SQL page gave."""

    frame: pd.DataFrame | None
    truncated: bool  # stopped at the row limit
    seconds: float
    error: str | None = None
    cut_cells: int = 0  # values cut to the cell limit
    size_capped: bool = False  # stopped at the result's byte limit


def _hint(e: duckdb.Error, limits: SqlLimits) -> str:
    if isinstance(e, duckdb.OutOfMemoryException) or "Out of Memory" in str(e):
        return (
            f" — the SQL page's DuckDB may use {sqllimits.fmt_size(limits.memory)} of memory"
            f" and {sqllimits.fmt_size(limits.temp)} of disk to spill to"
            " (PAOHUZI_SQL_MEMORY, PAOHUZI_SQL_TEMP); aggregate more, or select fewer rows"
        )
    return ""


def run_user_sql(
    text: str,
    limit: int,
    timeout: float,
    params: dict[str, Any] | None = None,
    limits: SqlLimits | None = None,
) -> UserResult:
    """Run a statement a person typed (already checked to be one SELECT by
    :func:`dashboard.services.sqlguard.check_select`) on the SQL page's connection: at most
    ``limit`` rows, interrupted after ``timeout`` seconds, no value longer than the cell
    limit (cut in DuckDB, with a count of the cuts), no more bytes than the result limit.
    The connection is read-only and locked (no files, no ATTACH, no settings), so the check
    is a second fence, not the only one. ``params``: values of the named parameters
    (``$runs`` …) the statement uses, passed as parameters."""
    lim = limits or sql_limits()
    red = Redactor(data_root(), _PRIVATE)
    cur = sql_connection(lim).cursor()
    timer = threading.Timer(timeout, cur.interrupt)
    start = time.perf_counter()
    timer.start()
    try:
        rel = cur.sql(text, params=params or None)
        cols = _unique([str(c) for c in rel.columns])
        wrapped = sqllimits.bounded_select(text, cols, [str(t.id) for t in rel.types], lim.max_cell)
        check_select(wrapped)  # still one SELECT
        cur.execute(f"{wrapped} LIMIT {int(limit) + 1}", params or None)
        rows: list[tuple[Any, ...]] = []
        budget, cut, capped, more = lim.max_result, 0, False, False
        # a batch holds at most about a tenth of the byte limit, so it cannot overshoot far
        per_row = max(1, len(cols)) * 4 * (lim.max_cell + 1)
        batch = max(1, min(1000, lim.max_result // (10 * per_row)))
        while not capped:
            got = cur.fetchmany(batch)
            if not got:
                break
            for raw in got:
                if len(rows) == limit:
                    more = True
                    break
                row, size = [], 0
                for v in raw:
                    v, n, was_cut = sqllimits.fit_cell(v, lim.max_cell)
                    if isinstance(v, str):
                        v = red(v) if red.touches(v) else v
                    row.append(v)
                    size += n
                    cut += was_cut
                if size > budget:
                    capped = True
                    break
                budget -= size
                rows.append(tuple(row))
            if more:
                break
        frame = pd.DataFrame.from_records(rows, columns=cols)
        return UserResult(
            frame, more, time.perf_counter() - start, cut_cells=cut, size_capped=capped
        )
    except duckdb.InterruptException:
        return UserResult(None, False, time.perf_counter() - start, f"stopped after {timeout:g} s")
    except duckdb.Error as e:
        return UserResult(None, False, time.perf_counter() - start, _one_line(e) + _hint(e, lim))
    except RefusedSQL as e:  # the statement wrapped in the limits' projection is too long
        return UserResult(None, False, time.perf_counter() - start, str(e))
    finally:
        timer.cancel()
        cur.close()
