"""The folder of the tables in play (``DATA/play``) as ``paohuzi doctor`` sees it: the
unfinished tables that can be resumed (named, never a left-over: a hand in progress is a
person's), the broken ones with why (kept unless named: ``--fix --yes play/TABLE.jsonl``, or
``paohuzi play --discard TABLE``), and what no writer of play makes there. Nothing is written
while looking (a killed writer's cut last line is left for ``play`` to drop), no symlink is
followed, no special file opened.

* ``DATA/play`` a symbolic link: a left-over (``--fix`` removes the link, never what it
  points to); a FIFO, socket or device: a left-over; a regular file: kept unless named;
* in the folder, a ``*.jsonl`` regular file is a table: sound, or broken (one line why);
  a symbolic link, FIFO, socket or device is a left-over; a folder or another regular file
  is kept unless named (it may hold someone's data).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from replay.play.table import PLAY_DIR, TABLE_SUFFIX, Journal, TableError, play_dir
from replay.store.fsinfo import file_kind, link_target
from replay.store.leftovers import Leftover, shown

# The kinds of left-over of the play folder, as listed.
PLAY_FOLDER = "play folder that is no folder"
BROKEN_TABLE = "broken table"
NOT_A_TABLE = "not a table"


@dataclass
class PlayFindings:
    """What :func:`examine` found: left-overs (for ``doctor``'s list and ``--fix``), one
    line per unfinished table that can be resumed, and what could not be read."""

    leftovers: list[Leftover] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _why(e: TableError, path: Path) -> str:
    """A table's refusal without its path (the listing names it)."""
    text = str(e).replace(f"{path}: ", "").replace(f"{path}:", "line ")
    return text.replace(str(path), "the file")


def examine(root: str | Path) -> PlayFindings:
    """The play folder of the store at ``root`` (module docstring)."""
    root = Path(root).resolve()
    found = PlayFindings()
    folder = play_dir(root)
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return found
    except OSError as e:
        found.notes.append(f"cannot read {PLAY_DIR}: {e.strerror or e}")
        return found
    if stat.S_ISLNK(st.st_mode):
        why = f"a symbolic link to {shown(link_target(folder))}; --fix removes the link only"
        found.leftovers.append(Leftover(PLAY_FOLDER, folder, PLAY_DIR, why))
        return found
    if not stat.S_ISDIR(st.st_mode):
        regular = stat.S_ISREG(st.st_mode)
        found.leftovers.append(
            Leftover(PLAY_FOLDER, folder, PLAY_DIR, file_kind(st.st_mode), needs_yes=regular)
        )
        return found
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as e:
        found.notes.append(f"cannot read {PLAY_DIR}: {e.strerror or e}")
        return found
    for entry in entries:
        path, rel = Path(entry.path), f"{PLAY_DIR}/{entry.name}"
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue  # gone meanwhile
        if stat.S_ISREG(mode) and entry.name.endswith(TABLE_SUFFIX):
            try:
                j = Journal.open(path, repair=False)
            except TableError as err:
                why = _why(err, path)
                fix = f"paohuzi play --discard {path.stem} removes it"
                found.leftovers.append(
                    Leftover(BROKEN_TABLE, path, rel, f"{why}; {fix}", needs_yes=True)
                )
                continue
            deal = j.deal
            found.unfinished.append(
                f"unfinished table: {shown(rel)} ({deal.player}, {deal.preset},"
                f" {len(j.decisions)} decision(s); paohuzi play --resume {path.stem})"
            )
        elif stat.S_ISLNK(mode):
            why = f"a symbolic link to {shown(link_target(path))}; --fix removes the link only"
            found.leftovers.append(Leftover(NOT_A_TABLE, path, rel, why))
        else:
            kind = file_kind(mode)
            keep = stat.S_ISDIR(mode) or stat.S_ISREG(mode)  # may hold someone's data
            found.leftovers.append(
                Leftover(NOT_A_TABLE, path, rel, f"{kind} no writer of play makes", needs_yes=keep)
            )
    return found
