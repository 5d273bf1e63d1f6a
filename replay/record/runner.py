"""The simulation runner: sessions, seeds, shards, backends (process pool, Ray) and resume.

**Work layout.** A run plays ``deals`` deals in sessions of ``session_length`` consecutive
deals at one table (the last session may be shorter). Session ``i`` holds deals
``i·L … i·L+L−1``. With ``duplicate`` every deal is played once per rotation of the policies
over the seats (``rotations`` = seats), otherwise once. Hand ids follow play order:
``hand_id = deal_id · rotations + rotation``. A shard is ``sessions_per_shard`` consecutive
sessions (``shard_hands // (L · rotations)``, at least 1); it is the unit of work of a worker
and the unit of resume. The layout depends on the arguments only, never on ``--workers``.

**Backends.** :func:`play_shard` is the one "play these hands, write their files" step;
a :class:`Backend` decides where it runs: :class:`LocalBackend` (inline, or a pool of
spawned processes) or ``replay.record.ray_backend.RayBackend`` (Ray tasks). Whatever the
backend, only the calling process writes the manifest, committing each shard index once.

**Seeds, method version 1** (``schema.SEED_METHOD_VERSION``), with
``engine.deck.derive_seed`` (SHA-256 of ``"run_seed/part/…"``, first 8 bytes little-endian):

* session seed: ``derive_seed(S, "session", i)``; its first dealer is
  ``engine.session.first_dealer(rules, session_seed)``;
* deck of deal ``d``: ``engine.deck.shuffle_deck(derive_seed(S, "deal", d))`` (shuffle method
  ``SHUFFLE_VERSION``);
* policy seed of hand ``h``: ``derive_seed(S, "hand", h)``, given to ``play_hand`` (which
  derives one RNG per seat from it).

**Dealers.** Within a session the dealer follows RULES §2/§12 (``engine.session``). With
``duplicate`` a deal is a *board*: all its rotations are dealt the same deck by the same
dealer, and the dealer sequence follows the outcomes of rotation 0.

**Rotations.** In rotation ``r`` seat ``s`` is played by ``policies[(s − r) mod seats]``, so
policy ``p`` sits at seat ``(p + r) mod seats``.

>>> spec = RunSpec(rules=find_rules("hunan"), policies=("random",) * 3, seed=1, deals=20,
...                session_length=8, duplicate=True, shard_hands=48)
>>> spec.rotations, spec.n_sessions, spec.sessions_per_shard, spec.n_shards, spec.hands_total
(3, 3, 2, 2, 60)
>>> spec.seat_policies(1)
('random', 'random', 'random')
"""

from __future__ import annotations

import bisect
import contextlib
import getpass
import hashlib
import json
import multiprocessing as mp
import os
import platform
import signal
import socket
import subprocess
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from engine.deck import SHUFFLE_VERSION, derive_seed, shuffle_deck
from engine.errors import PaohuziError
from engine.policies import load_policies
from engine.rules import RuleSet, find_rules
from engine.session import DealerState, first_dealer, next_dealer
from replay import store
from replay.analysis import summary
from replay.record import schema
from replay.record.recorder import ShardRecorder
from replay.store.manifest import ManifestWriter

DEFAULT_SESSION_LENGTH = 8
DEFAULT_SHARD_HANDS = 4096
DEFAULT_POLICIES = "random"

__all__ = [
    "Backend",
    "LocalBackend",
    "RunError",
    "RunResult",
    "RunSpec",
    "Work",
    "cap_workers",
    "find_rules",
    "make_backend",
    "play_shard",
    "simulate",
]


class RunError(PaohuziError):
    """A run that stopped before the end (a worker died, a hand failed); the store is intact."""


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's content and its shard layout."""

    rules: RuleSet
    policies: tuple[str, ...]
    seed: int
    deals: int
    session_length: int = DEFAULT_SESSION_LENGTH
    duplicate: bool = False
    shard_hands: int = DEFAULT_SHARD_HANDS
    #: ``reference`` (engine/, the Python engine) or ``fast`` (engine/fast/, compiled). Not
    #: part of the identity: both write the same rows, so a run may be resumed with either.
    engine: str = "reference"

    def __post_init__(self) -> None:
        if self.deals < 1 or self.session_length < 1 or self.shard_hands < 1:
            raise PaohuziError("hands, session length and shard size must be at least 1")
        if self.hands_total > 2**32 - 1:
            raise PaohuziError(f"{self.hands_total:,} hands is more than a run holds (2³² − 1)")
        if self.session_length > 65535:
            raise PaohuziError(f"session length {self.session_length} is above 65535")

    @property
    def n_seats(self) -> int:
        return self.rules.players

    @property
    def rotations(self) -> int:
        return self.n_seats if self.duplicate else 1

    @property
    def hands_total(self) -> int:
        return self.deals * self.rotations

    @property
    def n_sessions(self) -> int:
        return -(-self.deals // self.session_length)

    @property
    def sessions_per_shard(self) -> int:
        return max(1, self.shard_hands // (self.session_length * self.rotations))

    @property
    def n_shards(self) -> int:
        return -(-self.n_sessions // self.sessions_per_shard)

    def shard_sessions(self, index: int) -> range:
        lo = index * self.sessions_per_shard
        return range(lo, min(lo + self.sessions_per_shard, self.n_sessions))

    def session_deals(self, session: int) -> range:
        lo = session * self.session_length
        return range(lo, min(lo + self.session_length, self.deals))

    def shard_hands_range(self, index: int) -> range:
        s = self.shard_sessions(index)
        first = self.session_deals(s.start).start
        last = self.session_deals(s.stop - 1).stop
        return range(first * self.rotations, last * self.rotations)

    def seat_policies(self, rotation: int) -> tuple[str, ...]:
        n = self.n_seats
        return tuple(self.policies[(s - rotation) % n] for s in range(n))

    def identity(self) -> dict[str, Any]:
        """What a resumed run must match (content and layout)."""
        return {
            "schema_version": schema.SCHEMA_VERSION,
            "seed_method_version": schema.SEED_METHOD_VERSION,
            "shuffle_version": SHUFFLE_VERSION,
            "rules_fingerprint": self.rules.fingerprint(),
            "policies": list(self.policies),
            "seed": self.seed,
            "deals": self.deals,
            "session_length": self.session_length,
            "duplicate": self.duplicate,
            "shard_hands": self.shard_hands,
        }

    def default_name(self) -> str:
        """The run name used without ``--run``: readable, plus a digest of the identity."""
        digest = hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()
        preset = self.rules.preset_name() or "custom"
        dup = "dup-" if self.duplicate else ""
        return f"{preset}-{dup}s{self.seed}-n{self.deals}-{digest[:8]}"


# ---------------------------------------------------------------------------------------------
# Playing a shard (in a worker or inline)
# ---------------------------------------------------------------------------------------------


def play_sessions(
    spec: RunSpec, sessions: range, rec: ShardRecorder, progress: Callable[[int], None] | None
) -> None:
    """Play and record the given sessions (hands in id order).

    Each session gets fresh policy objects, so a policy that keeps state between hands still
    gives results that depend on the session alone, not on which worker played what before.
    """
    rotations = spec.rotations
    seed = spec.seed
    seat_names = [spec.seat_policies(r) for r in range(rotations)]
    for session in sessions:
        by_rotation = [load_policies(list(names), spec.n_seats) for names in seat_names]
        ds: DealerState = first_dealer(spec.rules, derive_seed(seed, "session", session))
        deals = spec.session_deals(session)
        for k, deal_id in enumerate(deals):
            deck = shuffle_deck(derive_seed(seed, "deal", deal_id))
            board_winner = None
            for r in range(rotations):
                hand_id = deal_id * rotations + r
                policies, names = by_rotation[r], seat_names[r]
                try:
                    winner = rec.play_hand(
                        deck, ds.dealer, policies, names, derive_seed(seed, "hand", hand_id),
                        hand_id=hand_id, session=session, session_hand=k, rotation=r,
                        deal_id=deal_id, huang_streak=ds.huang_streak,
                    )  # fmt: skip
                except Exception as e:
                    raise RunError(
                        f"hand {hand_id} (session {session}, deal {deal_id}, rotation {r})"
                        f" failed: {type(e).__name__}: {e}"
                    ) from e
                if r == 0:
                    board_winner = winner
            ds = next_dealer(spec.rules, ds, board_winner)
        if progress is not None:
            progress(len(deals) * rotations)


def play_shard(
    spec: RunSpec,
    index: int,
    run_path: Path,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Play shard ``index`` with ``spec.engine``, write its two files atomically; its
    manifest entry (which names the engine that wrote it)."""
    sessions = spec.shard_sessions(index)
    hr = spec.shard_hands_range(index)
    if spec.engine == "fast":
        from replay.record.fast_engine import play_shard_tables

        hands, events = play_shard_tables(spec, sessions)
        if progress is not None:
            progress(len(hr))
    else:
        rec = ShardRecorder(spec.rules)
        play_sessions(spec, sessions, rec, progress)
        hands, events = rec.tables()
    assert hands.num_rows == len(hr), (hands.num_rows, hr)
    files = {
        name: store.write_shard_file(run_path, table, name, index)
        for name, table in (("hands", hands), ("events", events))
    }
    files.update(summary.write_summary(run_path, index, hands, summary.spec_manifest(spec)))
    return {
        "index": index,
        "first_session": sessions.start,
        "sessions": len(sessions),
        "first_hand": hr.start,
        "hands": len(hr),
        "events": events.num_rows,
        "engine": spec.engine,
        "files": files,
    }


# Worker-process side of the pool: progress goes through a shared array, one slot per shard
# (plain aligned stores, no lock, so a killed worker cannot wedge the others).
_PROGRESS: Any = None


def _init_worker(progress: Any) -> None:
    global _PROGRESS
    _PROGRESS = progress
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _die_with_parent()


def _die_with_parent() -> None:
    """Linux: SIGKILL this worker when the parent dies, so a killed ``simulate`` leaves no
    orphan finishing shards behind the back of the next (resuming) one."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent already died before prctl took effect
            os._exit(1)


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


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------


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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _code_info() -> dict[str, Any]:
    try:
        version = metadata.version("paohuzi")
    except metadata.PackageNotFoundError:
        version = "unknown"
    info: dict[str, Any] = {"package": "paohuzi", "version": version}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        here = Path(__file__).resolve().parent
        out = subprocess.run(
            ["git", "-C", str(here), "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=5,
        )
        if out.returncode == 0:
            info["git"] = out.stdout.strip()
    info["python"] = platform.python_version()
    import pyarrow

    info["pyarrow"] = pyarrow.__version__
    return info


def new_manifest(spec: RunSpec, name: str, command: list[str]) -> dict[str, Any]:
    return {
        "format": store.MANIFEST_FORMAT,
        "schema_version": schema.SCHEMA_VERSION,
        "run": name,
        "status": "running",
        "created": _now(),
        "updated": _now(),
        "code": _code_info(),
        "command": command,
        "writer": {"host": socket.gethostname(), "user": _user(), "pid": os.getpid()},
        "identity": spec.identity(),
        "params": {
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
        },
        "rules": spec.rules.to_dict(),
        "rules_preset": spec.rules.preset_name(),
        "rules_fingerprint": spec.rules.fingerprint(),
        "seeds": {
            "run_seed": spec.seed,
            "seed_method_version": schema.SEED_METHOD_VERSION,
            "shuffle_version": SHUFFLE_VERSION,
            "session": 'derive_seed(run_seed, "session", session)',
            "first_dealer": "engine.session.first_dealer(rules, session_seed)",
            "deck": 'shuffle_deck(derive_seed(run_seed, "deal", deal_id))',
            "policy": 'derive_seed(run_seed, "hand", hand_id)',
        },
        "codes": schema.codes(),
        "tables": {t: schema.describe(t) for t in schema.TABLES},
        "shards": [],
        "progress": {"shards": 0, "hands": 0, "events": 0, "bytes": 0},
        "resumed": [],
    }


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "?"


def _check_identity(name: str, manifest: dict[str, Any], spec: RunSpec) -> None:
    old = manifest.get("identity", {})
    new = spec.identity()
    for key, value in new.items():
        if old.get(key) != value:
            raise store.RunMismatch(
                f"run {name!r} was recorded with {key}={_fmt(old.get(key))}, not {_fmt(value)};"
                " use the same arguments to resume it, or another --run"
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
    manifest["updated"] = _now()


def _add_progress(manifest: dict[str, Any], entry: dict[str, Any]) -> None:
    """``progress`` with one more shard, ``entry`` (what :func:`_set_progress` would give
    after listing it, without summing over all the shards again)."""
    p = manifest["progress"]
    p["shards"] += 1
    p["hands"] += entry["hands"]
    p["events"] += entry["events"]
    p["bytes"] += _shard_bytes(entry)
    manifest["updated"] = _now()


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
) -> RunResult:
    """Play (or resume, or confirm) a run into the store at ``root``.

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
        mpath = path / store.MANIFEST_NAME
        if mpath.exists():
            manifest = store.read_manifest(path)
            _check_identity(name, manifest, spec)
            manifest.setdefault("resumed", []).append({"at": _now(), "command": command or []})
        else:
            manifest = new_manifest(spec, name, command or [])
            if labels:
                manifest["labels"] = labels
        store.cleanup_temp(path)
        done_idx = {s["index"] for s in manifest["shards"]}
        todo = [i for i in range(spec.n_shards) if i not in done_idx]
        total = spec.hands_total
        already = not todo
        before = manifest["progress"]["hands"] if "progress" in manifest else 0
        manifest["status"] = "running" if todo else "complete"
        manifest["writer"] = {"host": socket.gethostname(), "user": _user(), "pid": os.getpid()}
        _set_progress(manifest)
        store.write_manifest(path, manifest)
        writer = ManifestWriter(path, manifest)

        def commit(entry: dict[str, Any]) -> bool:
            """Record a finished shard in the manifest, once per index (a retried task may
            report a shard twice; its files are the same bytes), the file rewritten at a
            paced rate (:class:`~replay.store.manifest.ManifestWriter`). True if new."""
            if entry["index"] in done_idx:
                return False
            done_idx.add(entry["index"])
            bisect.insort(manifest["shards"], entry, key=lambda s: s["index"])
            _add_progress(manifest, entry)
            writer.due()
            return True

        try:
            with _sigterm_as_interrupt():
                if todo:
                    if progress is not None:
                        progress(manifest["progress"]["hands"], total)

                    def running(hands: int) -> None:
                        if progress is not None:
                            progress(manifest["progress"]["hands"] + hands, total)

                    work = Work(spec, todo, path, commit, running)
                    (backend or LocalBackend()).run(work, workers)
                    store.cleanup_temp(path)  # what killed (and retried) workers left
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
            with contextlib.suppress(Exception):
                store.refresh_catalog(root)
    p = manifest["progress"]
    return RunResult(
        name, path, p["hands"], p["events"], p["bytes"], p["hands"] - before,
        time.perf_counter() - start, already,
    )  # fmt: skip


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
        return os.cpu_count() or 1

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
    ctx = mp.get_context("spawn")
    counts = ctx.RawArray("q", spec.n_shards)
    ex = ProcessPoolExecutor(
        max_workers=min(workers, len(work.todo)),
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(counts,),
    )
    pending: dict[Future[dict[str, Any]], int] = {}
    try:
        for index in work.todo:
            pending[ex.submit(_worker_shard, spec, index, str(work.path))] = index
        while pending:
            done, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                pending.pop(f)
                try:
                    entry = f.result()
                except BrokenProcessPool:
                    raise RunError(
                        "a worker process died (killed, or out of memory); the store keeps"
                        " every finished shard: run the same command again to resume"
                    ) from None
                work.commit(entry)
            work.running(sum(counts[i] for i in pending.values()))
    finally:
        if pending:
            for f in pending:
                f.cancel()
            # Stop workers now rather than let them finish shards nobody will record.
            for p in list(getattr(ex, "_processes", {}).values()):
                with contextlib.suppress(Exception):
                    p.terminate()
        ex.shutdown(wait=True, cancel_futures=True)


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
