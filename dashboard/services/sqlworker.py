"""The SQL page's query process: the side that runs in the child
(:mod:`dashboard.services.sqlprocess` starts it as ``python -m dashboard.services.sqlworker
READ_FD WRITE_FD`` and talks to it over those two pipes, one pickled request and one answer
at a time). No streamlit.

A typed query runs here, never in the dashboard's process, so no expression can take that
process's memory or time. Here, DuckDB has its ``memory_limit``; the operating system caps
every allocation (``RLIMIT_DATA``, :func:`backstop`), so one huge value built by a single
function, which DuckDB's limit does not see, fails at once; and DuckDB is interrupted at
the time limit. The dashboard also watches this process's resident size and kills it past
the memory limit, or when it has not answered soon after the time limit.

Its catalog connection holds nothing of the host where it can: home, secret, extension
and spill directories are a private temporary folder, extensions are never loaded, Python
objects are never scanned, and ``damaged_runs`` is shadowed by a copy whose reasons name
files relative to the store. What still names the host (the settings, DuckDB's catalog
functions, ``catalog_meta``) is refused by :func:`dashboard.services.sqlguard.check_select`,
here with the catalog's own table names.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import resource
import shutil
import sys
import tempfile
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import duckdb

from dashboard.services import sqllimits
from dashboard.services.paths import Redactor
from dashboard.services.sqlguard import HIDDEN_TABLES, RefusedSQL, check_select
from replay.store.catalog import open_catalog

#: The settings of the SQL connection that the page compares with its limits.
SHOWN_SETTINGS = ("memory_limit", "max_temp_directory_size", "threads")


def _status(field: str) -> int | None:
    """``VmRSS`` (resident) or ``VmData`` (private writable, what ``RLIMIT_DATA`` bounds) of
    this process in bytes; None where ``/proc`` does not tell."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def backstop(memory: int) -> int:
    """How much more than when idle this process may allocate at all during a query
    (``RLIMIT_DATA``): DuckDB's allocator holds far more address space than it touches
    (an ORDER BY within a 256 MiB limit holds 640 MiB), so the resident size is what the
    dashboard watches (:func:`dashboard.services.sqlprocess.resident_cap`); this cap stops a
    single allocation far beyond the limit at once, before any of it is touched.

    >>> backstop(64 * 1024**2) // 1024**2
    1280
    """
    return 4 * memory + 1024**3


def _set_data_limit(n: int | None) -> None:
    """Cap this process's allocations at ``n`` bytes (``None``: lift the cap)."""
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = hard if n is None else n if hard == resource.RLIM_INFINITY else min(n, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class Worker:
    """One catalog connection and the queries run on it."""

    def __init__(self, request: dict[str, Any]) -> None:
        state = request["state"]
        self.private = tempfile.mkdtemp(prefix="paohuzi-dashboard-sql_")
        atexit.register(shutil.rmtree, self.private, True)
        spill = os.path.join(self.private, "spill")
        os.mkdir(spill)
        settings = {
            **request["settings"],
            # nothing of the host in what the connection knows
            "home_directory": self.private,
            "secret_directory": os.path.join(self.private, "secrets"),
            "extension_directory": os.path.join(self.private, "extensions"),
            "temp_directory": spill,
            "autoload_known_extensions": "false",
            "autoinstall_known_extensions": "false",
            "allow_persistent_secrets": "false",
            "python_enable_replacements": "false",
        }
        self.con = open_catalog(state, settings=settings, prepared=Path(request["prepared"]))
        red = Redactor(state.root, (self.private,))
        damaged = self.con.execute("SELECT run, problem FROM damaged_runs").fetchall()
        # a temporary table comes first in DuckDB's search path: `damaged_runs` and
        # `main.damaged_runs` both read this copy
        self.con.execute("CREATE TEMP TABLE damaged_runs (run VARCHAR, problem VARCHAR)")
        if damaged:
            self.con.executemany(
                "INSERT INTO damaged_runs VALUES (?, ?)",
                [(r, red(str(p)) if p is not None else None) for r, p in damaged],
            )
        names = self.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal AND schema_name = 'main'"
            " UNION SELECT view_name FROM duckdb_views() WHERE NOT internal"
            " AND schema_name = 'main'"
        ).fetchall()
        self.tables = {str(n).lower() for (n,) in names} - set(HIDDEN_TABLES)
        rows = self.con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN (?, ?, ?)",
            list(SHOWN_SETTINGS),
        ).fetchall()
        self.settings = {str(n): str(v) for n, v in rows}
        self.idle_rss, self.idle_data = _status("VmRSS"), _status("VmData")

    def hello(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "private": self.private,
            "pid": os.getpid(),
            "rss": self.idle_rss,
        }

    def query(self, req: dict[str, Any]) -> dict[str, Any]:
        """Run one checked statement within the limits; the answer as a dict (see
        :func:`dashboard.services.sqlprocess.run_query`)."""
        try:
            text = check_select(req["text"], self.tables)
        except RefusedSQL as e:
            return {"refused": str(e)}
        # the connection itself, not a cursor: a cursor is a connection of its own, which
        # would not see the temporary damaged_runs (one query at a time runs here)
        cur = self.con
        timer = threading.Timer(float(req["timeout"]), cur.interrupt)
        if self.idle_data is not None:
            _set_data_limit(self.idle_data + backstop(int(req["memory"])))
        timer.start()
        try:
            return self._run(cur, text, req)
        except duckdb.InterruptException:
            return {"stopped": "time"}
        except (duckdb.OutOfMemoryException, MemoryError) as e:
            return {"stopped": "memory", "error": _first_line(e)}
        except duckdb.Error as e:
            if "Out of Memory" in str(e) or "bad allocation" in str(e):
                return {"stopped": "memory", "error": _first_line(e)}
            return {"error": _first_line(e)}
        except RefusedSQL as e:  # the statement wrapped in the limits' projection is too long
            return {"error": str(e)}
        finally:
            timer.cancel()
            _set_data_limit(None)

    def _run(
        self, cur: duckdb.DuckDBPyConnection, text: str, req: dict[str, Any]
    ) -> dict[str, Any]:
        params = req.get("params") or None
        limit, max_cell, max_result = (
            int(req["limit"]),
            int(req["max_cell"]),
            int(req["max_result"]),
        )
        rel = cur.sql(text, params=params)
        cols = _unique([str(c) for c in rel.columns])
        wrapped = sqllimits.bounded_select(text, cols, [str(t.id) for t in rel.types], max_cell)
        check_select(wrapped, self.tables)  # still one SELECT of the same tables
        cur.execute(f"{wrapped} LIMIT {limit + 1}", params)
        rows: list[tuple[Any, ...]] = []
        budget, cut, capped, more = max_result, 0, False, False
        # a batch holds at most about a tenth of the byte limit, so it cannot overshoot far
        per_row = max(1, len(cols)) * 4 * (max_cell + 1)
        batch = max(1, min(1000, max_result // (10 * per_row)))
        while not capped and not more:
            got = cur.fetchmany(batch)
            if not got:
                break
            for raw in got:
                if len(rows) == limit:
                    more = True
                    break
                row, size = [], 0
                for v in raw:
                    v, n, was_cut = sqllimits.fit_cell(v, max_cell)
                    row.append(v)
                    size += n
                    cut += was_cut
                if size > budget:
                    capped = True
                    break
                budget -= size
                rows.append(tuple(row))
        return {
            "columns": cols,
            "rows": rows,
            "truncated": more,
            "cut_cells": cut,
            "size_capped": capped,
        }

    def grown(self, memory: int) -> bool:
        """Whether this process now holds more than half the memory limit beyond its idle
        size (memory DuckDB or Python keep for reuse), or half the backstop: the next query
        would start short of its limits, so the process is retired."""
        rss, data = _status("VmRSS"), _status("VmData")
        return (
            rss is not None and self.idle_rss is not None and rss > self.idle_rss + memory // 2
        ) or (
            data is not None
            and self.idle_data is not None
            and data > self.idle_data + backstop(memory) // 2
        )


def _unique(names: list[str]) -> list[str]:
    """Column names made unique (``x``, ``x_2``, …): a table cannot show two ``x``.

    >>> _unique(["x", "y", "x"])
    ['x', 'y', 'x_2']
    """
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}_{seen[n]}")
    return out


def serve(rx: Connection, tx: Connection) -> None:
    """Answer requests until the dashboard closes the pipe: ``open`` first, then ``query``."""
    worker: Worker | None = None
    while True:
        try:
            req = pickle.loads(rx.recv_bytes())
        except EOFError:
            return
        retire = False
        if req.get("kind") == "open":
            try:
                worker = Worker(req)
                answer = {"ok": True, **worker.hello()}
            except (duckdb.Error, OSError) as e:
                answer = {"error": _first_line(e)}
        elif worker is None:
            answer = {"error": "the query process has no catalog"}
        else:
            answer = worker.query(req)
            retire = "stopped" in answer or worker.grown(int(req["memory"]))
        answer["retire"] = retire
        tx.send_bytes(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
        if retire:
            return


def main(argv: list[str]) -> int:
    rx = Connection(int(argv[0]), writable=False)
    tx = Connection(int(argv[1]), readable=False)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the dashboard went away
        serve(rx, tx)
    return 0


if __name__ == "__main__":  # pragma: no cover - run by sqlprocess in a child process
    sys.exit(main(sys.argv[1:]))
