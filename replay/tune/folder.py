"""The folder of a tuning run: ``paohuzi tune`` writes only into a folder it made.

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
from pathlib import Path

from replay.store.files import NotRegularFile, read_regular
from replay.tune.optimizer import OLD_STATE, WEIGHTS, TuneError

MARKER = "paohuzi-tuning.json"
FORMAT = "paohuzi-tuning"
VERSION = 1
#: The largest marker read (it is 44 bytes).
MAX_MARKER_BYTES = 4096


def marker_bytes() -> bytes:
    return (json.dumps({"format": FORMAT, "version": VERSION}) + "\n").encode()


def claim(out: Path) -> Path:
    """``out`` as a tuning folder: made (with its marker) if new, marked if empty, checked if
    marked; :class:`TuneError` (one line) for anything else, before anything is written."""
    if out.is_symlink():
        raise TuneError(f"{out}: is a symlink; give the folder itself")
    if out.exists() and not out.is_dir():
        raise TuneError(f"{out}: exists and is not a folder")
    if not out.exists():
        try:
            out.mkdir(parents=True)
        except FileExistsError:
            pass  # made meanwhile (by another tune?): checked below like any existing folder
        except OSError as e:
            raise TuneError(f"{out}: cannot create it ({e.strerror or e})") from None
        else:
            _mark(out)
            return out
    return _existing(out)


def _existing(out: Path) -> Path:
    marker = out / MARKER
    if os.path.lexists(marker):
        check_marker(marker)
        _no_old_state(out)
        _writable(out)
        return out
    _no_old_state(out)
    try:
        with os.scandir(out) as it:
            empty = next(it, None) is None
    except OSError as e:
        raise TuneError(f"{out}: cannot list it ({e.strerror or e})") from None
    if not empty:
        raise TuneError(
            f"{out}: a folder that paohuzi tune did not make (no {MARKER} in it); tune writes"
            " only into a new or empty folder, or one it made: give another"
        )
    _mark(out)
    return out


def _no_old_state(out: Path) -> None:
    """Refuse a folder holding an older tune's pickled checkpoint (never unpickled)."""
    if not os.path.lexists(out / OLD_STATE):
        return
    hint = ""
    if (out / WEIGHTS).is_file():
        hint = f" (--start {out / WEIGHTS} starts from its result)"
    raise TuneError(
        f"{out / OLD_STATE}: the checkpoint of an older paohuzi tune, a pickle, which is never"
        f" read (a forged one would run code): tune into a new folder{hint}"
    )


def _writable(out: Path) -> None:
    if not os.access(out, os.W_OK | os.X_OK):
        raise TuneError(f"{out}: not writable")


def _mark(out: Path) -> None:
    """Write the marker, never over anything (``O_EXCL``): a marker already there (another
    tune marking the same new folder) is checked instead."""
    _writable(out)
    path = out / MARKER
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        check_marker(path)
        return
    except OSError as e:
        raise TuneError(f"{path}: cannot write it ({e.strerror or e})") from None
    try:
        os.write(fd, marker_bytes())
    finally:
        os.close(fd)


def check_marker(path: Path) -> None:
    """A marker is a regular file holding ``{"format": "paohuzi-tuning", "version": 1}``."""
    try:
        data = read_regular(path, MAX_MARKER_BYTES)
    except NotRegularFile as e:
        raise TuneError(f"{path}: {str(e).removeprefix(f'{path} ')}") from None
    except OSError as e:
        raise TuneError(f"{path}: cannot read it ({e.strerror or e})") from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TuneError(f"{path}: not a paohuzi tuning marker; give another folder")
    if doc.get("version") != VERSION or set(doc) != {"format", "version"}:
        raise TuneError(
            f"{path}: a tuning folder of another version of paohuzi tune"
            f" (marker {data[:60].decode('utf-8', 'replace').strip()!r}); give another folder"
        )
