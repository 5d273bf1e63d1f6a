"""The SQL page's query processes, from the dashboard's side: a typed query runs in a child
process (:mod:`dashboard.services.sqlworker`), never in the dashboard's, so its limits hold
for any expression. No streamlit.

* **Memory**: DuckDB's ``memory_limit`` is ``PAOHUZI_SQL_MEMORY``; the dashboard watches the
  child's resident size and kills it past :func:`resident_cap` (its idle size, the limit and
  a quarter more), and the operating system refuses any allocation far beyond it
  (:func:`dashboard.services.sqlworker.backstop`). So a value built by one function, which
  DuckDB's limit does not see (``repeat('x', 1500000000)``), is stopped too, and whatever the
  query builds, the dashboard's own process grows by no more than the bounded result.
* **Time**: DuckDB is interrupted at the time limit; a child that has not answered
  :data:`GRACE_SECONDS` later (a function that does not look at the interrupt) is killed.
* Either way the result is one line: "Query stopped after 10 s, the time limit …" or
  "Query stopped at the memory limit of 1 GiB …", and the next query runs in a fresh process.

A child that answered normally is kept for the next query on the same catalog (opening
one costs about a second); at most :data:`MAX_RUNNING` queries run at a time, each in a
process of its own.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pandas as pd

from dashboard.services.paths import Redactor
from dashboard.services.sqllimits import SqlLimits, fmt_size
from replay.store.scan import StoreState

#: Seconds a new query process may take to open its catalog before it is given up.
START_SECONDS = 120.0
#: Seconds after the time limit before a query process that has not answered is killed.
GRACE_SECONDS = 1.0
#: Queries running at a time; one more waits (within its time limit) for one to finish.
MAX_RUNNING = 2
#: Query processes kept open for the next query.
MAX_IDLE = 2

#: Seconds between two looks at a running query's resident size.
WATCH_SECONDS = 0.02

_ROOT = Path(__file__).resolve().parents[2]
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_cap(idle: int, memory: int) -> int:
    """The resident size at which a query process is killed: its idle size, the memory limit
    (DuckDB's ``memory_limit``) and a quarter more plus 64 MiB for what DuckDB and Python
    hold beside DuckDB's buffers (a query within DuckDB's limit stays below it).

    >>> resident_cap(200 * 1024**2, 1024**3) // 1024**2
    1544
    """
    return idle + memory + memory // 4 + 64 * 1024**2


@dataclass(frozen=True)
class SqlResult:
    """What a query typed into the SQL page gave."""

    frame: pd.DataFrame | None
    truncated: bool  # stopped at the row limit
    seconds: float
    error: str | None = None  # the one line the page shows instead of a result
    cut_cells: int = 0  # values cut to the cell limit
    size_capped: bool = False  # stopped at the result's byte limit
    stopped: str | None = None  # "time" or "memory": stopped at that limit
    refused: bool = False  # not run: the statement reads what the page does not show
    settings: Mapping[str, str] = field(default_factory=dict)  # DuckDB's, as it writes them


class _Child:
    """One query process and its two pipes."""

    def __init__(self, key: tuple[str, tuple[tuple[str, str], ...]]) -> None:
        self.key = key
        self.hello: dict[str, Any] = {}
        r_req, w_req = os.pipe()
        r_ans, w_ans = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH")) if p)
        try:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-P",
                    "-m",
                    "dashboard.services.sqlworker",
                    str(r_req),
                    str(w_ans),
                ],
                pass_fds=(r_req, w_ans),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # a library's stray output is no part of an answer
                env=env,
            )
        except OSError:
            for fd in (w_req, r_ans):
                os.close(fd)
            raise
        finally:
            os.close(r_req)
            os.close(w_ans)
        self.tx = Connection(w_req, readable=False)
        self.rx = Connection(r_ans, writable=False)

    def ask(
        self, request: dict[str, Any], seconds: float, max_bytes: int, cap: int | None = None
    ) -> dict[str, Any] | str:
        """The answer to ``request`` within ``seconds``; else why not, the process then
        killed: ``"timeout"``, ``"memory"`` (its resident size passed ``cap`` bytes) or
        ``"died"``."""
        try:
            self.tx.send_bytes(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
            end = time.monotonic() + seconds
            while not self.rx.poll(max(0.0, min(WATCH_SECONDS, end - time.monotonic()))):
                if cap is not None and (self.resident() or 0) > cap:
                    self.kill()
                    return "memory"
                if time.monotonic() >= end:
                    self.kill()
                    return "timeout"
            answer = pickle.loads(self.rx.recv_bytes(max_bytes))
        except (OSError, EOFError, pickle.UnpicklingError):
            self.kill()
            return "died"
        return answer if isinstance(answer, dict) else "died"

    def resident(self) -> int | None:
        """The process's resident size in bytes (Linux), None where it cannot be read."""
        try:
            with open(f"/proc/{self.proc.pid}/statm", encoding="ascii") as f:
                return int(f.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._close()

    def close(self) -> None:
        """End the process as it ends itself, by closing its pipe (killed if it does not)."""
        self._close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()

    def _close(self) -> None:
        for c in (self.tx, self.rx):
            with contextlib.suppress(OSError):
                c.close()
        # a killed process leaves its private folder (its spill files among them)
        private = str(self.hello.get("private", ""))
        if os.path.basename(private).startswith("paohuzi-dashboard-sql_"):
            shutil.rmtree(private, ignore_errors=True)

    def how_it_ended(self) -> str:
        code = self.proc.poll()
        if code is not None and code < 0:
            return f"signal {-code}"
        return f"exit status {code}" if code is not None else "no answer"


_LOCK = threading.Lock()
_IDLE: list[_Child] = []
_SLOTS = threading.BoundedSemaphore(MAX_RUNNING)


@atexit.register
def close_all() -> None:
    """End every idle query process (a busy one ends when its pipe closes)."""
    with _LOCK:
        idle = list(_IDLE)
        _IDLE.clear()
    for c in idle:
        c.close()


def _take(key: tuple[str, tuple[tuple[str, str], ...]], opening: dict[str, Any]) -> _Child | str:
    with _LOCK:
        for i, c in enumerate(_IDLE):
            if c.key == key and c.alive():
                return _IDLE.pop(i)
    try:
        child = _Child(key)
    except OSError as e:
        return f"the query process could not be started ({e.strerror or e})"
    hello = child.ask(opening, START_SECONDS, 1 << 20)
    if isinstance(hello, str) or not hello.get("ok"):
        why = hello.get("error") if isinstance(hello, dict) else None
        child.kill()
        return f"the query process could not open the catalog ({why or child.how_it_ended()})"
    child.hello = hello
    return child


def prewarm(*, state: StoreState, prepared: Path, limits: SqlLimits) -> bool:
    """Open a query process on the catalog file ``prepared`` (of ``state``) with ``limits``'
    settings and keep it idle, so the SQL page's first query (the page runs its example when
    it opens) does not wait for one to start and open the catalog (a second or two; more with
    the store's files and Python's on disk). Whether one is kept for it now."""
    settings = tuple(limits.duckdb_settings().items())
    key = (str(prepared), settings)
    with _LOCK:
        if any(c.key == key and c.alive() for c in _IDLE):
            return True
    opening = {
        "kind": "open",
        "state": state,
        "prepared": str(prepared),
        "settings": dict(settings),
    }
    child = _take(key, opening)
    if isinstance(child, str):
        return False
    _give(child)
    return True


def _give(child: _Child) -> None:
    with _LOCK:
        _IDLE.append(child)
        # a catalog file of an older state of the store is gone: its processes are not needed
        stale = [c for c in _IDLE if not c.alive() or not os.path.exists(c.key[0])]
        for c in stale:
            _IDLE.remove(c)
        while len(_IDLE) > MAX_IDLE:
            stale.append(_IDLE.pop(0))
    for c in stale:
        c.close()


def run_query(
    text: str,
    *,
    state: StoreState,
    prepared: Path,
    limits: SqlLimits,
    limit: int,
    timeout: float,
    params: Mapping[str, Any] | None = None,
    private: Iterable[str] = (),
) -> SqlResult:
    """Run a statement a person typed (checked by
    :func:`dashboard.services.sqlguard.check_select`) in a query process over the catalog
    file ``prepared`` (:func:`replay.store.catalog.prepare_catalog` of ``state``): at most
    ``limit`` rows, stopped after ``timeout`` seconds or at the memory limit, no value longer
    than the cell limit, no more bytes than the result limit. Texts are shown with the
    server's paths rewritten (:class:`~dashboard.services.paths.Redactor`; ``private``:
    files of the dashboard's own, never shown)."""
    start = time.perf_counter()
    settings = tuple(limits.duckdb_settings().items())

    def result(error: str, **kw: Any) -> SqlResult:
        return SqlResult(None, False, time.perf_counter() - start, error, **kw)

    if not _SLOTS.acquire(timeout=timeout):
        return result(f"Not run: {MAX_RUNNING} other queries are running; try again")
    try:
        opening = {
            "kind": "open",
            "state": state,
            "prepared": str(prepared),
            "settings": dict(settings),
        }
        child = _take((str(prepared), settings), opening)
        if isinstance(child, str):
            return result(f"Query failed: {Redactor(state.root, private)(child)}")
        red = Redactor(state.root, (*private, str(child.hello.get("private", ""))))
        have = dict(child.hello.get("settings", {}))
        request = {
            "kind": "query",
            "text": text,
            "params": dict(params or {}),
            "limit": int(limit),
            "timeout": float(timeout),
            "memory": limits.memory,
            "max_cell": limits.max_cell,
            "max_result": limits.max_result,
        }
        idle = child.hello.get("rss")
        cap = resident_cap(int(idle), limits.memory) if isinstance(idle, int) else None
        started = time.perf_counter()
        answer = child.ask(
            request, timeout + GRACE_SECONDS, 4 * limits.max_result + (16 << 20), cap
        )
        if isinstance(answer, str):
            child.kill()
        elif answer.get("retire") or not child.alive():
            child.close()  # it ends itself after a query that stopped or left it large
        else:
            _give(child)
    finally:
        _SLOTS.release()
    if answer == "died" and time.perf_counter() - started >= timeout:
        answer = "timeout"  # killed at the time limit (by us, or ended meanwhile)
    if answer == "timeout" or (isinstance(answer, dict) and answer.get("stopped") == "time"):
        return result(
            f"Query stopped after {timeout:g} s, the time limit (the box above; at most"
            f" {limits.max_seconds} s, PAOHUZI_SQL_MAX_SECONDS)",
            stopped="time",
            settings=have,
        )
    if answer == "memory":
        return result(
            f"Query stopped at the memory limit of {fmt_size(limits.memory)}"
            f" (PAOHUZI_SQL_MEMORY): its process grew past {(cap or 0) / 1024**2:,.0f} MiB"
            " — aggregate more, or select fewer rows or columns",
            stopped="memory",
            settings=have,
        )
    if isinstance(answer, str):
        return result(
            f"Query stopped: its process ended ({child.how_it_ended()}), perhaps at the"
            f" memory limit of {fmt_size(limits.memory)} (PAOHUZI_SQL_MEMORY)",
            stopped="memory",
            settings=have,
        )
    if answer.get("refused"):
        return result(f"Not run: {red(str(answer['refused']))}", refused=True, settings=have)
    if answer.get("stopped") == "memory":
        return result(
            f"Query stopped at the memory limit of {fmt_size(limits.memory)}"
            f" (PAOHUZI_SQL_MEMORY; {fmt_size(limits.temp)} to spill to disk,"
            f" PAOHUZI_SQL_TEMP): {red(str(answer.get('error', '')))} — aggregate more, or"
            " select fewer rows or columns",
            stopped="memory",
            settings=have,
        )
    if answer.get("error"):
        return result(f"Query failed: {red(str(answer['error']))}", settings=have)
    rows = [
        tuple(red(v) if isinstance(v, str) and red.touches(v) else v for v in row)
        for row in answer["rows"]
    ]
    return SqlResult(
        pd.DataFrame.from_records(rows, columns=answer["columns"]),
        bool(answer["truncated"]),
        time.perf_counter() - start,
        cut_cells=int(answer["cut_cells"]),
        size_capped=bool(answer["size_capped"]),
        settings=have,
    )
