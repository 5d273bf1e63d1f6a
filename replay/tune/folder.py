"""The folder of a tuning run: ``paohuzi tune`` writes only into a folder it made (and so
does ``paohuzi distill``, with its own marker: :class:`Owner`).

``tune OUT`` takes ``OUT`` when it is

* **new** — it creates it (and its parents) and writes the marker :data:`MARKER` into it;
* an **empty** folder — it writes the marker into it (nothing of anyone's is there);
* a folder with **the marker** — a folder tune made: it goes on there (resumes).

Any other folder is refused in one line before anything is written into it — not even the
lock: a folder of the user's (``myproj`` with its ``report.md``), a system folder (``/etc``),
and a tuning folder of an older ``paohuzi tune`` (without the marker, with its pickled
checkpoint ``state.pkl``; that checkpoint is never read, since unpickling a forged one runs
code: the user starts afresh in a new folder, from its weights if they like). A symbolic
link, or a file in the folder's place, is refused too.

The marker is a small JSON object, ``{"format": "paohuzi-tuning", "version": 1}``; anything
else under its name (not a regular file, not that object) is refused in one line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from engine.errors import PaohuziError
from replay.store.files import read_json_document
from replay.tune.optimizer import OLD_STATE, WEIGHTS, TuneError

#: The largest marker read (it is 44 bytes).
MAX_MARKER_BYTES = 4096
VERSION = 1


@dataclass(frozen=True)
class Owner:
    """A command that writes only into folders it made: its name, what its folders hold
    (``tuning``), its marker file and format, its error, and a file of an older version of
    it that is refused by name (never read)."""

    command: str
    noun: str
    marker: str
    format: str
    error: type[PaohuziError]
    old_state: str | None = None

    def marker_bytes(self) -> bytes:
        return (json.dumps({"format": self.format, "version": VERSION}) + "\n").encode()


TUNING = Owner("tune", "tuning", "paohuzi-tuning.json", "paohuzi-tuning", TuneError, OLD_STATE)
MARKER = TUNING.marker


def claim(out: Path, owner: Owner = TUNING) -> Path:
    """``out`` as a folder of ``owner``: made (with its marker) if new, marked if empty,
    checked if marked; its error (one line) for anything else, before anything is written."""
    error = owner.error
    if out.is_symlink():
        raise error(f"{out}: is a symlink; give the folder itself")
    if out.exists() and not out.is_dir():
        raise error(f"{out}: exists and is not a folder")
    if not out.exists():
        try:
            out.mkdir(parents=True)
        except FileExistsError:
            pass  # made meanwhile (by another tune?): checked below like any existing folder
        except OSError as e:
            raise error(f"{out}: cannot create it ({e.strerror or e})") from None
        else:
            _mark(out, owner)
            return out
    return _existing(out, owner)


def _existing(out: Path, owner: Owner) -> Path:
    marker = out / owner.marker
    if os.path.lexists(marker):
        check_marker(marker, owner)
        _no_old_state(out, owner)
        _writable(out, owner)
        return out
    _no_old_state(out, owner)
    try:
        with os.scandir(out) as it:
            empty = next(it, None) is None
    except OSError as e:
        raise owner.error(f"{out}: cannot list it ({e.strerror or e})") from None
    if not empty:
        raise owner.error(
            f"{out}: a folder that paohuzi {owner.command} did not make (no {owner.marker} in"
            f" it); {owner.command} writes only into a new or empty folder, or one it made:"
            " give another"
        )
    _mark(out, owner)
    return out


def _no_old_state(out: Path, owner: Owner) -> None:
    """Refuse a folder holding an older tune's pickled checkpoint (never unpickled)."""
    if owner.old_state is None or not os.path.lexists(out / owner.old_state):
        return
    hint = ""
    if (out / WEIGHTS).is_file():
        hint = f" (--start {out / WEIGHTS} starts from its result)"
    raise TuneError(
        f"{out / OLD_STATE}: the checkpoint of an older paohuzi tune, a pickle, which is never"
        f" read (a forged one would run code): tune into a new folder{hint}"
    )


def _writable(out: Path, owner: Owner) -> None:
    if not os.access(out, os.W_OK | os.X_OK):
        raise owner.error(f"{out}: not writable")


def _mark(out: Path, owner: Owner) -> None:
    """Write the marker, never over anything (``O_EXCL``): a marker already there (another
    run marking the same new folder) is checked instead."""
    _writable(out, owner)
    path = out / owner.marker
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        check_marker(path, owner)
        return
    except OSError as e:
        raise owner.error(f"{path}: cannot write it ({e.strerror or e})") from None
    try:
        os.write(fd, owner.marker_bytes())
    finally:
        os.close(fd)


def check_marker(path: Path, owner: Owner = TUNING) -> None:
    """A marker is a regular file holding ``{"format": FORMAT, "version": 1}``."""
    error = owner.error
    try:
        doc = read_json_document(path, MAX_MARKER_BYTES, error)
    except FileNotFoundError:
        raise error(f"{path}: cannot read it (it went away)") from None
    if not isinstance(doc, dict) or doc.get("format") != owner.format:
        raise error(f"{path}: not a paohuzi {owner.noun} marker; give another folder")
    if doc.get("version") != VERSION or set(doc) != {"format", "version"}:
        shown = json.dumps(doc, ensure_ascii=False)[:60]
        raise error(
            f"{path}: a {owner.noun} folder of another version of paohuzi {owner.command}"
            f" (marker {shown!r}); give another folder"
        )
