"""Left-overs that no writer cleans up: what ``paohuzi doctor`` lists and, with ``--fix``,
removes; ``paohuzi rm RUN`` finishes an interrupted removal of RUN through it.

Only a paohuzi store is looked at (:func:`store_problem`: its catalog, a ``runs`` folder
holding a run folder, or a ``play`` folder holding a table), and in it only the names the
store's own writers create, where they create them; nothing else, anywhere, is listed or
touched, and a folder that is not a store is refused whole (the tables of ``paohuzi play``
are looked at by :mod:`replay.play.folder`, which ``doctor`` adds). A left-over is found by
its name, in one walk that never follows a symlink:

* **an interrupted removal**: ``runs/.removing-NAME-PID``, the folder ``rm`` renames a run to
  before deleting it, whose process is gone (a SIGKILL during the deletion). It is finished,
  never rolled back: its files are partly deleted, so the run could not be restored whole;
* **a temporary file** of a process that is gone: in the store's folder the catalog's rebuild
  ``.paohuzi.duckdb.tmp-PID`` (with its ``.wal`` and DuckDB's spill folder ``.tmp``), the
  checksum cache's ``..checksums.json.tmp-PID``, a write probe ``.write-test-PID-THREAD``
  (``.write-test-PID`` before) and the deal of the day's secret ``.daily-secret.tmp-PID``;
  in a run folder the manifest's ``.manifest.json.tmp-PID``; in a run's shard folders
  (:data:`~replay.store.layout.SHARD_FOLDERS`) a shard file's ``.part-NNNNN.parquet.tmp-PID``;
* **an uncommitted run folder**: ``runs/run=NAME`` with no manifest whose lock no writer
  holds, holding only an interrupted first write (a first imported shard killed before the
  manifest listed it, :func:`~replay.store.manifest.is_orphan`): nothing in it was ever part
  of the store;
* **a symlinked run folder** (removing it removes the link, never what it points to), and an
  entry ``run=…`` that is a FIFO, socket or device;
* **a lock file that is a symlink, FIFO or device** (a run's ``.lock``, the store's
  ``.ingest.lock``), which a writer would open and follow.

Some left-overs may hold a person's data, and are removed only when named
(:attr:`Leftover.needs_yes`; ``doctor --fix --yes NAME``): **a run folder of a refused name**
(``run=..``, spaces, more than 120 characters: a copy made by hand, perhaps of a complete run;
renaming it to a valid name keeps it), a run folder with no manifest that holds more than a
first write (the shards of a run whose manifest is gone) or files no writer makes, a regular
file named ``run=…`` and a folder in a lock file's place.

Not a left-over: the ``.lock`` of a writer that has ended. Every run keeps its lock file (the
``flock`` on it dies with its holder, even on SIGKILL, so it never blocks anyone), and
deleting one could let two writers lock two different files at once.

Whether a process is gone: ``os.kill(pid, 0)`` finds no such process (one of another user
is alive). A pid recorded on another host of a shared filesystem could look gone here, so
whatever lies in a folder with a lock (a run folder, an interrupted removal) is removed only
while holding that lock, taken without waiting: a live writer that holds it, on any host,
keeps its files. Every removal checks its process again just before it deletes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from replay.store.fsinfo import file_kind, link_target, pid_alive
from replay.store.layout import (
    CATALOG_NAME,
    CHECKSUM_CACHE_NAME,
    IMPORT_LOCK_NAME,
    MANIFEST_NAME,
    SCAN_MEMO_NAME,
    SHARD_FOLDERS,
    StoreError,
    check_run_name,
)

if TYPE_CHECKING:
    from replay.store.manifest import RunListing

#: The store's secret of the deals of the day (``replay.play.table.DAILY_SECRET_NAME``, which
#: a test holds equal: this module is below ``replay.play``).
DAILY_SECRET_NAME = ".daily-secret"
#: A table of ``paohuzi play`` (``play/STAMP-PLAYER-K.jsonl``, as ``Journal.create`` names it).
PLAY_TABLE_RE = re.compile(r"\d{8}T\d{6}-[A-Za-z0-9][A-Za-z0-9._-]{0,39}-\d{1,3}\.jsonl")
#: ``runs/.removing-NAME-PID``: a run being deleted by ``rm`` (process PID).
REMOVING_RE = re.compile(r"\.removing-(.+)-(\d+)", re.S)
_PID = r"-(\d{1,12})"
#: The temporary files the store's writers make in the store's folder: the catalog's rebuild
#: (``.wal``: DuckDB's log of it, ``.tmp``: its spill folder), the checksum cache's atomic
#: write, a write probe of one process (and thread).
ROOT_TEMP_RE = re.compile(
    rf"\.{re.escape(CATALOG_NAME)}\.tmp{_PID}(?:\.wal|\.tmp)?"
    rf"|\.{re.escape(CHECKSUM_CACHE_NAME)}\.tmp{_PID}"
    rf"|\.{re.escape(SCAN_MEMO_NAME)}\.tmp{_PID}"
    rf"|\.write-test{_PID}(?:-\d+)?"
    rf"|{re.escape(DAILY_SECRET_NAME)}\.tmp{_PID}"
)
#: The manifest's atomic write, in a run folder.
RUN_TEMP_RE = re.compile(rf"\.{re.escape(MANIFEST_NAME)}\.tmp{_PID}")
#: A shard file (``part-NNNNN.parquet``) of a run's shard folder, and its atomic write.
PART_RE = re.compile(r"part-\d{5,}\.parquet")
PART_TEMP_RE = re.compile(rf"\.part-\d{{5,}}\.parquet\.tmp{_PID}")
LOCK_NAME = ".lock"
_LOCK_RE = re.compile(re.escape(LOCK_NAME))

# The kinds of left-over, as listed.
REMOVAL = "interrupted removal"
TEMP = "temporary file"
UNCOMMITTED = "uncommitted run folder"
ODD_NAME = "run folder of a refused name"
SYMLINK = "symlinked run folder"
NOT_A_FOLDER = "not a run folder"
BAD_LOCK = "lock file that is not a regular file"
#: The kinds whose removal changes what the store's runs are (the catalog is rebuilt).
RUN_ENTRY_KINDS = frozenset({ODD_NAME, SYMLINK, NOT_A_FOLDER, UNCOMMITTED})


def shown(text: str) -> str:
    """A path as one printable line: quoted, with escapes, when it holds a newline, another
    control character or bytes that are not UTF-8.

    >>> shown("runs/run=my run"), shown("runs/run=a\\nb")
    ('runs/run=my run', "'runs/run=a\\\\nb'")
    """
    return text if text.isprintable() else repr(text)


@dataclass(frozen=True)
class Leftover:
    """One left-over: its kind, where it is (``rel``: relative to the store) and why."""

    kind: str
    path: Path
    rel: str
    why: str
    pid: int | None = None  # the process that made it, if its name says
    #: the folder whose ``.lock`` a live writer of it would hold
    lock_dir: Path | None = None
    #: it may hold a person's data: removed only when named (:meth:`named_by`)
    needs_yes: bool = False

    def line(self, alive: bool = False) -> str:
        """``kind: path (why; process N is gone)`` (``alive``: ``is running``)."""
        parts = [self.why] if self.why else []
        if self.pid is not None:
            parts.append(f"process {self.pid} is {'running' if alive else 'gone'}")
        return f"{self.kind}: {shown(self.rel)} ({'; '.join(parts)})"

    def named_by(self, name: str) -> bool:
        """Whether ``name`` names this left-over: its path as listed (``runs/run=my run``),
        its folder's name (``run=my run``) or, for a run folder, the run's (``my run``)."""
        base = self.path.name
        return name in (self.rel, base) or (base.startswith("run=") and name == base[4:])


@dataclass
class Findings:
    """What :func:`find_leftovers` found: the left-overs, the ones that would be but whose
    process is alive (``in_use``, kept), and folders it could not read (``notes``)."""

    leftovers: list[Leftover] = field(default_factory=list)
    in_use: list[Leftover] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, lo: Leftover) -> None:
        (self.in_use if lo.pid is not None and pid_alive(lo.pid) else self.leftovers).append(lo)


def store_problem(root: Path) -> str | None:
    """Why the folder ``root`` is not a paohuzi store, or None when it is: it holds the
    catalog (``paohuzi.duckdb``), a ``runs`` folder that holds a run folder (``run=NAME``) or
    an interrupted removal, or a ``play`` folder that holds a table of ``paohuzi play``
    (``STAMP-PLAYER-K.jsonl``: a store whose first hand is being played). An empty ``runs``
    folder is no store: any folder may hold one. Only ``lstat`` and one listing of ``runs``
    and of ``play``."""
    if os.path.lexists(root / CATALOG_NAME):
        return None
    if _holds(root / "play", PLAY_TABLE_RE.fullmatch):
        return None
    runs = root / "runs"
    try:
        mode = os.lstat(runs).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode):
        return None  # said in a note; nothing behind it is walked
    if stat.S_ISDIR(mode):
        try:
            with os.scandir(runs) as it:
                names = [e.name for e in it]
        except OSError:
            names = ["?"]
        if any(n.startswith(("run=", ".removing-")) for n in names):
            return None
    return (
        f"'{root}' is not a paohuzi store (no {CATALOG_NAME}, no runs folder of run=NAME"
        " folders): nothing in it is looked at or removed"
    )


def _holds(folder: Path, named: Callable[[str], object]) -> bool:
    """Whether ``folder`` is a folder (not a symlink) with an entry of a name ``named`` takes."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
        with os.scandir(folder) as it:
            return any(named(e.name) for e in it)
    except OSError:
        return False


def _entries(folder: Path, root: Path, found: Findings) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as e:
        found.notes.append(f"cannot read {shown(_rel(folder, root))}: {e.strerror or e}")
        return []


def _rel(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path != root else "."


def _temp(
    e: os.DirEntry[str], pattern: re.Pattern[str], root: Path, lock_dir: Path | None
) -> Leftover | None:
    """``e`` as a temporary file of the writers whose names ``pattern`` matches."""
    m = pattern.fullmatch(e.name)
    if m is None:
        return None
    pid = int(next(g for g in m.groups() if g is not None))
    why = "of the catalog's rebuild" if e.name.startswith(f".{CATALOG_NAME}.tmp-") else ""
    return Leftover(TEMP, Path(e.path), _rel(Path(e.path), root), why, pid, lock_dir)


def _removal(e: os.DirEntry[str], root: Path, name: str | None = None) -> Leftover | None:
    m = REMOVING_RE.fullmatch(e.name)
    if m is None or (name is not None and m.group(1) != name):
        return None
    pid, path = int(m.group(2)), Path(e.path)
    why = f"of run {shown(m.group(1))}"
    lock = None if e.is_symlink() else path
    return Leftover(REMOVAL, path, _rel(path, root), why, pid, lock)


def _foreign(listing: RunListing) -> str | None:
    """The first entry (by name) of a run folder, listed once
    (:func:`~replay.store.manifest.run_folder_listing`), that no writer of the store makes
    there (anything but its lock, the manifest's temporary file, shard folders of shard
    files and their temporary files), or None. No symlink followed."""

    def ours(e: os.DirEntry[str], *patterns: re.Pattern[str]) -> bool:
        named = any(p.fullmatch(e.name) for p in patterns)
        return named and e.is_file(follow_symlinks=False)

    for e, inner in listing:
        if e.name in SHARD_FOLDERS and inner is not None:
            for f in inner:
                if not ours(f, PART_RE, PART_TEMP_RE):
                    return f"{e.name}/{f.name}"
        elif not ours(e, _LOCK_RE, RUN_TEMP_RE):  # a lock that is a folder: not ours
            return e.name
    return None


def _uncommitted(path: Path, root: Path, found: Findings) -> None:
    """A run folder with no manifest: an interrupted first write
    (:func:`~replay.store.manifest.first_write`, what ``verify`` notes and the next writer
    clears), or else the shards of a run whose manifest is gone, or a folder made by hand
    (both named before they go). In use while a writer holds its lock
    (:func:`~replay.store.manifest.lock_held`: the pid a lock records outlives the write,
    and the service's process outlives its imports)."""
    from replay.store.manifest import first_write, lock_held, run_folder_listing

    rel = _rel(path, root)
    try:
        listing = run_folder_listing(path)  # one walk, read by both
        other = _foreign(listing)
        shards = first_write(path, listing).others
    except OSError as e:
        found.notes.append(f"cannot read {shown(rel)}: {e.strerror or e}")
        return
    why = "no manifest: a first write that never committed"
    if other is not None:
        why = f"no manifest, and it holds {shown(other)}, which no writer makes"
    elif shards:
        first = shown(shards[0].relative_to(path).as_posix())
        why = f"no manifest, but shards past a first write ({first}): a run whose manifest is gone"
    if lock_held(path):
        found.in_use.append(Leftover(UNCOMMITTED, path, rel, f"{why}; a writer holds its .lock"))
        return
    found.add(Leftover(UNCOMMITTED, path, rel, why, None, path, other is not None or bool(shards)))


def _run_entry(e: os.DirEntry[str], root: Path, found: Findings) -> bool:
    """Classify ``runs/run=…``; whether to look inside it for temporary files."""
    path = Path(e.path)
    rel = _rel(path, root)
    if e.is_symlink():
        why = f"a link to {shown(link_target(path))}; --fix removes the link only"
        found.add(Leftover(SYMLINK, path, rel, why))
        return False
    if not e.is_dir(follow_symlinks=False):
        try:
            mode = e.stat(follow_symlinks=False).st_mode
        except OSError:
            return False  # gone meanwhile
        regular = stat.S_ISREG(mode)
        found.add(Leftover(NOT_A_FOLDER, path, rel, file_kind(mode), needs_yes=regular))
        return False
    try:
        check_run_name(e.name.removeprefix("run="))  # the tool's own test, exactly
    except StoreError:
        why = "a name rm refuses: letters, digits, '.', '_', '-', at most 120; rename it to keep it"
        found.add(Leftover(ODD_NAME, path, rel, why, None, path, needs_yes=True))
        return False
    if not os.path.lexists(path / MANIFEST_NAME):
        _uncommitted(path, root, found)  # its lock, whatever it is, goes with it
        return False
    _lock_entry(path / LOCK_NAME, root, found)
    return True


def _lock_entry(lock: Path, root: Path, found: Findings) -> None:
    """A lock file (a run's, the store's import lock) that is not a regular file: a writer
    would open it and follow it. A folder in its place goes only when named."""
    with contextlib.suppress(FileNotFoundError):
        mode = os.lstat(lock).st_mode
        if not stat.S_ISREG(mode):
            kind = file_kind(mode)
            found.add(
                Leftover(BAD_LOCK, lock, _rel(lock, root), kind, needs_yes=stat.S_ISDIR(mode))
            )


def _run_temps(run_path: Path, root: Path, found: Findings) -> None:
    """The temporary files of a run folder's writers: the manifest's, the shard files'."""
    for e in _entries(run_path, root, found):
        if (lo := _temp(e, RUN_TEMP_RE, root, run_path)) is not None:
            found.add(lo)
        elif e.name in SHARD_FOLDERS and e.is_dir(follow_symlinks=False):
            for f in _entries(Path(e.path), root, found):
                if (lo := _temp(f, PART_TEMP_RE, root, run_path)) is not None:
                    found.add(lo)


def find_leftovers(root: str | Path) -> Findings:
    """Every left-over of the store at ``root`` (module docstring), by path, never
    following a symlink. :class:`StoreError` if ``root`` is not a folder or not a store."""
    root = Path(root)
    if not root.is_dir():
        raise StoreError(f"no data directory '{root}'")
    root = root.resolve()
    problem = store_problem(root)
    if problem is not None:
        raise StoreError(problem)
    found = Findings()
    for e in _entries(root, root, found):
        if (lo := _temp(e, ROOT_TEMP_RE, root, None)) is not None:
            found.add(lo)
        elif e.name == IMPORT_LOCK_NAME:
            _lock_entry(Path(e.path), root, found)
    runs = root / "runs"
    if runs.is_symlink():
        found.notes.append("runs is a symlink: not followed, its run folders not checked")
    elif runs.is_dir():
        for e in _entries(runs, root, found):
            if (lo := _removal(e, root)) is not None:
                found.add(lo)
            elif e.name.startswith("run=") and _run_entry(e, root, found):
                _run_temps(Path(e.path), root, found)
    found.leftovers.sort(key=lambda lo: lo.rel)
    found.in_use.sort(key=lambda lo: lo.rel)
    return found


def interrupted_removals(root: str | Path, name: str) -> Findings:
    """The interrupted removals of run ``name`` (``runs/.removing-NAME-PID``): those whose
    process is gone in ``leftovers``, the others in ``in_use``."""
    root = Path(root).resolve()
    found = Findings()
    runs = root / "runs"
    if runs.is_dir() and not runs.is_symlink():
        for e in _entries(runs, root, found):
            if (lo := _removal(e, root, name)) is not None:
                found.add(lo)
    return found


@contextlib.contextmanager
def _folder_lock(folder: Path | None, rel: str) -> Iterator[None]:
    """Hold ``folder/.lock`` while the block runs, if it is a regular file (followed, as a
    writer opens it): :class:`StoreError` at once if someone holds it. No lock file: no
    writer of ours (a writer takes the lock before it writes anything)."""
    if folder is None:
        yield
        return
    lock = folder / LOCK_NAME
    try:
        regular = stat.S_ISREG(os.stat(lock).st_mode)
    except OSError:
        regular = False
    if not regular:
        yield
        return
    fd = os.open(lock, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise StoreError(f"{shown(rel)} is in use (a writer holds {lock.name})") from None
            raise
        yield
    finally:
        os.close(fd)


def _delete(path: Path) -> None:
    """Delete ``path``: a folder with what it holds, anything else (a symlink too) itself;
    never what a symlink points to (``shutil.rmtree`` does not follow them)."""
    if stat.S_ISDIR(os.lstat(path).st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def remove_leftover(lo: Leftover, confirmed: bool = False) -> None:
    """Remove one left-over of :func:`find_leftovers`; one that may hold a person's data
    (:attr:`Leftover.needs_yes`) only when ``confirmed``. A run folder is first renamed to
    ``runs/.removing-…`` (out of every reader's sight; finished by the next ``doctor`` if
    this one is killed). :class:`StoreError` with one line if it is not confirmed, its
    process is now alive, its folder's lock is held or it cannot be removed."""
    if lo.needs_yes and not confirmed:
        raise StoreError(f"{shown(lo.rel)} is kept: it may hold data; name it to remove it")
    if lo.pid is not None and pid_alive(lo.pid):
        raise StoreError(f"{shown(lo.rel)} is in use (process {lo.pid} is running)")
    try:
        with _folder_lock(lo.lock_dir, lo.rel):
            if lo.kind in (ODD_NAME, UNCOMMITTED):
                digest = hashlib.sha1(os.fsencode(lo.path.name)).hexdigest()[:12]
                gone = lo.path.parent / f".removing-{digest}-{os.getpid()}"
                os.rename(lo.path, gone)
                _delete(gone)
            else:
                _delete(lo.path)
    except FileNotFoundError:
        return  # removed meanwhile
    except OSError as e:
        raise StoreError(f"cannot remove {shown(lo.rel)}: {e.strerror or e}") from None
