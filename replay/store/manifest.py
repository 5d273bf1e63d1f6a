"""A run's manifest (what the run is, which shards are finished) and the writer's lock.

:class:`Manifest` is the one model of the document (docs/LOG_FORMAT.md §4): a simulated run
and a run of imported hands are both made by :meth:`Manifest.new`, and readers take the run's
parameters from :attr:`Manifest.params` (a :class:`RunParams`) instead of chains of
``dict.get``. The JSON document itself is :attr:`Manifest.doc`, written as it is.

>>> from engine.rules import find_rules
>>> m = Manifest.new("r", find_rules("hunan"), status="complete", command=[],
...                  identity={"imported": True}, params={"duplicate": False}, seeds=None,
...                  history="imported")
>>> m.params.duplicate, m.params.rotations, m.params.policies, m.imported
(False, 1, (), True)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import platform
import re
import socket
import stat
import subprocess
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import pydantic_core

from engine.errors import CorruptLog
from engine.rules import RuleSet
from replay import schema
from replay.store.files import NotRegularFile, read_regular, write_json
from replay.store.fsinfo import file_kind
from replay.store.layout import (
    IMPORT_LOCK_NAME,
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    SHARD_FOLDERS,
    StoreError,
)
from replay.store.manifest_schema import ManifestInvalid, check_manifest
from replay.store.params import RunParams


def now() -> str:
    """The time a manifest records: UTC, to the second, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def code_info() -> dict[str, Any]:
    """The code that wrote a run: package version, git description, Python, pyarrow."""
    from replay.version import package_version

    info: dict[str, Any] = {"package": "paohuzi", "version": package_version()}
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


def writer_info() -> dict[str, Any]:
    """Who writes a run: host, user, process."""
    try:
        import getpass

        user = getpass.getuser()
    except Exception:
        user = "?"
    return {"host": socket.gethostname(), "user": user, "pid": os.getpid()}


class Manifest:
    """A run's manifest document and typed views of it."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    @classmethod
    def new(
        cls,
        name: str,
        rules: RuleSet,
        *,
        status: str,
        command: list[str],
        identity: dict[str, Any],
        params: dict[str, Any],
        seeds: Any,
        history: str,
        writer: bool = False,
    ) -> Manifest:
        """A new run's manifest, no shard yet: a simulated run (``status`` running, its
        ``writer``, ``history`` "resumed") or a run of imported hands (complete, "imported")."""
        doc: dict[str, Any] = {
            "format": MANIFEST_FORMAT,
            "schema_version": schema.SCHEMA_VERSION,
            "run": name,
            "status": status,
            "created": now(),
            "updated": now(),
            "code": code_info(),
            "command": command,
        }
        if writer:
            doc["writer"] = writer_info()
        doc.update(
            {
                "identity": identity,
                "params": params,
                "rules": rules.to_dict(),
                "rules_preset": rules.preset_name(),
                "rules_fingerprint": rules.fingerprint(),
                "seeds": seeds,
                "codes": schema.codes(),
                "tables": {t: schema.describe(t) for t in schema.TABLES},
                "shards": [],
                "progress": {"shards": 0, "hands": 0, "events": 0, "bytes": 0},
                history: [],
            }
        )
        return cls(doc)

    @property
    def params(self) -> RunParams:
        """The run's parameters (``ValueError`` for a malformed ``params``)."""
        return RunParams.of(self.doc.get("params"))

    @property
    def imported(self) -> bool:
        """A run of imported hands (``paohuzi import``), not a simulated one."""
        identity = self.doc.get("identity")
        return isinstance(identity, dict) and bool(identity.get("imported"))


def read_manifest(run_path: Path) -> dict[str, Any]:
    return read_manifest_digest(run_path)[0]


#: The largest manifest read (a 10⁸-hand run's is about 17 MB); raise it with
#: ``$PAOHUZI_MAX_MANIFEST_BYTES``.
MANIFEST_MAX_BYTES = 64 << 20
MANIFEST_MAX_ENV = "PAOHUZI_MAX_MANIFEST_BYTES"


def manifest_max_bytes() -> int:
    """:data:`MANIFEST_MAX_BYTES`, or ``$PAOHUZI_MAX_MANIFEST_BYTES`` when it is set."""
    text = os.environ.get(MANIFEST_MAX_ENV, "").strip()
    if not text:
        return MANIFEST_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise StoreError(f"${MANIFEST_MAX_ENV}={text!r}: expected a positive number of bytes")
    return value


def read_manifest_digest(run_path: Path) -> tuple[dict[str, Any], str]:
    """The manifest, checked, and the SHA-256 of the bytes it was read from (what a catalog
    built on the run is bound to). The one reader of the format: a regular file (no symlink,
    FIFO or device) of at most :func:`manifest_max_bytes`, UTF-8 JSON nested at most 200
    deep, of a known schema version, every field typed as :mod:`~replay.store.manifest_schema`
    says. Raises :class:`CorruptLog` with a one-line reason."""
    path = Path(run_path) / MANIFEST_NAME
    try:
        raw = read_regular(path, manifest_max_bytes(), f"raise it with ${MANIFEST_MAX_ENV}")
    except FileNotFoundError:
        raise CorruptLog(f"no manifest in {run_path}") from None
    except NotRegularFile as e:
        raise CorruptLog(f"unreadable manifest: {e}") from None
    except OSError as e:
        raise CorruptLog(f"unreadable manifest {path}: {e.strerror or e}") from None
    try:
        m = pydantic_core.from_json(raw)
    except ValueError as e:
        raise CorruptLog(f"unreadable manifest {path}: not JSON ({e})") from None
    if not isinstance(m, dict) or m.get("format") != MANIFEST_FORMAT:
        raise CorruptLog(f"{path} is not a paohuzi run manifest")
    version = m.get("schema_version")
    if type(version) is int and version > schema.SCHEMA_VERSION:
        raise CorruptLog(
            f"{path}: schema version {version} is newer than this reader"
            f" ({schema.SCHEMA_VERSION}); upgrade paohuzi"
        )
    if type(version) is not int or version != schema.SCHEMA_VERSION:
        raise CorruptLog(f"{path}: unknown schema version {version!r}")
    digest = hashlib.sha256(raw).hexdigest()
    if digest in _CHECKED:  # these very bytes passed the check in this process
        return m, digest
    try:
        doc = dict(check_manifest(m))
    except ManifestInvalid as e:
        raise ManifestInvalid(f"run {Path(run_path).name.removeprefix('run=')}: {e}") from None
    with _CHECKED_LOCK:
        _CHECKED[digest] = None
        while len(_CHECKED) > _CHECKED_MAX:
            del _CHECKED[next(iter(_CHECKED))]
    return doc, digest


#: The SHA-256s of manifest bytes that passed :func:`check_manifest` in this process, the
#: latest last: the same bytes are parsed again but not checked again (the check is a pure
#: function of them; two fifths of reading a 10⁸-hand run's 23 MB manifest).
_CHECKED: dict[str, None] = {}
_CHECKED_MAX = 256
_CHECKED_LOCK = threading.Lock()


def write_manifest(run_path: Path, manifest: dict[str, Any], rollup: bool = True) -> None:
    """Write a run's manifest atomically, its rollup brought up to date first
    (:func:`replay.store.rollup.refresh_rollup`; ``rollup=False``: as it is, for a rollup
    being rebuilt in steps) and the rollup files replaced longer ago than their grace period
    removed after (:func:`replay.store.rollup.prune`)."""
    from replay.store.rollup import grace_seconds, prune, refresh_rollup

    grace = grace_seconds()  # a bad $PAOHUZI_ROLLUP_GRACE refused before anything is written
    if rollup:
        refresh_rollup(Path(run_path), manifest)
    write_json(Path(run_path) / MANIFEST_NAME, manifest)
    prune(Path(run_path), manifest, grace)


class ManifestWriter:
    """Rewrites a run's manifest as shards finish, at a pace that keeps the total work
    linear-ish: ``due()`` (one shard's change made) writes when the shards changed since the
    last rewrite reach 1/``share`` of those the manifest lists (at least 1), else leaves the
    change pending; ``flush()`` writes a pending change. A run of up to ``share`` shards is so
    rewritten after every shard; one that lists 20,000 shards (a 100,000,000-hand run) every
    300 shards, where a rewrite per shard would make the run quadratic (about 400 rewrites in
    all instead of 20,000). The cost: a process killed between two rewrites loses the shards
    finished since the last one (their files are written again, same bytes, on resume)."""

    def __init__(self, run_path: Path, manifest: dict[str, Any], share: int = 64) -> None:
        self.run_path, self.manifest, self.share = Path(run_path), manifest, share
        self.changed = 0

    def due(self) -> bool:
        """Count one change; write if it is time. True if written."""
        self.changed += 1
        if self.changed < max(1, len(self.manifest.get("shards", ())) // self.share):
            return False
        self.flush()
        return True

    def flush(self) -> None:
        if self.changed:
            write_manifest(self.run_path, self.manifest)
            self.changed = 0


class RunBusy(StoreError):
    """The run's lock (or the store's import lock) is held by another writer (and was not
    released in time)."""


class _FileLock:
    """An exclusive ``flock`` on the lock file ``path``: ``wait``, the seconds to wait for a
    lock another process (or another thread: each lock opens its own file description)
    holds, polling, before giving up; 0 (the default) gives up at once. The holder writes
    its pid into the file (what a refusal names)."""

    #: Seconds between two tries while waiting.
    POLL = 0.02

    def __init__(self, path: Path, wait: float = 0.0) -> None:
        self.path = Path(path)
        self.wait = wait
        self.fd: int | None = None

    def busy(self, holder: str, waited: str) -> RunBusy:
        """The refusal when another process holds the lock."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        except OSError as e:
            raise StoreError(f"cannot open the lock file {self.path}: {e.strerror or e}") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise StoreError(
                f"{self.path} is {file_kind(mode)}, not a lock file (remove it: `paohuzi doctor`)"
            )
        deadline = time.monotonic() + max(0.0, self.wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() < deadline:
                    time.sleep(self.POLL)
                    continue
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                waited = f" (waited {self.wait:g} s)" if self.wait > 0 else ""
                raise self.busy(holder, waited) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class RunLock(_FileLock):
    """An exclusive ``flock`` on ``run=NAME/.lock`` for the writer of a run (``wait`` as
    :class:`_FileLock`'s). Raises :class:`RunBusy` naming the holder's pid."""

    def __init__(self, run_path: Path, wait: float = 0.0) -> None:
        super().__init__(Path(run_path) / ".lock", wait)

    def busy(self, holder: str, waited: str) -> RunBusy:
        return RunBusy(
            f"run folder {self.path.parent} is being written by another process"
            f" (pid {holder}){waited}"
        )


class ImportLock(_FileLock):
    """An exclusive ``flock`` on ``DATA/.ingest.lock`` (:data:`IMPORT_LOCK_NAME`): an import
    (``paohuzi import``, ``POST /runs/{run}/hands``) holds it from its check for hands
    already stored, in every run of imported hands, to the manifest that lists its shard, so
    that two imports into different runs cannot both find a hand new and both store it.
    Taken before the run's :class:`RunLock`, never after (one order: no deadlock). Raises
    :class:`RunBusy`."""

    def __init__(self, root: Path, wait: float = 0.0) -> None:
        super().__init__(Path(root) / IMPORT_LOCK_NAME, wait)

    def busy(self, holder: str, waited: str) -> RunBusy:
        return RunBusy(
            f"the store {self.path.parent} is being written by another import"
            f" (pid {holder}){waited}"
        )


# ---------------------------------------------------------------------------------------------
# A run folder with no manifest: an interrupted first write
# ---------------------------------------------------------------------------------------------

#: The folders of a run's first shard, whose files an import writes before the run's first
#: manifest (a simulated run's manifest comes before any shard): every shard folder but the
#: reviews' (:data:`replay.store.reviews.REVIEWS`: a review is stored only in a run that has
#: a manifest), i.e. the two tables, the provenance, the summary and the facts (held equal to
#: their writers' names by tests/replay/store/test_orphan_run_bug.py), and the rollup
#: written with the first manifest.
FIRST_WRITE_FOLDERS = tuple(f for f in SHARD_FOLDERS if f != "reviews")
#: The name of a first shard's files in them.
FIRST_WRITE_FILE = "part-00000.parquet"
#: The rollup of the first shard (replay.store.rollup.rollup_path(1)), written just before
#: the first manifest.
FIRST_ROLLUP_FILE = "part-00001.parquet"
_TEMP_NAME = re.compile(r"\..+\.tmp-\d+", re.S)


@dataclass(frozen=True)
class FirstWrite:
    """What a run folder with no manifest holds of the store's own files (no symlink
    followed): ``files``, those an interrupted first write leaves (``F/part-00000.parquet``
    for F in :data:`FIRST_WRITE_FOLDERS`, and temporary files ``.NAME.tmp-PID`` in the run
    folder and those folders), and ``others``, any other Parquet file in a subfolder or a
    symlinked first-shard folder: the shards of a run whose manifest is gone, not a first
    write. Files of other names are neither."""

    files: tuple[Path, ...]
    others: tuple[Path, ...]

    @property
    def interrupted(self) -> bool:
        """Nothing but an interrupted first write (or nothing at all)."""
        return not self.others


#: A run folder listed once (:func:`run_folder_listing`): each entry, sorted by name, with
#: the entries of the folder it is, sorted, or None (a symlink, a file, a temporary name).
RunListing = tuple[tuple[os.DirEntry[str], tuple[os.DirEntry[str], ...] | None], ...]


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        return []


def _is_temp(name: str) -> bool:
    return name.startswith(".") and _TEMP_NAME.fullmatch(name) is not None


def run_folder_listing(run_path: Path) -> RunListing:
    """The run folder ``run_path`` listed once, never through a symlink (:data:`RunListing`):
    what :func:`first_write` and ``paohuzi doctor`` (:mod:`replay.store.leftovers`) both
    read. :class:`OSError` if it cannot be read (:class:`FileNotFoundError`: it is gone); a
    subfolder gone meanwhile lists as empty."""

    def inside(e: os.DirEntry[str]) -> tuple[os.DirEntry[str], ...] | None:
        if _is_temp(e.name) or not e.is_dir(follow_symlinks=False):
            return None
        return tuple(_entries(Path(e.path)))

    with os.scandir(run_path) as it:
        top = sorted(it, key=lambda e: e.name)
    return tuple((e, inside(e)) for e in top)


def first_write(run_path: Path, listing: RunListing | None = None) -> FirstWrite:
    """The store's files in the run folder ``run_path`` (read it while it has no
    manifest), sorted into a first write's and others (:class:`FirstWrite`); from
    ``listing``, the folder's :func:`run_folder_listing`, when the caller has it (a folder
    that is gone holds nothing)."""
    if listing is None:
        try:
            listing = run_folder_listing(Path(run_path))
        except FileNotFoundError:
            listing = ()
    files: list[Path] = []
    others: list[Path] = []
    for e, inner in listing:
        path = Path(e.path)
        if _is_temp(e.name):
            if e.is_file(follow_symlinks=False):
                files.append(path)
            continue
        first = e.name in FIRST_WRITE_FOLDERS
        if e.is_symlink():
            if first:
                others.append(path)
            continue
        for f in inner or ():
            ours = f.is_file(follow_symlinks=False)
            own = FIRST_ROLLUP_FILE if e.name == "rollup" else FIRST_WRITE_FILE
            if ours and first and (f.name == own or _TEMP_NAME.fullmatch(f.name)):
                files.append(Path(f.path))
            elif f.name.endswith(".parquet"):
                others.append(Path(f.path))
    return FirstWrite(tuple(files), tuple(others))


def lock_held(run_path: Path) -> bool:
    """Whether a writer holds ``run_path/.lock`` now: a shared ``flock`` cannot be had at
    once (the probe, released at once, is the authority: the pid a lock file records stays
    after its writer ends, and a live process may have ended its write). No lock file, or
    not a regular one: not held."""
    lock = Path(run_path) / ".lock"
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def is_orphan(run_path: Path) -> bool:
    """An orphan run folder: a folder (not a symlink) with no ``manifest.json`` (not even a
    dangling link), whose ``.lock`` no writer holds (:func:`lock_held`), holding nothing of
    the store's but an interrupted first write (:func:`first_write`: the first shard's files
    of an import killed before its first manifest). Nothing in it was ever committed; the
    next ``simulate`` or ``import`` into the run clears it (:func:`clear_first_write`)."""
    path = Path(run_path)
    if path.is_symlink() or not path.is_dir():
        return False
    if os.path.lexists(path / MANIFEST_NAME) or lock_held(path):
        return False
    return first_write(path).interrupted


def clear_first_write(run_path: Path) -> int:
    """Before a writer holding the run's lock starts a run in ``run_path``, which has no
    manifest: delete what an interrupted first write left (:func:`first_write`; only those
    files, never through a symlink) and the shard folders it leaves empty; the number of
    files deleted. :class:`StoreError` when the folder holds other shard files (a run whose
    manifest is gone: nothing is deleted)."""
    path = Path(run_path)
    found = first_write(path)
    if found.others:
        rel = found.others[0].relative_to(path).as_posix()
        name = path.name.removeprefix("run=")
        more = f" and {len(found.others) - 1} more" if len(found.others) > 1 else ""
        raise StoreError(
            f"run folder {path} has no manifest.json but holds shard files ({rel}{more}):"
            f" not a run this command can start; move it away or remove it (paohuzi rm {name})"
        )
    n = 0
    for f in found.files:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISREG(os.lstat(f).st_mode):
                os.unlink(f)
                n += 1
    for folder in FIRST_WRITE_FOLDERS:
        with contextlib.suppress(OSError):  # not there, not empty, a symlink: kept
            if not (path / folder).is_symlink():
                os.rmdir(path / folder)
    return n
