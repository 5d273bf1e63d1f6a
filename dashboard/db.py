"""The one read-only DuckDB connection of the dashboard, and running a query on it.

The connection (:func:`dashboard.catalog.open_catalog`) is shared by every session through
``st.cache_resource``; it is rebuilt when the store's signature changes (a run added or a
shard listed). A DuckDB connection is not thread-safe, so each query runs on its own
``cursor()``. DuckDB errors become :class:`StoreReadError`, one line that the page shows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pandas as pd
import streamlit as st

from dashboard.catalog import open_catalog
from dashboard.services.store import StoreState, scan_store, signature
from replay.store import default_data_dir


class StoreReadError(Exception):
    """The store could not be read for a query (a corrupt shard, a vanished file)."""


def data_root() -> str:
    """The data directory: ``$PAOHUZI_DATA`` (set by ``paohuzi dashboard --data``) or ./data."""
    return str(default_data_dir().resolve())


@st.cache_data(show_spinner=False, max_entries=4)
def _scan(root: str, sig: str) -> StoreState:
    return scan_store(root)


def store_state() -> StoreState:
    """The store now (manifests are re-read only when one of them changed)."""
    root = data_root()
    return _scan(root, signature(root))


@st.cache_resource(show_spinner=False, max_entries=1)
def _connection(root: str, sig: str) -> duckdb.DuckDBPyConnection:
    return open_catalog(_scan(root, sig))


def connection() -> duckdb.DuckDBPyConnection:
    st_ = store_state()
    return _connection(st_.root, st_.signature)


def _one_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def query(sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
    """Run one parameterised statement on a fresh cursor; a DataFrame."""
    cur = connection().cursor()
    try:
        return cur.execute(sql, list(params)).df()
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
    truncated: bool
    seconds: float
    error: str | None = None


def run_user_sql(
    text: str, limit: int, timeout: float, params: dict[str, Any] | None = None
) -> UserResult:
    """Run a statement a person typed (already checked to be one SELECT by
    :func:`dashboard.services.sqlguard.check_select`): at most ``limit`` rows, interrupted
    after ``timeout`` seconds. The connection is read-only and locked (no files, no ATTACH,
    no settings), so the check is a second fence, not the only one. ``params``: values of the
    named parameters (``$runs`` …) the statement uses, passed as parameters."""
    cur = connection().cursor()
    timer = threading.Timer(timeout, cur.interrupt)
    start = time.perf_counter()
    timer.start()
    try:
        cur.execute(text, params or None)
        rows = cur.fetchmany(limit + 1)
        cols = _unique([d[0] for d in cur.description or []])
        frame = pd.DataFrame.from_records(rows[:limit], columns=cols)
        return UserResult(frame, len(rows) > limit, time.perf_counter() - start)
    except duckdb.InterruptException:
        return UserResult(None, False, time.perf_counter() - start, f"stopped after {timeout:g} s")
    except duckdb.Error as e:
        return UserResult(None, False, time.perf_counter() - start, _one_line(e))
    finally:
        timer.cancel()
        cur.close()
