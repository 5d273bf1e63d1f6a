"""What the last scan of a store concluded, remembered in ``DATA/.scan.json``, so that a reader
pays for what changed since the last reader, not for the size of the store.

A scan (:func:`replay.store.scan.scan_store`) reads every manifest and checks every listed
file (size, footer, hand ids, SHA-256). For each run it found sound, the memo keeps what it
concluded (the :class:`~replay.store.scan.RunInfo`) beside the stamps of what it read: the
manifest's and every checked file's ``(size, mtime_ns, ctime_ns, inode)``, each taken before
the file was read. The next scan reuses a run's conclusion only when every one of those
stamps is unchanged: a few ``stat`` calls per shard, no manifest parsed, no file opened.

The memo is a hint, never the authority (as git's index, and as the
:class:`~replay.store.scan.ChecksumCache` it stands on): its stamps are what an edit cannot
keep (no ``touch -r`` restores a ``ctime``, a copy or a rename gets a new inode), a memo made
by another version of the code or for another folder is ignored whole, an entry of the wrong
shape is ignored, and a run with any problem (damaged, its summaries or facts unusable) is
never remembered: it is checked again on every scan. The file is read only when it is a
regular file of at most :data:`MEMO_MAX_BYTES`; a store marked read-only is never written.

>>> memo_key().startswith(f"{MEMO_VERSION}:")
True
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import pydantic_core

from engine.errors import PaohuziError
from replay.store.files import read_regular
from replay.store.layout import SCAN_MEMO_NAME

#: The memo's format; a memo of another is ignored.
MEMO_VERSION = 2
MEMO_FORMAT = "paohuzi-scan-memo"
#: The largest memo read (about 40 bytes per shard file: some 4 MB at 10⁸ hands); a larger
#: file is no memo, and the next scan writes a new one.
MEMO_MAX_BYTES = 256 << 20

#: RunInfo fields kept as JSON lists that are tuples (of tuples) in a RunInfo.
_TUPLES = ("policies", "rules_items", "ranges", "per_rotation")


def memo_key() -> str:
    """What a memo's conclusions depend on besides the files: the memo's format, the log's
    schema, the summaries' and facts' versions, and the code's version."""
    from importlib.metadata import PackageNotFoundError, version

    from replay.schema import SCHEMA_VERSION
    from replay.store.facts_schema import FACTS_VERSION
    from replay.store.summary_schema import SUMMARY_VERSION

    try:
        code = version("paohuzi")
    except PackageNotFoundError:  # pragma: no cover - the package is always installed
        code = "?"
    return f"{MEMO_VERSION}:{SCHEMA_VERSION}:{SUMMARY_VERSION}:{FACTS_VERSION}:{code}"


def stamp(st: os.stat_result) -> list[int]:
    """What an edit of a file cannot keep: size, mtime, ctime (ns) and inode."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


#: The stamp of a file that cannot be stat'ed.
_MISSING = (-1, -1, -1, -1)


def stamps_digest(stamps: Iterable[list[int] | None]) -> str:
    """One digest of files' stamps, in order (a file that cannot be stat'ed: its own mark)."""
    a = array("q")
    for s in stamps:
        a.extend(s if s is not None else _MISSING)
    return hashlib.sha1(a.tobytes()).hexdigest()


def current_digest(paths: Sequence[str]) -> str:
    """:func:`stamps_digest` of the stamps of ``paths`` now (never through a symlink),
    without building them one by one: a big store stats some 100,000 files per reader.

    The ``lstat`` calls are system calls (some 3 µs each, 0.3 s at 10⁸ hands): threads do
    not share them out (each waits for the interpreter's lock between two calls), so a
    process with one thread and a second core forks a child for the second half of a long
    list (:data:`FORK_FROM` paths or more) and reads its stamps through a pipe. The digest
    is the same bytes either way; a child that fails in any way is not trusted: its half is
    stat'ed here."""
    n = len(paths)
    if n < FORK_FROM or threading.active_count() != 1 or _cores() < 2:
        return hashlib.sha1(_stamps(paths).tobytes()).hexdigest()
    half = n // 2
    theirs = _forked_stamps(paths[half:])
    a = _stamps(paths[:half])
    a.extend(theirs() or _stamps(paths[half:]))
    return hashlib.sha1(a.tobytes()).hexdigest()


#: The shortest list of paths :func:`current_digest` shares with a child process;
#: ``$PAOHUZI_STAT_FORK=0`` never forks.
FORK_FROM = 16384
FORK_ENV = "PAOHUZI_STAT_FORK"


def _cores() -> int:
    if os.environ.get(FORK_ENV) == "0" or not hasattr(os, "fork"):
        return 1
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _stamps(paths: Sequence[str]) -> array:
    """The stamps of ``paths`` in order, flat (:data:`_MISSING` for one that cannot be
    stat'ed)."""
    a = array("q")
    extend, lstat = a.extend, os.lstat
    for p in paths:
        try:
            st = lstat(p)
        except OSError:
            extend(_MISSING)
        else:
            extend((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return a


def _forked_stamps(paths: Sequence[str]) -> Callable[[], array | None]:
    """Start a child process stat'ing ``paths``; the returned call waits for it and gives
    their stamps, or None when the child could not start or did not give all of them."""
    try:
        r, w = os.pipe()
    except OSError:
        return lambda: None
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return lambda: None
    if pid == 0:  # the child: its stamps into the pipe, then out without any cleanup
        code = 1
        try:
            os.close(r)
            data = memoryview(_stamps(paths).tobytes())
            while data:
                data = data[os.write(w, data) :]
            code = 0
        finally:
            os._exit(code)
    os.close(w)

    def wait() -> array | None:
        chunks = []
        try:
            while chunk := os.read(r, 1 << 20):
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            os.close(r)
            _, status = os.waitpid(pid, 0)
        body = b"".join(chunks)
        if status != 0 or len(body) != 32 * len(paths):
            return None
        a = array("q")
        a.frombytes(body)
        return a

    return wait


class ScanMemo:
    """The memo of the store at ``root`` (resolved); :meth:`recall` and :meth:`remember` per
    run, :meth:`save` once at the end of a scan."""

    def __init__(self, root: Path, info_type: type) -> None:
        self.info_type = info_type  # replay.store.scan.RunInfo: what a conclusion is
        self.root = str(root)
        self.path = Path(root) / SCAN_MEMO_NAME
        self.key = memo_key()
        self.runs: dict[str, dict[str, Any]] = {}
        self.dirty = False
        self.runs = dict(_load(self.path, self.key, self.root))

    def recall(self, folder: str, manifest_stamp: list[int] | None) -> Any:
        """The conclusion remembered for run folder ``folder`` (``run=NAME``), when its
        manifest's stamp is ``manifest_stamp`` and every file it checked is unchanged;
        else None (and the entry is dropped)."""
        e = self.runs.get(folder)
        if e is None or manifest_stamp is None or e["manifest"] != manifest_stamp:
            return None
        try:
            info, paths = _recalled(self.info_type, e, self.root + os.sep)
        except (TypeError, ValueError, KeyError):
            self.forget(folder)
            return None
        if current_digest(paths) != e["stamps"]:
            self.forget(folder)
            return None
        return info

    def forget(self, folder: str) -> None:
        if self.runs.pop(folder, None) is not None:
            self.dirty = True

    def remember(
        self, folder: str, manifest_stamp: list[int] | None, info: Any, cache: Any
    ) -> None:
        """Keep ``info`` for run folder ``folder`` when the run is sound, with the stamps its
        checks were made on (``cache``: the checksum cache the scan's checks filled, whose
        entries hold the stamp each file was checked by)."""
        self.forget(folder)
        sound = (
            info.problem is None
            and info.summary_problem is None
            and info.facts_problem is None
            and info.rollup_problem is None
            and manifest_stamp is not None
        )
        if not sound:
            return
        base = self.root + os.sep
        if not _listable(info.files, base):
            return
        stamps = []
        for _, path in info.files:
            entry = cache.entries.get(path[len(base) :]) if path.startswith(base) else None
            if entry is None:
                return
            stamps.append(entry[:4])
        self.runs[folder] = {
            "manifest": manifest_stamp,
            "stamps": stamps_digest(stamps),
            "info": _doc(info, base),
        }
        self.dirty = True

    def keep_only(self, folders: set[str]) -> None:
        """Drop the entries of runs no longer in the store."""
        for name in [n for n in self.runs if n not in folders]:
            self.forget(name)

    def digest(self, folder: str) -> str | None:
        """A short digest of a remembered run's stamps (what the store's generation is made
        of), or None."""
        e = self.runs.get(folder)
        if e is None:
            return None
        return f"{stamps_digest([e['manifest']])[:12]}{e['stamps'][:12]}"

    def save(self) -> None:
        from replay.store.files import write_json
        from replay.store.fsinfo import writable_mode

        if not self.dirty or not writable_mode(Path(self.root)):
            return
        doc = {"format": MEMO_FORMAT, "key": self.key, "root": self.root, "runs": self.runs}
        with contextlib.suppress(OSError, PaohuziError):
            write_json(self.path, doc, compact=True)
        self.dirty = False


def _read(path: Path) -> Any:
    try:
        return pydantic_core.from_json(read_regular(path, MEMO_MAX_BYTES))
    except (OSError, ValueError):
        return None


#: The memo last read by this process, per memo file: (the file's stamp before it was read,
#: its valid entries). A long-lived reader scans every few seconds (at 10⁸ hands the memo is
#: megabytes of JSON): an unchanged file (the same size, mtime, ctime and inode) is not read
#: and parsed again. Each entry is still only a hint, checked against the files it names.
_LOADED: dict[str, tuple[list[int], dict[str, dict[str, Any]]]] = {}
#: The conclusions rebuilt from entries (:func:`_recalled`), per entry's ``info`` object.
_REBUILT: dict[int, tuple[dict[str, Any], str, Any, list[str]]] = {}
_LOCK = threading.Lock()


def _load(path: Path, key: str, root: str) -> dict[str, dict[str, Any]]:
    """The valid entries of the memo file at ``path`` made for ``key`` and ``root`` (none when
    it is not one): parsed again only when the file changed since this process last read
    it. The caller copies the dict before changing it."""
    try:
        st = os.lstat(path)
    except OSError:
        return {}
    now = stamp(st)
    with _LOCK:
        got = _LOADED.get(str(path))
    if got is not None and got[0] == now:
        return got[1]
    doc = _read(path)
    runs: dict[str, dict[str, Any]] = {}
    if (
        isinstance(doc, dict)
        and doc.get("format") == MEMO_FORMAT
        and doc.get("key") == key
        and doc.get("root") == root
        and isinstance(doc.get("runs"), dict)
    ):
        runs = {k: v for k, v in doc["runs"].items() if _valid_entry(v)}
    with _LOCK:
        _LOADED[str(path)] = (now, runs)
        live = {id(e["info"]) for r in _LOADED.values() for e in r[1].values()}
        for k in [k for k in _REBUILT if k not in live]:
            del _REBUILT[k]
    return runs


def _recalled(RunInfo: type, e: dict[str, Any], base: str) -> tuple[Any, list[str]]:  # noqa: N803
    """The RunInfo of the entry ``e`` (:func:`_info`) and the paths of its files, rebuilt
    once per entry read (the same entry of an unchanged memo, met by the next scan, is not
    rebuilt); raises as :func:`_info` does."""
    doc = e["info"]
    with _LOCK:
        got = _REBUILT.get(id(doc))
    if got is not None and got[0] is doc and got[1] == base:
        return got[2], got[3]
    info, paths = _info(RunInfo, doc, base)
    with _LOCK:
        _REBUILT[id(doc)] = (doc, base, info, paths)
    return info, paths


def _is_stamp(x: Any) -> bool:
    return type(x) is list and len(x) == 4 and all(type(v) is int and v >= 0 for v in x)


def _valid_entry(e: Any) -> bool:
    """An entry of the memo's shape (its ``info`` is checked when it is used)."""
    return (
        type(e) is dict
        and _is_stamp(e.get("manifest"))
        and type(e.get("stamps")) is str
        and type(e.get("info")) is dict
    )


def _listable(files: Any, base: str) -> bool:
    """Whether a run's files can be kept as :func:`_doc` keeps them: under ``base``, no
    line break or tab in a name (never, for a store's own files)."""
    return all(
        p.startswith(base) and "\n" not in p and "\n" not in t and "\t" not in t for t, p in files
    )


def _doc(info: Any, base: str) -> dict[str, Any]:
    """A RunInfo as JSON: without its manifest, its files as two lines-of-text (their tables,
    their paths relative to the store): at 10⁸ hands some 100,000 files, which as JSON pairs
    took longer to read back than the checks they spare."""
    out = {f.name: getattr(info, f.name) for f in fields(info) if f.name != "manifest"}
    out["files"] = {
        "tables": "\n".join(t for t, _ in info.files),
        "paths": "\n".join(p[len(base) :] for _, p in info.files),
    }
    return out


def _lines(text: Any) -> list[str]:
    if type(text) is not str:
        raise ValueError("not a list of files")
    return text.split("\n") if text else []


def _info(RunInfo: type, doc: dict[str, Any], base: str) -> tuple[Any, list[str]]:  # noqa: N803
    """The RunInfo of :func:`_doc` and its files' paths; raises TypeError, ValueError or
    KeyError for a document not of that shape."""
    kw = dict(doc)
    names = {f.name for f in fields(RunInfo)} - {"manifest"}
    if set(kw) != names:
        raise ValueError("not a run's conclusion")
    for k in _TUPLES:
        kw[k] = tuple(tuple(x) if type(x) is list else x for x in kw[k])
    files = kw["files"]
    if type(files) is not dict:
        raise ValueError("not a list of files")
    tables, rel = _lines(files["tables"]), _lines(files["paths"])
    if len(tables) != len(rel):
        raise ValueError("not a list of files")
    paths = [base + p for p in rel]
    kw["files"] = tuple(zip(tables, paths, strict=True))
    info = RunInfo(**kw)
    if info.problem is not None or type(info.hands) is not int:
        raise ValueError("not a sound run")
    return info, paths
