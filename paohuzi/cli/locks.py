"""The lock of a folder a long command writes into: one ``paohuzi tune`` or ``paohuzi
distill`` process per folder (:func:`folder_lock`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from paohuzi.cli.errors import input_error


@contextlib.contextmanager
def folder_lock(out: Path, command: str) -> Iterator[None]:
    """One ``command`` process per folder (an flock on ``OUT/.lock``, released by the kernel
    when the process dies); taken only in a folder :func:`replay.tune.folder.claim` accepted.
    Another process holding it, or a lock file that cannot be opened, is one input error."""
    import fcntl

    try:
        fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        raise input_error(f"{out / '.lock'}: cannot open it ({e.strerror or e})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise input_error(f"{out}: another paohuzi {command} is running in it") from None
        yield
    finally:
        os.close(fd)
