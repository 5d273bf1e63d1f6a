"""The Ray backend of ``paohuzi simulate --backend ray``: shards become Ray tasks.

Only this module imports ``ray``, and only when the backend is opened. The driver (the
``simulate`` process) keeps the whole run logic of :mod:`replay.record.runner`: it holds the
run lock, submits tasks and alone writes the manifest, committing each shard index once
(the run's writer, :class:`replay.store.write.RunWriter`). A task plays a group of
consecutive shards with :func:`replay.record.shard.play_shard` (the same function the
process pool runs, so the bytes are the same) and writes each shard's files atomically
under the run folder (:func:`replay.store.write.write_shard`), which must therefore be a
path every node reaches (a shared filesystem). A worker process that dies mid-task is
retried by Ray (:data:`MAX_RETRIES`); a retried shard rewrites the same bytes under the same
names.

Progress: tasks report hands played to a small actor (at most every
:data:`REPORT_SECONDS`), which the driver polls without blocking.

Without an address a local Ray instance is started bound to 127.0.0.1 only, with no
dashboard and no usage statistics; with ``auto`` or ``HOST:PORT`` the driver joins a running
cluster (see docs/CLUSTER.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import deque
from pathlib import Path
from typing import Any

from engine.errors import PaohuziError
from replay.record.backend import Backend, Work
from replay.record.shard import play_shard
from replay.record.spec import RunError, RunSpec

INSTALL_HINT = "ray is not installed: pip install 'paohuzi[cluster]'"
MAX_RETRIES = 3  # Ray reruns a task whose worker process or node died, this many times
MIN_TASK_HANDS = 2048  # shards are grouped into tasks of at least this many hands …
TASKS_PER_WORKER = 2  # … as long as every worker still gets this many tasks
REPORT_SECONDS = 1.0
POLL_SECONDS = 0.2
LOOPBACK = "127.0.0.1"


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def _quiet_env() -> None:
    """No usage statistics, no chatter from Ray's C++ core on our stderr."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")


def _is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


def group_shards(todo: list[int], shard_hands: int, workers: int) -> list[list[int]]:
    """Consecutive shards per task: at least :data:`MIN_TASK_HANDS` hands a task (scheduling
    overhead stays small), but never so few tasks that a worker would idle.

    >>> group_shards(list(range(10)), 4096, 2)
    [[0], [1], [2], [3], [4], [5], [6], [7], [8], [9]]
    >>> group_shards(list(range(10)), 512, 2)
    [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    """
    want = -(-MIN_TASK_HANDS // max(1, shard_hands))
    fair = max(1, len(todo) // (max(1, workers) * TASKS_PER_WORKER))
    per = max(1, min(want, fair))
    return [todo[i : i + per] for i in range(0, len(todo), per)]


class _ProgressBoard:
    """Actor: hands played so far per unfinished shard."""

    def __init__(self) -> None:
        self.done: dict[int, int] = {}

    def report(self, index: int, hands: int) -> None:
        self.done[index] = max(hands, self.done.get(index, 0))

    def snapshot(self) -> dict[int, int]:
        return dict(self.done)


def _play_group(spec: RunSpec, indices: list[int], run_path: str, board: Any) -> list[dict]:
    """The task: play shards ``indices`` one after the other; their manifest entries."""
    entries = []
    for index in indices:
        done, last = 0, time.monotonic()

        def progress(n: int, index: int = index) -> None:
            nonlocal done, last
            done += n
            now = time.monotonic()
            if board is not None and now - last >= REPORT_SECONDS:
                last = now
                with contextlib.suppress(Exception):
                    board.report.remote(index, done)

        entries.append(play_shard(spec, index, Path(run_path), progress))
    return entries


class RayBackend(Backend):
    """Shards as Ray tasks on a local instance (``address=None``) or a running cluster."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        if not ray_available():
            raise PaohuziError(INSTALL_HINT)
        self.address = address
        self.num_cpus = num_cpus
        self.started_at: float | None = None
        self.startup_seconds = 0.0
        self._ray: Any = None

    def open(self) -> None:
        _quiet_env()
        t0 = time.perf_counter()
        try:
            import ray
        except ImportError:
            raise PaohuziError(INSTALL_HINT) from None
        self._ray = ray
        common: dict[str, Any] = {
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            "ignore_reinit_error": True,
        }
        try:
            if self.address is None:
                ray.init(
                    address="local",
                    num_cpus=self.num_cpus,
                    include_dashboard=False,
                    _node_ip_address=LOOPBACK,
                    **common,
                )
            else:
                extra: dict[str, Any] = {}
                if _is_loopback(self.address):
                    extra["_node_ip_address"] = LOOPBACK
                ray.init(address=self.address, **common, **extra)
        except Exception as e:  # ConnectionError, RuntimeError, ValueError from Ray
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            where = self.address or "a local instance"
            raise PaohuziError(f"cannot start Ray ({where}): {msg}") from None
        self.startup_seconds = time.perf_counter() - t0

    @property
    def module(self) -> Any:
        """The ``ray`` module, once :meth:`open` has connected (for other task kinds than
        shards: ``replay.tune.evaluate``)."""
        if self._ray is None:
            raise PaohuziError("Ray is not started (open the backend first)")
        return self._ray

    def close(self) -> None:
        if self._ray is not None:
            with contextlib.suppress(Exception):
                self._ray.shutdown()
            self._ray = None

    def cpus(self) -> int:
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def describe(self) -> str:
        nodes = [n for n in self._ray.nodes() if n.get("Alive")]
        ips = sorted({str(n.get("NodeManagerAddress")) for n in nodes})
        where = "local instance" if self.address is None else f"cluster {self.address}"
        return (
            f"ray: {where}, {len(nodes)} node(s) at {', '.join(ips)}, {self.cpus()} CPUs"
            f" (started in {self.startup_seconds:.1f} s)"
        )

    def run(self, work: Work, workers: int) -> None:
        ray = self._ray
        from ray.exceptions import GetTimeoutError, RayError, RayTaskError

        task = ray.remote(_play_group).options(
            num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False
        )
        board = ray.remote(_ProgressBoard).options(num_cpus=0).remote()
        spec_ref = ray.put(work.spec)
        queue = deque(group_shards(work.todo, work.spec.shard_hands, workers))
        pending: dict[Any, list[int]] = {}
        snap_ref: Any = None
        counts: dict[int, int] = {}
        try:
            while queue or pending:
                while queue and len(pending) < max(1, workers):
                    group = queue.popleft()
                    pending[task.remote(spec_ref, group, str(work.path), board)] = group
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
                for ref in ready:
                    group = pending.pop(ref)
                    try:
                        entries = ray.get(ref)
                    except RayTaskError as e:
                        cause = e.cause if e.cause is not None else e
                        if isinstance(cause, RunError | PaohuziError):
                            raise RunError(str(cause)) from None
                        raise RunError(f"shards {group}: {type(cause).__name__}: {cause}") from None
                    except RayError as e:
                        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                        raise RunError(
                            f"a Ray worker or node died {MAX_RETRIES + 1} times on shards"
                            f" {group} ({type(e).__name__}: {first}); the store keeps every"
                            " finished shard: run the same command again to resume"
                        ) from None
                    for entry in entries:
                        work.commit(entry)
                        counts.pop(entry["index"], None)
                # Progress, never blocking on the actor.
                if snap_ref is None:
                    snap_ref = board.snapshot.remote()
                else:
                    with contextlib.suppress(GetTimeoutError):
                        counts = ray.get(snap_ref, timeout=0)
                        snap_ref = None
                live = {i for g in pending.values() for i in g}
                work.running(sum(n for i, n in counts.items() if i in live))
        finally:
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            with contextlib.suppress(Exception):
                ray.kill(board)
