"""A file edited in place as no writer of the store edits one: same size, same inode, its
mtime put back, so that only its ctime says it changed (what the checksum cache, the scan
memo and a long-lived reader's background recheck must still see)."""

from __future__ import annotations

import os
from pathlib import Path


def edit_in_place(path: Path, flip: int, at: float = 0.5) -> None:
    """XOR the byte at ``at`` of ``path``'s length with ``flip``, writing over the file
    itself, and restore its access and modification times."""
    st = path.stat()
    raw = bytearray(path.read_bytes())
    raw[int(len(raw) * at)] ^= flip
    with path.open("r+b") as f:
        f.write(bytes(raw))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
