"""What the operating system says of a path or a process, in the words every message uses:
:func:`file_kind` (``a FIFO``, ``a directory`` …), :func:`pid_alive`, and the one bounded
read of an open file (:func:`read_at_most`). No pyarrow, no duckdb: ``paohuzi doctor`` and
the store's readers share it."""

from __future__ import annotations

import os
import stat

_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (for a one-line refusal).

    >>> file_kind(stat.S_IFIFO), file_kind(stat.S_IFDIR | 0o755), file_kind(stat.S_IFLNK)
    ('a FIFO', 'a directory', 'a symbolic link')
    """
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def link_target(path: str | os.PathLike[str]) -> str:
    """Where the symbolic link ``path`` points, as written in it, or ``"?"`` when it cannot
    be read (gone meanwhile, not a link): for a line that names a link it refuses."""
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` may be running on this host: only "no such process" counts
    as gone (``EPERM``, a process of another user, is alive). No process has a pid ≤ 0.

    >>> pid_alive(os.getpid()), pid_alive(0), pid_alive(10**30)
    (True, False, False)
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OverflowError:  # larger than any pid
        return False
    except OSError:  # EPERM: it exists; anything else: unsure, so alive
        return True
    return True


def read_at_most(fd: int, max_bytes: int) -> bytes:
    """What the open file ``fd`` holds, read in chunks up to ``max_bytes + 1`` bytes and no
    further (a result longer than ``max_bytes`` says the file is over the bound, and
    ``/dev/zero`` or an endless pipe cannot exhaust memory). Raises as :func:`os.read`."""
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def writable_mode(root: str | os.PathLike[str]) -> bool:
    """Whether the store's folder is marked writable: a store made read-only (``chmod -w``)
    is never written by a reader, not even by root, whom the mode does not stop."""
    try:
        return bool(os.stat(root).st_mode & 0o222)
    except OSError:
        return False
