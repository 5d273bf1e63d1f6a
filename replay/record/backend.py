"""Where shards are played: a :class:`Backend` is given a :class:`Work` (the shards to play)
and plays each with :func:`replay.record.shard.play_shard`. :class:`LocalBackend` plays them
inline or in a process pool (:func:`replay.pool.process_pool`, spawned workers);
``replay.record.ray_backend.RayBackend`` as Ray tasks. Whatever the backend, a shard's files
are written where it is played (:func:`replay.store.write.write_shard`) and only the calling
process lists them, through ``Work.commit`` (the run's writer:
:meth:`replay.store.write.RunWriter.commit`)."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from multiprocessing import RawArray
from pathlib import Path
from typing import Any

from replay import store
from replay.pool import cpu_count, process_pool
from replay.record.shard import play_shard
from replay.record.spec import RunError, RunSpec

__all__ = ["Backend", "LocalBackend", "Work", "cap_workers"]

#: How often the parent looks at the workers' progress (seconds).
POLL_SECONDS = 0.2
WORKER_DIED = (
    "a worker process died (killed, or out of memory); the store keeps every finished shard:"
    " run the same command again to resume"
)


@dataclass
class Work:
    """What a backend is asked to do: play the shards ``todo`` of ``spec`` into ``path``.

    The backend calls ``commit(entry)`` in this process for every finished shard (the
    manifest entry :func:`play_shard` returns; ``commit`` ignores an index it already has)
    and, for the progress bar, ``running(hands)`` with the hands played so far in shards not
    yet committed.
    """

    spec: RunSpec
    todo: list[int]
    path: Path
    commit: Callable[[dict[str, Any]], bool]
    running: Callable[[int], None]


class Backend:
    """Where shards are played. :meth:`run` returns when every shard of the work is committed
    and raises :class:`RunError` (or ``KeyboardInterrupt``) otherwise, having stopped what it
    started. Subclasses: :class:`LocalBackend`, ``replay.record.ray_backend.RayBackend``."""

    name = "?"

    def open(self) -> None:
        """Connect (or start) what :meth:`run` needs; called once, before :meth:`cpus`."""

    def close(self) -> None:
        """Release what :meth:`open` took."""

    def cpus(self) -> int:
        """How many shards can be played at once (the cap on ``--workers``)."""
        raise NotImplementedError

    def describe(self) -> str:
        """One line for the user: where the work runs."""
        return f"{self.name}: {self.cpus()} CPUs"

    def run(self, work: Work, workers: int) -> None:
        raise NotImplementedError

    def __enter__(self) -> Backend:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cap_workers(workers: int, backend: Backend) -> tuple[int, str | None]:
    """``workers`` lowered to the backend's CPUs, with the notice to print when it was."""
    cpus = max(1, backend.cpus())
    if workers <= cpus:
        return workers, None
    where = "this machine" if backend.name == "local" else f"the {backend.name} cluster"
    return cpus, f"--workers {workers} lowered to {cpus}, the CPU count of {where}"


class LocalBackend(Backend):
    """This machine: inline for one worker or one shard, else a pool of spawned processes."""

    name = "local"

    def cpus(self) -> int:
        return cpu_count()

    def run(self, work: Work, workers: int) -> None:
        if workers <= 1 or len(work.todo) == 1:
            for index in work.todo:
                work.commit(play_shard(work.spec, index, work.path, _Ticker(work.running)))
        else:
            _run_pool(work, workers)


class _Ticker:
    """Progress of the shard being played inline."""

    def __init__(self, running: Callable[[int], None]) -> None:
        self.running, self.done = running, 0

    def __call__(self, n: int) -> None:
        self.done += n
        self.running(self.done)


def _run_pool(work: Work, workers: int) -> None:
    spec = work.spec
    # Progress from the workers: one slot per shard, plain aligned stores and no lock, so a
    # killed worker cannot wedge the others.
    counts = RawArray("q", spec.n_shards)
    broken = functools.partial(RunError, WORKER_DIED)
    size = min(workers, len(work.todo))
    with process_pool(size, "spawn", _init_worker, (counts,), broken=broken) as ex:
        pending: dict[Future[dict[str, Any]], int] = {}
        for index in work.todo:
            pending[ex.submit(_worker_shard, spec, index, str(work.path))] = index
        while pending:
            done, _ = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for f in done:
                pending.pop(f)
                work.commit(f.result())
            work.running(sum(counts[i] for i in pending.values()))


# Worker-process side of the pool.
_PROGRESS: Any = None


def _init_worker(progress: Any) -> None:
    global _PROGRESS
    _PROGRESS = progress


def _worker_shard(spec: RunSpec, index: int, run_path: str) -> dict[str, Any]:
    done = 0

    def progress(n: int) -> None:
        nonlocal done
        done += n
        _PROGRESS[index] = done

    try:
        return play_shard(spec, index, Path(run_path), progress)
    except (RunError, store.StoreError):
        raise
    except Exception as e:  # keep the message one line; the traceback goes to the manifest
        raise RunError(
            f"shard {index}: {type(e).__name__}: {e}\n{traceback.format_exc()}"
        ) from None
