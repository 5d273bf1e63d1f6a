"""The one read-only DuckDB connection of the dashboard, and running a query on it.

The store's checked state is kept and revalidated by :class:`replay.store.snapshot.LiveStore`
(the same code as ``paohuzi serve``'s). The connection
(:func:`replay.store.catalog.open_catalog`) is shared by every session through
``st.cache_resource``; it is rebuilt when the store's generation (its signature) changes (a
run added, removed, resumed or damaged). A DuckDB connection is not thread-safe, so each query runs on its own
``cursor()``. DuckDB errors become :class:`StoreReadError`, one line that the page shows.

The SQL page's typed queries run in a process of their own over a copy of the same catalog
(:mod:`dashboard.services.sqlprocess`), with the limits of :mod:`dashboard.services.sqllimits`
(memory, spill space, threads; rows, bytes and seconds of the result). Every text a page
shows from here names files relative to the store (:func:`redact`), never by the server's
absolute paths.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import streamlit as st

from dashboard.services import sqllimits, sqlprocess
from dashboard.services.paths import Redactor
from dashboard.services.sqllimits import SqlLimits
from dashboard.services.sqlprocess import SqlResult
from replay.store.catalog import open_catalog, prepare_catalog
from replay.store.ducklimits import failure_line
from replay.store.layout import default_data_dir
from replay.store.scan import StoreState
from replay.store.snapshot import LiveStore, refresh_from_env


class StoreReadError(Exception):
    """The store could not be read for a query (a corrupt shard, a vanished file)."""


def data_root() -> str:
    """The data directory: ``$PAOHUZI_DATA`` (set by ``paohuzi dashboard --data``) or ./data."""
    return str(default_data_dir().resolve())


#: One kept state per store, revalidated (:class:`replay.store.snapshot.LiveStore`: the
#: manifests and folders at every render, every file each ``$PAOHUZI_REFRESH`` seconds).
_LIVE: dict[str, LiveStore] = {}
_LIVE_LOCK = threading.Lock()
#: The last states seen, by signature: what a query cached on a signature reads.
_STATES: OrderedDict[tuple[str, str], StoreState] = OrderedDict()
_STATES_MAX = 4


def live_store(root: str) -> LiveStore:
    """The kept state of the store at ``root`` (one per store and process)."""
    with _LIVE_LOCK:
        live = _LIVE.get(root)
        if live is None:
            # no manifests kept: the pages read figures; a hand's page reads its run's
            live = _LIVE[root] = LiveStore(root, refresh_from_env(), manifests=False)
        return live


def _remember(state: StoreState) -> StoreState:
    with _LIVE_LOCK:
        _STATES[(state.root, state.signature)] = state
        _STATES.move_to_end((state.root, state.signature))
        while len(_STATES) > _STATES_MAX:
            _STATES.popitem(last=False)
    return state


def _scan(root: str, sig: str) -> StoreState:
    """The checked store (immutable) of signature ``sig``, while it is one of the last few
    seen; else the store now."""
    with _LIVE_LOCK:
        got = _STATES.get((root, sig))
    return got if got is not None else _remember(live_store(root).state())


_RENDER = threading.local()  # the state of the store of the page render on this thread


@contextlib.contextmanager
def one_signature() -> Any:
    """Within: the store's state is taken once, by the first :func:`store_state`, and every
    later query of this thread reads that state of the store. app.py wraps each page render
    in it, so one render is one consistent state and the next render sees any change."""
    _RENDER.state = None
    _RENDER.active = True
    try:
        yield
    finally:
        _RENDER.active = False
        _RENDER.state = None


def current_signature(root: str) -> str:
    """The store's generation now (:attr:`StoreState.signature` of the kept state)."""
    return _remember(live_store(root).state()).signature


def store_state() -> StoreState:
    """The store now (rescanned only when something changed; one state per page render)."""
    root = data_root()
    if not getattr(_RENDER, "active", False):
        return _remember(live_store(root).state())
    got = _RENDER.state
    if got is None or got.root != root:
        got = _RENDER.state = _remember(live_store(root).state())
    return got


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
#: What :func:`replay.store.catalog.prepare_catalog` said of the store's ``paohuzi.duckdb``
#: (built from other files, not a regular file …) for the prepared state, or None.
_CATALOG_NOTE: dict[tuple[str, str], str | None] = {}


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
        _CATALOG_NOTE.clear()
        _CATALOG_NOTE[(root, sig)] = prepare_catalog(_scan(root, sig), path)
        _PREPARED[(root, sig)] = path
        return path


def catalog_note(state: StoreState) -> str | None:
    """Why the pages do not read the store's own ``paohuzi.duckdb`` (a page message), or
    None: it was current, or there is none (catalog prepared for ``state`` first)."""
    _prepared(state.root, state.signature)
    return _CATALOG_NOTE.get((state.root, state.signature))


def _open(root: str, sig: str, settings: dict[str, str] | None = None) -> duckdb.DuckDBPyConnection:
    con = open_catalog(_scan(root, sig), settings=settings, prepared=_prepared(root, sig))
    _remember_private(con)
    return con


@st.cache_resource(show_spinner=False, max_entries=1)
def _connection(root: str, sig: str) -> duckdb.DuckDBPyConnection:
    return _open(root, sig)


def connection() -> duckdb.DuckDBPyConnection:
    st_ = store_state()
    return _connection(st_.root, st_.signature)


#: Seconds after the store is warm before the SQL page's first query process is opened.
SQL_PREWARM_DELAY = 5.0


def warm() -> None:
    """Check the store and prepare the pages' connection to it before the first page asks,
    then open the SQL page's first query process (:func:`dashboard.services.sqlprocess.prewarm`)
    (:mod:`dashboard.server` calls it in a thread as the server starts; the same caches the
    pages use, under their locks). Whatever fails is left for the pages to say."""
    with contextlib.suppress(Exception):
        state = _remember(live_store(data_root()).state())
        _connection(state.root, state.signature)
        _import_pages()
        if state.usable_runs:
            # not while the first page loads: a query process's start is a second of CPU
            time.sleep(SQL_PREWARM_DELAY)
            prepared = _prepared(state.root, state.signature)
            sqlprocess.prewarm(state=state, prepared=prepared, limits=sql_limits())


#: What the pages import beyond this module (their charts: Altair, some 0.3 s in all):
#: imported by the warm-up, so the first page's run does not wait for them.
PAGE_MODULES = (
    "altair",
    "dashboard.ui",
    "dashboard.charts",
    "dashboard.queries.stats",
    "dashboard.queries.hands",
    "dashboard.services.stats",
    "dashboard.services.filters",
)


def _import_pages() -> None:
    import importlib

    for name in PAGE_MODULES:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def redact(text: str) -> str:
    """``text`` as a page shows it: paths in the store relative to it, the store by its
    label, the dashboard's private files and the home directory hidden
    (:class:`dashboard.services.paths.Redactor`)."""
    return Redactor(data_root(), _PRIVATE)(text)


def sql_limits() -> SqlLimits:
    """The SQL page's limits from the environment (:func:`dashboard.services.sqllimits.from_env`;
    :class:`~dashboard.services.sqllimits.LimitsError` for a bad value)."""
    return sqllimits.from_env(os.environ)


def _one_line(e: Exception) -> str:
    return redact(failure_line(e))


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


def run_user_sql(
    text: str,
    limit: int,
    timeout: float,
    params: dict[str, Any] | None = None,
    limits: SqlLimits | None = None,
) -> SqlResult:
    """Run a statement a person typed (already checked to be one SELECT by
    :func:`dashboard.services.sqlguard.check_select`) in a query process of its own over this
    store's catalog, within the SQL page's limits (:func:`dashboard.services.sqlprocess.run_query`:
    rows, seconds, memory, bytes per value and in all). ``params``: values of the named
    parameters (``$runs`` …) the statement uses, passed as parameters."""
    st_ = store_state()
    return sqlprocess.run_query(
        text,
        state=st_,
        prepared=_prepared(st_.root, st_.signature),
        limits=limits or sql_limits(),
        limit=limit,
        timeout=timeout,
        params=params,
        private=_PRIVATE,
    )
