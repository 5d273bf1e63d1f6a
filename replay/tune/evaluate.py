"""A generation's duels on all cores: the run's process pool (:mod:`replay.pool`) or Ray.

Each table's duel is cut into tasks of whole sessions; the answers are put back in deal order,
so the per-deal differences — and every figure from them — are the same floats for any
number of workers and either backend.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from engine.errors import PaohuziError
from engine.policies import weights as W
from replay.tune.duel import DealDiffs, Duel

#: A task plays at least this many sessions (8 deals each by default): fewer tasks than this
#: would spend more on sending tables than on play.
MIN_TASK_SESSIONS = 16


def _play(
    duel: Duel, table: W.PolicyWeights, seed: int, deals: int, lo: int, hi: int
) -> tuple[np.ndarray, np.ndarray]:
    d = duel.play(table, seed, deals, range(lo, hi))
    return d.score, d.won


def split(n_sessions: int, tables: int, workers: int) -> list[tuple[int, int]]:
    """Session ranges for one table's duel: about two tasks per worker over the whole
    generation, each at least :data:`MIN_TASK_SESSIONS` long.

    >>> split(10, 1, 2)
    [(0, 10)]
    >>> split(64, 1, 2)
    [(0, 16), (16, 32), (32, 48), (48, 64)]
    """
    want = max(1, -(-2 * workers // max(1, tables)))
    parts = max(1, min(want, n_sessions // MIN_TASK_SESSIONS))
    step = -(-n_sessions // parts)
    return [(a, min(a + step, n_sessions)) for a in range(0, n_sessions, step)]


class Evaluator:
    """Plays duels; :meth:`run` returns one :class:`DealDiffs` per table, in order."""

    def __init__(self, duel: Duel, workers: int) -> None:
        self.duel = duel
        self.workers = max(1, workers)

    def run(
        self,
        tables: Sequence[W.PolicyWeights],
        seed: int,
        deals: int,
        progress: Callable[[int], None] | None = None,
    ) -> list[DealDiffs]:
        n_sessions = self.duel.spec(tables[0], seed, deals).n_sessions
        ranges = split(n_sessions, len(tables), self.workers)
        jobs = [(i, a, b) for i in range(len(tables)) for a, b in ranges]
        parts: dict[tuple[int, int], DealDiffs] = {}
        for (i, a, _), (score, won) in self._map(
            [(self.duel, tables[i], seed, deals, a, b) for i, a, b in jobs], jobs
        ):
            parts[(i, a)] = DealDiffs(score, won)
            if progress is not None:
                progress(len(parts))
        return [DealDiffs.join([parts[(i, a)] for a, _ in ranges]) for i in range(len(tables))]

    def tasks(self, tables: int, seed_table: W.PolicyWeights, seed: int, deals: int) -> int:
        """How many tasks :meth:`run` of ``tables`` tables makes (the progress bar's total)."""
        n_sessions = self.duel.spec(seed_table, seed, deals).n_sessions
        return tables * len(split(n_sessions, tables, self.workers))

    def _map(self, args: list[tuple[Any, ...]], keys: list[Any]) -> Iterator[tuple[Any, Any]]:
        return self.imap(_play, args, keys)

    def imap(
        self, fn: Callable[..., Any], args: list[tuple[Any, ...]], keys: list[Any]
    ) -> Iterator[tuple[Any, Any]]:
        """``(key, fn(*a))`` for each task, in the order they finish (``fn`` a module-level
        function: it is sent to the workers by reference)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def describe(self) -> str:
        return f"{self.workers} worker(s)"

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InProcess(Evaluator):
    """One worker: this process."""

    def imap(
        self, fn: Callable[..., Any], args: list[tuple[Any, ...]], keys: list[Any]
    ) -> Iterator[tuple[Any, Any]]:
        for k, a in zip(keys, args):
            yield k, fn(*a)

    def describe(self) -> str:
        return "this process"


class PoolEvaluator(Evaluator):
    """The package's process pool, forked from the warm parent when that is safe."""

    def __init__(self, duel: Duel, workers: int) -> None:
        from replay.pool import process_pool, start_method

        super().__init__(duel, workers)
        self._ctx = process_pool(
            self.workers,
            start_method(fork=True),
            broken=lambda: PaohuziError("a worker process died (out of memory or killed?)"),
        )
        self._ex = self._ctx.__enter__()

    def imap(
        self, fn: Callable[..., Any], args: list[tuple[Any, ...]], keys: list[Any]
    ) -> Iterator[tuple[Any, Any]]:
        from concurrent.futures import as_completed

        futures = {self._ex.submit(fn, *a): k for k, a in zip(keys, args)}
        try:
            for f in as_completed(futures):
                yield futures[f], f.result()
        except BaseException as e:
            # through the pool's context: cancel, stop the workers, name a dead one
            self._ctx.__exit__(type(e), e, e.__traceback__)
            self._ctx = None  # type: ignore[assignment]
            raise

    def close(self) -> None:
        if self._ctx is not None:
            with contextlib.suppress(Exception):
                self._ctx.__exit__(None, None, None)
            self._ctx = None  # type: ignore[assignment]

    def describe(self) -> str:
        return f"{self.workers} worker processes"


class RayEvaluator(Evaluator):
    """Ray tasks on a local instance or a cluster (``replay.record.ray_backend``'s start-up)."""

    def __init__(self, duel: Duel, workers: int | None, address: str | None) -> None:
        from replay.record.ray_backend import RayBackend

        self._backend = RayBackend(address)
        self._backend.open()
        super().__init__(duel, workers or self._backend.cpus())
        ray = self._backend.module
        self._tasks: dict[Any, Any] = {}
        self._duel_ref = ray.put(duel)

    def _map(self, args: list[tuple[Any, ...]], keys: list[Any]) -> Iterator[tuple[Any, Any]]:
        # the duel is in the object store once, not sent with every task
        return self.imap(_play, [(self._duel_ref, *a[1:]) for a in args], keys)

    def imap(
        self, fn: Callable[..., Any], args: list[tuple[Any, ...]], keys: list[Any]
    ) -> Iterator[tuple[Any, Any]]:
        ray = self._backend.module
        from ray.exceptions import RayError

        task = self._tasks.get(fn)
        if task is None:
            task = self._tasks[fn] = ray.remote(fn).options(num_cpus=1, max_retries=3)
        refs = {task.remote(*a): k for k, a in zip(keys, args)}
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for r in ready:
                    try:
                        yield refs[r], ray.get(r)
                    except RayError as e:
                        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                        raise PaohuziError(f"a Ray task failed ({first})") from None
        finally:
            for r in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(r, force=True)

    def close(self) -> None:
        self._backend.close()

    def describe(self) -> str:
        return self._backend.describe()


def open_evaluator(
    duel: Duel, workers: int | None, backend: str = "local", address: str | None = None
) -> Evaluator:
    """The evaluator for ``--backend`` (``local``: this process for one worker, else the
    pool, of the CPU count by default; ``ray``: the cluster's CPUs by default)."""
    from replay.pool import cpu_count

    if backend == "ray":
        return RayEvaluator(duel, workers, address)
    workers = workers or cpu_count()
    if workers <= 1:
        return InProcess(duel, 1)
    return PoolEvaluator(duel, workers)
