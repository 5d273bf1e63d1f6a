"""The simulation runner: a run played (or resumed, or confirmed) into the store.

:func:`simulate` holds the run lock, writes and updates the manifest (its identity, seeds,
code version, progress) and has a :class:`~replay.record.backend.Backend` play the shards
still missing; it alone writes the manifest, committing each shard index once. What it
drives lives beside it:

* :mod:`replay.record.spec`: the run spec (layout in sessions, rotations and shards; its
  seeds, from ``engine.session.RunSeeds``; its identity);
* :mod:`replay.record.shard`: the shard player (``play_shard``, either engine);
* :mod:`replay.record.backend`: the backends' interface and the local one (inline or a
  process pool from :mod:`replay.pool`); :mod:`replay.record.ray_backend`: Ray tasks.
"""

from __future__ import annotations

import bisect
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
from replay.store.manifest import (
    Manifest,
    ManifestWriter,
    clear_first_write,
    now,
    writer_info,
)

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
    """A new simulated run's manifest document (:meth:`replay.store.manifest.Manifest.new`)."""
    return Manifest.new(
        name,
        spec.rules,
        status="running",
        command=command,
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
        history="resumed",
        writer=True,
    ).doc


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


def _shard_bytes(entry: dict[str, Any]) -> int:
    return sum(f["bytes"] for f in entry["files"].values())


def _set_progress(manifest: dict[str, Any]) -> None:
    """``progress`` summed over the listed shards."""
    shards = manifest["shards"]
    manifest["progress"] = {
        "shards": len(shards),
        "hands": sum(s["hands"] for s in shards),
        "events": sum(s["events"] for s in shards),
        "bytes": sum(_shard_bytes(s) for s in shards),
    }
    manifest["updated"] = now()


def _add_progress(manifest: dict[str, Any], entry: dict[str, Any]) -> None:
    """``progress`` with one more shard, ``entry`` (what :func:`_set_progress` would give
    after listing it, without summing over all the shards again)."""
    p = manifest["progress"]
    p["shards"] += 1
    p["hands"] += entry["hands"]
    p["events"] += entry["events"]
    p["bytes"] += _shard_bytes(entry)
    manifest["updated"] = now()


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
    root = store.ensure_writable(Path(root))
    name = store.check_run_name(name or spec.default_name())
    path = store.run_dir(root, name)
    start = time.perf_counter()
    with store.RunLock(path):
        manifest = _open_manifest(path, name, spec, command or [], labels)
        store.cleanup_temp(path)
        done = {s["index"] for s in manifest["shards"]}
        todo = [i for i in range(spec.n_shards) if i not in done]
        before = manifest["progress"]["hands"] if "progress" in manifest else 0
        catalog_problem: str | None = None
        manifest["status"] = "running" if todo else "complete"
        manifest["writer"] = writer_info()
        _set_progress(manifest)
        store.write_manifest(path, manifest)
        commit = _Commits(manifest, done, ManifestWriter(path, manifest))
        try:
            with _sigterm_as_interrupt():
                if todo:
                    _play(spec, todo, path, commit, workers, progress, backend)
            manifest["status"] = "complete"
            manifest.pop("error", None)
        except (KeyboardInterrupt, _Terminated):
            manifest["status"] = "interrupted"
            raise KeyboardInterrupt from None
        except BaseException as e:
            manifest["status"] = "failed"
            manifest["error"] = str(e)
            raise
        finally:
            _set_progress(manifest)
            with contextlib.suppress(OSError, PaohuziError):
                store.write_manifest(path, manifest)
            if refresh:
                catalog_problem = refresh_catalog(root)
    p = manifest["progress"]
    return RunResult(
        name, path, p["hands"], p["events"], p["bytes"], p["hands"] - before,
        time.perf_counter() - start, not todo, catalog_problem,
    )  # fmt: skip


def refresh_catalog(root: Path) -> str | None:
    """Refresh ``DATA/paohuzi.duckdb``: None, or why it could not be (one line; the runs are
    written whatever becomes of the catalog, and readers build it in memory meanwhile)."""
    try:
        store.refresh_catalog(root)
    except Exception as e:
        text = " ".join(str(e).split()) or type(e).__name__
        return f"{type(e).__name__}: {text}"[:300]
    return None


def _open_manifest(
    path: Path, name: str, spec: RunSpec, command: list[str], labels: dict[str, Any] | None
) -> dict[str, Any]:
    """The manifest of run ``name``: the one on disk (which must be of ``spec``), noting this
    resumption, or a new one (what an import killed before its first manifest left in the
    folder cleared first: :func:`~replay.store.manifest.clear_first_write`)."""
    if (path / store.MANIFEST_NAME).exists():
        manifest = store.read_manifest(path)
        if Manifest(manifest).imported:
            raise store.RunMismatch(
                f"run {name!r} holds imported hands (paohuzi import), not a simulation;"
                " simulate into another run"
            )
        _check_identity(name, manifest, spec)
        _check_weights(name, manifest, spec)
        manifest.setdefault("resumed", []).append({"at": now(), "command": command})
    else:
        clear_first_write(path)
        manifest = new_manifest(spec, name, command)
        if labels:
            manifest["labels"] = labels
    return manifest


class _Commits:
    """Finished shards into the manifest, once per index (a retried task may report a shard
    twice; its files are the same bytes), the file rewritten at a paced rate
    (``writer``). ``done``: the indices it already lists."""

    def __init__(self, manifest: dict[str, Any], done: set[int], writer: ManifestWriter) -> None:
        self.manifest, self.done, self.writer = manifest, done, writer

    def __call__(self, entry: dict[str, Any]) -> bool:
        """Record ``entry``; True if its index is new."""
        if entry["index"] in self.done:
            return False
        self.done.add(entry["index"])
        bisect.insort(self.manifest["shards"], entry, key=lambda s: s["index"])
        _add_progress(self.manifest, entry)
        self.writer.due()
        return True


def _play(
    spec: RunSpec,
    todo: list[int],
    path: Path,
    commit: _Commits,
    workers: int,
    progress: Callable[[int, int], None] | None,
    backend: Backend | None,
) -> None:
    """Have ``backend`` play the shards ``todo``, reporting ``progress(done, total)``."""
    manifest, total = commit.manifest, spec.hands_total
    if progress is not None:
        progress(manifest["progress"]["hands"], total)

    def running(hands: int) -> None:
        if progress is not None:
            progress(manifest["progress"]["hands"] + hands, total)

    (backend or LocalBackend()).run(Work(spec, todo, path, commit, running), workers)
    store.cleanup_temp(path)  # what killed (and retried) workers left


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
