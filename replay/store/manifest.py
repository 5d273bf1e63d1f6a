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


class ManifestWriter:
    """Rewrites a run's manifest as shards finish, at a pace that keeps the total work
    linear-ish: ``due()`` (one shard's change made) writes when the shards changed since the
    last rewrite reach 1/``share`` of those the manifest lists (at least 1), else leaves the
    change pending; ``flush()`` writes a pending change. A run of up to ``share`` shards is so
    rewritten after every shard; one that lists 20,000 shards (a 100,000,000-hand run) every
    300 shards, where a rewrite per shard would make the run quadratic (about 400 rewrites in
    all instead of 20,000). The cost: a process killed between two rewrites loses the shards
    finished since the last one (their files are written again, same bytes, on resume)."""

    def __init__(self, run_path: Path, manifest: dict[str, Any], share: int = 64) -> None:
        self.run_path, self.manifest, self.share = Path(run_path), manifest, share
        self.changed = 0

    def due(self) -> bool:
        """Count one change; write if it is time. True if written."""
        self.changed += 1
        if self.changed < max(1, len(self.manifest.get("shards", ())) // self.share):
            return False
        self.flush()
        return True

    def flush(self) -> None:
        if self.changed:
            write_manifest(self.run_path, self.manifest)
            self.changed = 0


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
