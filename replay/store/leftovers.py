"""Left-overs that no writer cleans up: what ``paohuzi doctor`` lists and, with ``--fix``,
removes; ``paohuzi rm RUN`` finishes an interrupted removal of RUN through it.

A left-over is found by its name, in one walk of the store that never follows a symlink:

* **an interrupted removal**: ``runs/.removing-NAME-PID``, the folder ``rm`` renames a run to
  before deleting it, whose process is gone (a SIGKILL during the deletion). It is finished,
  never rolled back: its files are partly deleted, so the run could not be restored whole;
* **a temporary file** ``.NAME.tmp-PID`` (an atomic write, the catalog's rebuild
  ``.paohuzi.duckdb.tmp-PID`` with its ``.wal`` and DuckDB's spill folder ``.tmp``) or a
  write probe ``.write-test-PID-THREAD`` (``.write-test-PID`` before) whose process is gone;
* **a run folder of a refused name** (``run=..``, spaces, more than 120 characters): ``rm``
  cannot name it. Rename it to a valid name to keep it; ``--fix`` removes it;
* **a symlinked run folder** (removing it removes the link, never what it points to) and an
  entry ``run=…`` that is not a folder at all;
* **a run's lock file that is not a regular file** (a symlink, a FIFO, a folder), which a
  writer would open and follow.

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from replay.store.fsinfo import file_kind, pid_alive
from replay.store.layout import CATALOG_NAME, StoreError, check_run_name

#: ``runs/.removing-NAME-PID``: a run being deleted by ``rm`` (process PID).
REMOVING_RE = re.compile(r"\.removing-(.+)-(\d+)", re.S)
#: ``.NAME.tmp-PID`` (``.wal``: DuckDB's log of it, ``.tmp``: its spill folder) and
#: ``.write-test-PID-THREAD``: files a process writes under a temporary name and renames or
#: deletes.
TEMP_RE = re.compile(r"\..+\.tmp-(\d+)(?:\.wal|\.tmp)?|\.write-test-(\d+)(?:-\d+)?", re.S)
LOCK_NAME = ".lock"

# The kinds of left-over, as listed.
REMOVAL = "interrupted removal"
TEMP = "temporary file"
ODD_NAME = "run folder of a refused name"
SYMLINK = "symlinked run folder"
NOT_A_FOLDER = "not a run folder"
BAD_LOCK = "lock file that is not a regular file"
#: The kinds whose removal changes what the store's runs are (the catalog is rebuilt).
RUN_ENTRY_KINDS = frozenset({ODD_NAME, SYMLINK, NOT_A_FOLDER})


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

    def line(self, alive: bool = False) -> str:
        """``kind: path (why; process N is gone)`` (``alive``: ``is running``)."""
        parts = [self.why] if self.why else []
        if self.pid is not None:
            parts.append(f"process {self.pid} is {'running' if alive else 'gone'}")
        return f"{self.kind}: {shown(self.rel)} ({'; '.join(parts)})"


@dataclass
class Findings:
    """What :func:`find_leftovers` found: the left-overs, the ones that would be but whose
    process is alive (``in_use``, kept), and folders it could not read (``notes``)."""

    leftovers: list[Leftover] = field(default_factory=list)
    in_use: list[Leftover] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, lo: Leftover) -> None:
        (self.in_use if lo.pid is not None and pid_alive(lo.pid) else self.leftovers).append(lo)


def _entries(folder: Path, root: Path, found: Findings) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as e:
        found.notes.append(f"cannot read {shown(_rel(folder, root))}: {e.strerror or e}")
        return []


def _rel(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path != root else "."


def _temp(e: os.DirEntry[str], root: Path, lock_dir: Path | None) -> Leftover | None:
    m = TEMP_RE.fullmatch(e.name)
    if m is None:
        return None
    pid = int(m.group(1) or m.group(2))
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


def _run_entry(e: os.DirEntry[str], root: Path, found: Findings) -> bool:
    """Classify ``runs/run=…``; whether to look inside it for temporary files."""
    path = Path(e.path)
    rel = _rel(path, root)
    if e.is_symlink():
        try:
            target = shown(os.readlink(path))
        except OSError:
            target = "?"
        found.add(Leftover(SYMLINK, path, rel, f"a link to {target}; --fix removes the link only"))
        return False
    if not e.is_dir(follow_symlinks=False):
        try:
            kind = file_kind(e.stat(follow_symlinks=False).st_mode)
        except OSError:
            return False  # gone meanwhile
        found.add(Leftover(NOT_A_FOLDER, path, rel, kind))
        return False
    try:
        check_run_name(e.name.removeprefix("run="))  # the tool's own test, exactly
    except StoreError:
        why = "a name rm refuses: letters, digits, '.', '_', '-', at most 120; rename it to keep it"
        found.add(Leftover(ODD_NAME, path, rel, why, None, path))
        return False
    with contextlib.suppress(FileNotFoundError):
        mode = os.lstat(path / LOCK_NAME).st_mode
        if not stat.S_ISREG(mode):
            lock = path / LOCK_NAME
            found.add(Leftover(BAD_LOCK, lock, _rel(lock, root), file_kind(mode)))
    return True


def find_leftovers(root: str | Path) -> Findings:
    """Every left-over of the store at ``root`` (module docstring), by path; one walk
    of the store's tree, not following symlinks. :class:`StoreError` if ``root`` is not a
    folder."""
    root = Path(root)
    if not root.is_dir():
        raise StoreError(f"no data directory '{root}'")
    root = root.resolve()
    runs = root / "runs"
    found = Findings()
    if runs.is_symlink():
        found.notes.append("runs is a symlink: not followed, its run folders not checked")
    # (folder, the run folder it lies in): depth first, in name order
    stack: list[tuple[Path, Path | None]] = [(root, None)]
    while stack:
        folder, run_folder = stack.pop()
        deeper: list[tuple[Path, Path | None]] = []
        for e in _entries(folder, root, found):
            if folder == runs and (lo := _removal(e, root)) is not None:
                found.add(lo)
                continue
            if (lo := _temp(e, root, run_folder)) is not None:
                found.add(lo)
                continue
            if folder == runs and e.name.startswith("run="):
                if _run_entry(e, root, found):
                    deeper.append((Path(e.path), Path(e.path)))
                continue
            if e.is_dir(follow_symlinks=False):
                deeper.append((Path(e.path), run_folder))
        stack.extend(reversed(deeper))
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


def remove_leftover(lo: Leftover) -> None:
    """Remove one left-over of :func:`find_leftovers`. A run folder is first renamed to
    ``runs/.removing-…`` (out of every reader's sight; finished by the next ``doctor`` if
    this one is killed). :class:`StoreError` with one line if its process is now alive,
    its folder's lock is held or it cannot be removed."""
    if lo.pid is not None and pid_alive(lo.pid):
        raise StoreError(f"{shown(lo.rel)} is in use (process {lo.pid} is running)")
    try:
        with _folder_lock(lo.lock_dir, lo.rel):
            if lo.kind == ODD_NAME:
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
