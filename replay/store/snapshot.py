"""The checked state of a store, kept by a long-lived reader (``paohuzi serve``, the dashboard)
and revalidated: one :class:`LiveStore` per store, the same code for both.

Every :meth:`LiveStore.state` looks again at what every writer of the store changes when it
commits — each run's manifest and table folders, and the ``runs`` folder
(:func:`~replay.store.scan.quick_signature`: a few ``stat`` calls per run) — and rescans the
store when any of them moved. A rescan pays only for the runs that changed
(:func:`~replay.store.scan.scan_store` with its memo). What no writer does, a shard file
edited in place (same size, mtime restored: only its ``ctime`` moves), is found by a
background thread that rescans every ``refresh`` seconds (or, for a store whose recheck
takes longer than a tenth of that, 9 times the recheck's duration: :data:`RECHECK_IDLE`;
default :data:`DEFAULT_REFRESH`,
``paohuzi serve --refresh``, ``paohuzi dashboard --refresh``); the first answer after that
names the run damaged and shows no figure from it.

The kept state holds each run's manifest (what the readers of a run's rows and figures bind
to, :meth:`replay.store.runs.Store.run_in`), read again only when it changed: its memory is
about that of the manifests.

The state's ``signature`` is its generation: it changes whenever a run is added, removed,
resumed, damaged or repaired, and answers keyed on it (the service's ETags and answer cache,
the dashboard's query cache) are never served for another state.

>>> import tempfile
>>> live = LiveStore(tempfile.mkdtemp(), refresh=0)
>>> live.state().runs
()
>>> live.state() is live.state()
True
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from replay.store.scan import StoreState, quick_signature, scan_store

#: Seconds between two full rechecks of every file of the store by a long-lived reader.
DEFAULT_REFRESH = 2.0
#: A background recheck of d seconds is followed by at least this many times d of rest, so it
#: uses at most a tenth of a core however big the store (then the interval is longer).
RECHECK_IDLE = 9.0
#: The environment variable that sets it for ``paohuzi serve`` and the dashboard.
REFRESH_ENV = "PAOHUZI_REFRESH"


def refresh_from_env(default: float = DEFAULT_REFRESH) -> float:
    """The refresh interval from :data:`REFRESH_ENV` (seconds, ≥ 0; 0: no background
    recheck), else ``default``; :class:`ValueError` naming the variable for a bad value."""
    raw = os.environ.get(REFRESH_ENV)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (0 <= value <= 86400):
        raise ValueError(f"{REFRESH_ENV}={raw!r}: give seconds between 0 and 86400")
    return value


class LiveStore:
    """The store at ``root`` as a long-lived reader sees it (module docstring). Thread-safe:
    concurrent callers of :meth:`state` share one rescan. ``refresh``: seconds between two
    background rechecks of every file (0: none; then only a writer's commit is seen).
    ``manifests``: keep each run's manifest (what a reader of rows binds to); without, a
    reader of a run's rows reads its manifest when it needs it."""

    def __init__(
        self, root: str | Path, refresh: float = DEFAULT_REFRESH, manifests: bool = True
    ) -> None:
        self.root = str(Path(root).resolve())
        self.refresh = refresh
        self.manifests = manifests
        self._lock = threading.Lock()  # guards _state, _quick, _stale
        self._scanning = threading.Lock()  # one rescan at a time
        self._state: StoreState | None = None
        self._quick = ""
        self._stale = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.rescans = 0  # how many scans this reader made (tests, benchmarks)

    def state(self) -> StoreState:
        """The store now: the kept state when no manifest, table folder or run folder moved
        and the background recheck found nothing, else a new scan."""
        quick = quick_signature(self.root)
        with self._lock:
            kept = self._state
            if kept is not None and quick == self._quick and not self._stale:
                return kept
        return self._rescan(quick)

    def fresh(self) -> StoreState | None:
        """The kept state when it is still the store's (as :meth:`state` finds it), else
        None: then :meth:`state` scans (a caller on an event loop calls it in a thread)."""
        quick = quick_signature(self.root)
        with self._lock:
            kept = self._state
            if kept is not None and quick == self._quick and not self._stale:
                return kept
        return None

    def current(self) -> StoreState | None:
        """The kept state without looking at the store (None before the first scan)."""
        with self._lock:
            return self._state

    def _rescan(self, quick: str) -> StoreState:
        with self._scanning:
            with self._lock:  # another caller may have rescanned meanwhile
                if self._state is not None and quick == self._quick and not self._stale:
                    return self._state
            # quick is taken before the scan: a commit during the scan moves it again, so
            # the next caller rescans
            state = scan_store(self.root, manifests=self.manifests, reuse=self.current())
            self.rescans += 1
            with self._lock:
                self._state, self._quick, self._stale = state, quick, False
            self._start()
            return state

    def _start(self) -> None:
        if self.refresh > 0 and self._thread is None:
            self._thread = threading.Thread(
                target=self._recheck, name="paohuzi-store-recheck", daemon=True
            )
            self._thread.start()

    def _recheck(self) -> None:
        """Every ``refresh`` seconds (or :data:`RECHECK_IDLE` times the last recheck's
        duration, if longer), scan the store again (stat data only for what did not
        change) and mark the kept state stale when the scan differs from it."""
        pause = self.refresh
        while not self._stop.wait(pause):
            started = time.monotonic()
            try:
                quick = quick_signature(self.root)
                with self._scanning:
                    kept = self.current()
                    state = scan_store(self.root, manifests=self.manifests, reuse=kept)
            except Exception:  # noqa: BLE001 - a failed recheck is retried; readers rescan
                with self._lock:
                    self._stale = True
                continue
            with self._lock:
                if self._state is kept and (kept is None or state.signature != kept.signature):
                    self._state, self._quick, self._stale = state, quick, False
            # at most a tenth of a core: a recheck of d seconds waits 9·d before the next
            # (a 10⁸-hand store's takes about 0.5 s: the 97,662 files are stat'ed each time)
            pause = max(self.refresh, RECHECK_IDLE * (time.monotonic() - started))

    def close(self) -> None:
        """Stop the background recheck."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
