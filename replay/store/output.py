"""Writing a file the user names (``paohuzi export -o``): exactly that file, and never a
special file replaced by a regular one.

======================================  =====================================================
``-o`` names                            what is written
======================================  =====================================================
``-``                                   standard output
a new name, in an existing folder       a new file, atomically (temporary file, fsync, rename)
a regular file                          the same, only with ``force``
a character device (``/dev/null``,      written as a stream: opened, written, closed — no
``/dev/full``, a terminal) or a FIFO    temporary file, no rename, nothing replaced, so no
                                        ``force`` needed (as the shell's ``noclobber``)
a symlink                               followed: what it points to decides; a regular file
                                        it points to is replaced, the link stays a link; a
                                        link to nothing is refused
a folder, a block device, a socket      refused
======================================  =====================================================

Every failure (a full disk or ``/dev/full``, a reader of the FIFO that went away) is one
:class:`OutputError` line naming the file.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engine.errors import PaohuziError

STDOUT = "-"


class OutputError(PaohuziError):
    """An output file that cannot be written as asked; the message names it."""


@dataclass(frozen=True)
class Output:
    """Where :func:`write_output` writes: ``stdout``, a ``file`` written atomically at
    ``path`` (a symlink's target), or a ``stream`` opened at ``path``."""

    name: str
    how: Literal["stdout", "file", "stream"]
    path: Path | None = None


def _refused(name: str, what: str) -> OutputError:
    return OutputError(f"cannot write {name}: it is {what} (give a file name, or - for stdout)")


def plan_output(name: str, force: bool = False) -> Output:
    """How ``name`` would be written (module docstring), checked before any work is done;
    :class:`OutputError` with the reason if it cannot be.

    >>> plan_output("-").how
    'stdout'
    >>> plan_output("/dev/null").how
    'stream'
    >>> plan_output("/")
    Traceback (most recent call last):
    ...
    replay.store.output.OutputError: cannot write /: it is a folder (give a file name, or - for stdout)
    """
    if name == STDOUT:
        return Output(name, "stdout")
    if not name:
        raise OutputError("empty output file name (give - for standard output)")
    if "\x00" in name:
        raise OutputError(f"cannot write {name!r}: a file name holds no NUL character")
    path = Path(name)
    try:
        st = os.stat(path)  # follows a symlink: what it points to decides
    except FileNotFoundError:
        if os.path.islink(path):
            raise OutputError(
                f"cannot write {name}: it is a symlink to {os.readlink(path)}, which does not exist"
            ) from None
        if name.endswith(os.sep):
            raise OutputError(f"cannot write {name}: no such folder") from None
        parent = path.parent
        if not parent.is_dir():
            raise OutputError(f"cannot write {name}: no folder {parent}") from None
        return Output(name, "file", path)
    except OSError as e:
        raise OutputError(f"cannot write {name}: {e.strerror or e}") from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        if not force:
            raise OutputError(f"{name} exists; give --force to overwrite it")
        return Output(name, "file", Path(os.path.realpath(path)))
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return Output(name, "stream", path)
    if stat.S_ISDIR(mode):
        raise _refused(name, "a folder")
    if stat.S_ISBLK(mode):
        raise _refused(name, "a block device")
    if stat.S_ISSOCK(mode):
        raise _refused(name, "a socket")
    raise _refused(name, "a special file")


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_stream(out: Output, data: bytes) -> None:
    """Open ``out.path`` (a device or FIFO: waits for a FIFO's reader), check it still is
    one, write ``data``; never creates, truncates or renames anything."""
    assert out.path is not None
    fd = os.open(out.path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):  # replaced since plan_output
            raise OutputError(f"cannot write {out.name}: it changed while being opened")
        _write_fd(fd, data)
    finally:
        os.close(fd)


def _silence_stdout() -> None:
    """After a failed write to standard output, point it at ``/dev/null`` so that the
    interpreter's own flush at exit does not fail again with a traceback."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return  # not a file (a test's capture)
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass


def write_stdout(data: bytes) -> None:
    """``data`` on standard output, flushed; :class:`OutputError` (one line) if it cannot
    be written (``> /dev/full``, a closed pipe)."""
    stream = sys.stdout
    try:
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()
    except OSError as e:
        _silence_stdout()
        raise OutputError(f"cannot write to standard output: {_reason(e)}") from None


def write_output(out: Output, data: bytes) -> None:
    """Write ``data`` as :func:`plan_output` planned; :class:`OutputError` with one line
    naming the file if it cannot be."""
    from replay.store.files import atomic_write
    from replay.store.layout import StoreError

    if out.how == "stdout":
        write_stdout(data)
        return
    assert out.path is not None
    try:
        if out.how == "stream":
            _write_stream(out, data)
        else:
            atomic_write(out.path, data)
    except StoreError as e:  # atomic_write's "disk full while writing …"
        raise OutputError(str(e)) from None
    except OSError as e:
        raise OutputError(f"cannot write {out.name}: {_reason(e)}") from None
