"""The package's one process pool (``simulate``'s shards, ``verify``'s shards, ``index``'s
summaries): :func:`process_pool` starts it with a chosen start method, prepares each worker
the same way and stops it the same way, whatever the work.

* **Start method.** ``spawn`` by default: a fresh interpreter, safe from any state of this
  process. :func:`start_method` gives ``fork`` instead when asked for and safe (the platform
  has it and this process runs no other thread: a thread holding a lock at the fork would
  leave it held in the child), for a caller whose warm parent is worth inheriting (a forked
  worker is ready in milliseconds, a spawned one takes seconds to import and load kernels).
* **Workers** ignore Ctrl-C (the parent handles it) and, on Linux, die with the parent, so a
  killed command leaves no orphans finishing work behind the back of the next one; then the
  caller's ``initializer`` runs.
* **Stopping.** On leaving the ``with`` block normally, the pool waits for its workers. On an
  exception (Ctrl-C included), work not yet started is cancelled, the running workers are
  terminated (``terminate=True``) or left to finish their task, and the exception goes on; a
  dead worker (``BrokenProcessPool``) becomes ``broken()`` when the caller gives it.

>>> with process_pool(2) as ex:
...     sorted(ex.map(abs, [-2, 1]))
[1, 2]
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

__all__ = ["SharedPool", "cpu_count", "die_with_parent", "process_pool", "start_method"]


def cpu_count() -> int:
    """The CPUs this process may run on: its affinity where the platform tells it (a container
    or ``taskset`` may allow fewer than the machine has), else the machine's count. Every
    default worker count and every cap on one is this number.

    >>> cpu_count() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without affinity (macOS, Windows)
        return os.cpu_count() or 1


def start_method(fork: bool = False) -> str:
    """``fork`` when ``fork`` is asked for and safe (above), else ``spawn``."""
    if fork and "fork" in mp.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


@contextlib.contextmanager
def process_pool(
    workers: int,
    method: str = "spawn",
    initializer: Callable[..., object] | None = None,
    initargs: tuple[Any, ...] = (),
    *,
    terminate: bool = True,
    broken: Callable[[], BaseException] | None = None,
) -> Iterator[ProcessPoolExecutor]:
    """A ``ProcessPoolExecutor`` of ``workers`` processes started by ``method`` (``spawn`` or
    ``fork``; see :func:`start_method`), each running ``initializer(*initargs)`` after the
    common set-up, and stopped as the module says: on an exception, pending work cancelled,
    running workers terminated if ``terminate``, ``BrokenProcessPool`` raised as ``broken()``
    (from None) if given."""
    ex = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=mp.get_context(method),
        initializer=_start_worker,
        initargs=(initializer, initargs),
    )
    try:
        yield ex
    except BaseException as e:
        if terminate:
            # Stop workers now rather than let them finish work nobody will collect.
            for p in list((getattr(ex, "_processes", None) or {}).values()):
                with contextlib.suppress(Exception):
                    p.terminate()
        ex.shutdown(wait=True, cancel_futures=True)
        if broken is not None and isinstance(e, BrokenProcessPool):
            raise broken() from None
        raise
    ex.shutdown(wait=True)


class SharedPool:
    """One pool for a command's several pieces of work (``paohuzi index`` over many runs),
    started on the first :meth:`get`, so its workers start once, not once per run. Used as a
    context manager around the whole command, stopped as :func:`process_pool` stops."""

    def __init__(self, workers: int, method: str = "spawn", *, terminate: bool = True) -> None:
        self.workers, self.method, self.terminate = workers, method, terminate
        self._stack = contextlib.ExitStack()
        self._pool: ProcessPoolExecutor | None = None

    def get(self) -> ProcessPoolExecutor:
        """The pool, started on the first call."""
        if self._pool is None:
            cm = process_pool(self.workers, self.method, terminate=self.terminate)
            self._pool = self._stack.enter_context(cm)
        return self._pool

    def __enter__(self) -> SharedPool:
        self._stack.__enter__()
        return self

    def __exit__(self, *exc: Any) -> bool | None:
        return self._stack.__exit__(*exc)


def _start_worker(initializer: Callable[..., object] | None, initargs: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    die_with_parent()
    if initializer is not None:
        initializer(*initargs)


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``); elsewhere
    nothing."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent already died before prctl took effect
            os._exit(1)
