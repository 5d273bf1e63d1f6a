"""A run's manifest (what the run is, which shards are finished) and the writer's lock."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from engine.errors import CorruptLog
from replay.record import schema
from replay.store.files import write_json
from replay.store.layout import MANIFEST_FORMAT, MANIFEST_NAME, StoreError


def read_manifest(run_path: Path) -> dict[str, Any]:
    path = Path(run_path) / MANIFEST_NAME
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptLog(f"no manifest in {run_path}") from None
    except (OSError, ValueError) as e:
        raise CorruptLog(f"unreadable manifest {path}: {e}") from None
    if not isinstance(m, dict) or m.get("format") != MANIFEST_FORMAT:
        raise CorruptLog(f"{path} is not a paohuzi run manifest")
    version = m.get("schema_version")
    if isinstance(version, int) and version > schema.SCHEMA_VERSION:
        raise CorruptLog(
            f"{path}: schema version {version} is newer than this reader"
            f" ({schema.SCHEMA_VERSION}); upgrade paohuzi"
        )
    if version != schema.SCHEMA_VERSION:
        raise CorruptLog(f"{path}: unknown schema version {version!r}")
    return m


def write_manifest(run_path: Path, manifest: dict[str, Any]) -> None:
    write_json(Path(run_path) / MANIFEST_NAME, manifest)


class RunLock:
    """An exclusive ``flock`` on ``run=NAME/.lock`` for the writer of a run."""

    def __init__(self, run_path: Path) -> None:
        self.path = Path(run_path) / ".lock"
        self.fd: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise StoreError(
                f"run folder {self.path.parent} is being written by another process (pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
