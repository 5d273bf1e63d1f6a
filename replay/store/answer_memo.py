"""What a command answered for one generation of the store, kept in ``DATA/.answers/``, so
that asking again after a check that finds nothing changed costs the check, not the figures.

``paohuzi stats`` at 10⁸ hands spends some 0.3 s computing its figures after the store's
check (:func:`replay.store.scan.scan_store`: a ``stat`` of every listed file). The check is
never skipped: it yields the store's generation (the scan's ``signature``: every run's
manifest stamp and one digest of the stamps of every file it checked, or the manifest's
SHA-256 with every listed file verified against it), and an answer is taken again only
under the same key:

* the generation, and the stamps of the files the figures read besides the listed shards
  (a run's stored reviews, named by its manifest);
* the code: the version of this package and of the libraries the figures come from, and
  the stamps of every source file of ``engine``, ``replay`` and ``paohuzi`` (an edit of
  the code is another key);
* the command and its arguments, as the caller names them.

An answer is what the command printed and the warnings it gave, replayed in that order. It
is a hint like the scan memo: an entry under another key, of another format or shape, or
larger than :data:`ANSWER_MAX_BYTES` is no answer; the caller keeps an answer only when its
computation succeeded; a store whose folder is not writable is never written; at most
:data:`ANSWERS_KEPT` answers are kept (the oldest dropped first).

>>> len(code_key()) == 40
True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import PaohuziError
from replay.store.files import read_regular
from replay.store.layout import ANSWERS_DIR_NAME

#: The entries' format; an entry of another is ignored.
ANSWER_FORMAT = "paohuzi-answer-1"
#: The largest answer kept or read.
ANSWER_MAX_BYTES = 8 << 20
#: The most answers kept in a store.
ANSWERS_KEPT = 64
#: The packages whose code an answer depends on, and the libraries.
_PACKAGES = ("engine", "replay", "paohuzi")
_LIBRARIES = ("paohuzi", "duckdb", "pyarrow", "numpy")


@dataclass(frozen=True)
class Answer:
    """What a command printed (``text``), the warnings it gave before (``warnings``) and
    what the text is called (``label``: for a message about writing it)."""

    text: str
    warnings: tuple[str, ...]
    label: str = ""


_CODE_KEY: list[str] = []


def code_key() -> str:
    """A digest of the code's version: the libraries' versions and the stamps (path, size,
    mtime) of every file of this project's packages; computed once per process."""
    if _CODE_KEY:
        return _CODE_KEY[0]
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha1()
    for lib in _LIBRARIES:
        try:
            h.update(f"{lib}={version(lib)};".encode())
        except PackageNotFoundError:  # pragma: no cover - the libraries are installed
            h.update(f"{lib}=?;".encode())
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for package in _PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(top, package)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    st = os.lstat(path)
                    h.update(f"{path[len(top) :]}:{st.st_size}:{st.st_mtime_ns};".encode())
    _CODE_KEY.append(h.hexdigest())
    return _CODE_KEY[0]


def answer_key(state: Any, command: str, args: Sequence[Any]) -> str:
    """The key of ``command``'s answer with ``args`` (JSON-able) on the store ``state`` (a
    :class:`~replay.store.scan.StoreState`)."""
    h = hashlib.sha256()
    h.update(json.dumps([ANSWER_FORMAT, code_key(), command, list(args)]).encode())
    h.update(f"\0{state.root}\0{state.signature}\0".encode())
    for stamp in _review_stamps(state):
        h.update(repr(stamp).encode())
    return h.hexdigest()


def _review_stamps(state: Any) -> Iterable[tuple[str, tuple[int, ...] | None]]:
    """The stamps of every run's stored review files, by path (None: cannot be stat'ed)."""
    for info in state.runs:
        head = info.head or {}
        for e in head.get("reviews") or ():
            path = os.path.join(state.root, "runs", f"run={info.name}", str(e.get("path")))
            try:
                st = os.lstat(path)
            except OSError:
                yield path, None
            else:
                yield path, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def recall(root: str | Path, key: str) -> Answer | None:
    """The answer kept under ``key`` in the store at ``root``, or None."""
    try:
        doc = json.loads(read_regular(_path(root, key), ANSWER_MAX_BYTES))
    except (OSError, ValueError):
        return None
    if (
        type(doc) is not dict
        or doc.get("format") != ANSWER_FORMAT
        or doc.get("key") != key
        or type(doc.get("text")) is not str
        or type(doc.get("warnings")) is not list
        or not all(type(w) is str for w in doc["warnings"])
        or type(doc.get("label")) is not str
    ):
        return None
    return Answer(doc["text"], tuple(doc["warnings"]), doc["label"])


def keep(root: str | Path, key: str, answer: Answer) -> None:
    """Keep ``answer`` under ``key`` (nothing when the store is read-only, the answer too
    large or the write fails), then drop the oldest answers past :data:`ANSWERS_KEPT`."""
    from replay.store.files import write_json
    from replay.store.fsinfo import writable_mode

    doc = {"format": ANSWER_FORMAT, "key": key, "text": answer.text,
           "warnings": list(answer.warnings), "label": answer.label}  # fmt: skip
    if not writable_mode(Path(root)) or len(answer.text) * 4 > ANSWER_MAX_BYTES:
        return
    folder = Path(root) / ANSWERS_DIR_NAME
    with contextlib.suppress(OSError, PaohuziError):
        folder.mkdir(mode=0o755, exist_ok=True)
        if folder.is_symlink() or not folder.is_dir():
            return
        write_json(_path(root, key), doc, compact=True)
        _trim(folder)


def _path(root: str | Path, key: str) -> Path:
    return Path(root) / ANSWERS_DIR_NAME / f"{key}.json"


#: An answer's atomic write (``replay.store.files.atomic_write``) by process PID.
_TEMP = re.compile(r"\.[0-9a-f]{64}\.json\.tmp-(\d{1,12})")


def _trim(folder: Path) -> None:
    """Drop the oldest answers past :data:`ANSWERS_KEPT`, and the unfinished writes of
    processes that are gone."""
    from replay.store.fsinfo import pid_alive

    entries = []
    for e in os.scandir(folder):
        temp = _TEMP.fullmatch(e.name)
        if temp is not None and not pid_alive(int(temp.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(e.path)
        elif e.name.endswith(".json") and e.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                entries.append((e.stat(follow_symlinks=False).st_mtime_ns, e.name))
    for _, name in sorted(entries)[: max(0, len(entries) - ANSWERS_KEPT)]:
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
