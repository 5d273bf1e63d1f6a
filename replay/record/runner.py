"""The simulation runner: a run played (or resumed, or confirmed) into the store.

:func:`simulate` opens the run with the store's writer (:class:`~replay.store.write.RunWriter`:
the run lock, the manifest created or resumed, its status and progress, the catalog refreshed
after) and has a :class:`~replay.record.backend.Backend` play the shards still missing; each
finished shard is committed by the writer in this process, once per index. What it drives
lives beside it:

* :mod:`replay.record.spec`: the run spec (layout in sessions, rotations and shards; its
  seeds, from ``engine.session.RunSeeds``; its identity);
* :mod:`replay.record.shard`: the shard player (``play_shard``, either engine);
* :mod:`replay.record.backend`: the backends' interface and the local one (inline or a
  process pool from :mod:`replay.pool`); :mod:`replay.record.ray_backend`: Ray tasks.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import PaohuziError
from replay import store
from replay.record.backend import Backend, LocalBackend, Work
from replay.record.spec import RunSpec, recorded_tables
from replay.store.manifest import Manifest
from replay.store.write import RunWriter, catalog_refresh, simulated_manifest

__all__ = ["RunResult", "make_backend", "new_manifest", "simulate"]


@dataclass
class RunResult:
    name: str
    path: Path
    hands: int
    events: int
    bytes: int
    played: int  # hands played by this invocation
    seconds: float
    already_complete: bool
    #: why ``DATA/paohuzi.duckdb`` could not be refreshed (the run itself is written; the
    #: next reader builds the catalog in memory), or None
    catalog_problem: str | None = None


def new_manifest(spec: RunSpec, name: str, command: list[str]) -> dict[str, Any]:
    """A new simulated run's manifest document
    (:func:`replay.store.write.simulated_manifest`)."""
    return simulated_manifest(
        name,
        spec.rules,
        command,
        identity=spec.identity(),
        params={
            "seed": spec.seed,
            "deals": spec.deals,
            "hands_total": spec.hands_total,
            "session_length": spec.session_length,
            "duplicate": spec.duplicate,
            "rotations": spec.rotations,
            "policies": list(spec.policies),
            "policies_text": ",".join(spec.policies),
            "seat_policies": [list(spec.seat_policies(r)) for r in range(spec.rotations)],
            "shard_hands": spec.shard_hands,
            "sessions_per_shard": spec.sessions_per_shard,
            "n_sessions": spec.n_sessions,
            "n_shards": spec.n_shards,
            **({"weights": spec.weights_manifest()} if spec.weights else {}),
        },
        seeds=spec.seeds_manifest(),
    )


def _check_identity(name: str, manifest: dict[str, Any], spec: RunSpec) -> None:
    old = manifest.get("identity", {})
    new = spec.identity()
    for key, value in new.items():
        if old.get(key) != value:
            raise store.RunMismatch(
                f"run {name!r} was recorded with {key}={_fmt(old.get(key))}, not {_fmt(value)};"
                " use the same arguments to resume it, or another --run"
            )


def _check_weights(name: str, manifest: dict[str, Any], spec: RunSpec) -> None:
    """A resumed run plays the tables it recorded: ``spec``'s must be those (the CLI takes
    them from the manifest, replay.record.spec.resolve_tables)."""
    from engine.policies.weights import first_difference

    try:
        old = recorded_tables(manifest)
    except PaohuziError as e:
        raise store.RunMismatch(f"run {name!r}: {e}") from None
    new = spec.tables()
    for key in sorted(set(old) | set(new)):
        if key not in old or key not in new:
            raise store.RunMismatch(
                f"run {name!r} was recorded {'without' if key not in old else 'with'} weights"
                f" for {key}; use the same arguments to resume it, or another --run"
            )
        if old[key] != new[key]:
            raise store.RunMismatch(
                f"run {name!r} was recorded with other weights for {key}"
                f" ({first_difference(old[key], new[key])}); use the recorded table to resume"
                " it, or another --run"
            )


def _fmt(v: Any) -> str:
    if isinstance(v, list):
        return ",".join(map(str, v))
    return str(v)


class _Terminated(BaseException):
    """SIGTERM, handled like Ctrl-C."""


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    def handler(signum: int, frame: Any) -> None:
        raise _Terminated()

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def simulate(
    spec: RunSpec,
    root: Path,
    name: str | None = None,
    workers: int = 1,
    command: list[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    backend: Backend | None = None,
    labels: dict[str, Any] | None = None,
    refresh: bool = True,
) -> RunResult:
    """Play (or resume, or confirm) a run into the store at ``root``, then refresh its
    catalog (``refresh``; a caller recording many runs passes False and calls
    :func:`refresh_catalog` once after the last: each refresh reads every run's listing).

    ``progress(done, total)`` is called from the main process as hands finish. On Ctrl-C /
    SIGTERM the manifest is marked ``interrupted`` and ``KeyboardInterrupt`` propagates; if a
    worker dies, :class:`RunError`; on a full disk, :class:`store.StoreError`. In every case
    the store holds exactly the finished shards and the same call resumes.

    ``backend`` plays the shards (default :class:`LocalBackend`: inline or a process pool of
    ``workers``); whatever it is, this process alone writes the manifest. ``labels`` (for
    example the sweep a run belongs to) go into a new run's manifest, outside its identity.
    """
    start = time.perf_counter()
    with RunWriter(root, name or spec.default_name(), refresh=refresh) as w:
        _open_run(w, spec, command or [], labels)
        manifest = w.manifest
        assert manifest is not None
        todo = [i for i in range(spec.n_shards) if i not in w.indices]
        before = manifest["progress"]["hands"] if "progress" in manifest else 0
        w.start(complete=not todo)
        try:
            with _sigterm_as_interrupt():
                if todo:
                    _play(spec, todo, w, workers, progress, backend)
        except _Terminated:
            raise KeyboardInterrupt from None
        w.finish()
    p = manifest["progress"]
    return RunResult(
        w.name, w.path, p["hands"], p["events"], p["bytes"], p["hands"] - before,
        time.perf_counter() - start, not todo, _problem(w.catalog_error),
    )  # fmt: skip


def _problem(e: Exception | None) -> str | None:
    """What stopped a refresh of the catalog, in one line (at most 300 characters)."""
    if e is None:
        return None
    text = " ".join(str(e).split()) or type(e).__name__
    return f"{type(e).__name__}: {text}"[:300]


def refresh_catalog(root: Path) -> str | None:
    """Refresh ``DATA/paohuzi.duckdb``: None, or why it could not be (one line; the runs are
    written whatever becomes of the catalog, and readers build it in memory meanwhile)."""
    return _problem(catalog_refresh(root))


def _open_run(
    w: RunWriter, spec: RunSpec, command: list[str], labels: dict[str, Any] | None
) -> None:
    """The manifest of ``w``'s run: the one on disk (which must be of ``spec``), noting this
    resumption, or a new one (:meth:`~replay.store.write.RunWriter.create`)."""
    if w.manifest is not None:
        if Manifest(w.manifest).imported:
            raise store.RunMismatch(
                f"run {w.name!r} holds imported hands (paohuzi import), not a simulation;"
                " simulate into another run"
            )
        _check_identity(w.name, w.manifest, spec)
        _check_weights(w.name, w.manifest, spec)
        w.resume(command)
    else:
        manifest = new_manifest(spec, w.name, command)
        if labels:
            manifest["labels"] = labels
        w.create(manifest)


def _play(
    spec: RunSpec,
    todo: list[int],
    w: RunWriter,
    workers: int,
    progress: Callable[[int, int], None] | None,
    backend: Backend | None,
) -> None:
    """Have ``backend`` play the shards ``todo``, each committed by ``w``, reporting
    ``progress(done, total)``."""
    manifest, total = w.manifest, spec.hands_total
    assert manifest is not None
    if progress is not None:
        progress(manifest["progress"]["hands"], total)

    def running(hands: int) -> None:
        if progress is not None:
            progress(manifest["progress"]["hands"] + hands, total)

    (backend or LocalBackend()).run(Work(spec, todo, w.path, w.commit, running), workers)


def make_backend(name: str, address: str | None = None) -> Backend:
    """The backend called ``name`` (``local`` or ``ray``); raises :class:`PaohuziError` with a
    one-line reason (unknown name, ray not installed, ``--address`` without ray)."""
    if name == "local":
        if address is not None:
            raise PaohuziError("--address is for --backend ray")
        return LocalBackend()
    if name == "ray":
        from replay.record.ray_backend import RayBackend

        return RayBackend(address)
    raise PaohuziError(f"unknown backend {name!r} (local, ray)")
