"""A finished shard into its run's manifest (docs/LOG_FORMAT.md §2): its entry among the
``shards`` in index order, the run's ``progress`` (shards, hands, events, bytes over the
listed shards), ``updated``; for a run of imported hands (§13), ``params.deals`` and
``params.hands_total``, the hands it holds. Only :class:`~replay.store.write.run.RunWriter`
calls these."""

from __future__ import annotations

import bisect
from typing import Any

from replay.store.manifest import Manifest, now

__all__ = ["add_progress", "list_shard", "set_progress"]


def _shard_bytes(entry: dict[str, Any]) -> int:
    return sum(f["bytes"] for f in entry["files"].values())


def set_progress(manifest: dict[str, Any]) -> None:
    """``progress`` summed over the listed shards."""
    shards = manifest["shards"]
    manifest["progress"] = {
        "shards": len(shards),
        "hands": sum(s["hands"] for s in shards),
        "events": sum(s["events"] for s in shards),
        "bytes": sum(_shard_bytes(s) for s in shards),
    }
    manifest["updated"] = now()


def add_progress(manifest: dict[str, Any], entry: dict[str, Any]) -> None:
    """``progress`` with one more shard, ``entry`` (what :func:`set_progress` would give
    after listing it, without summing over all the shards again)."""
    p = manifest["progress"]
    p["shards"] += 1
    p["hands"] += entry["hands"]
    p["events"] += entry["events"]
    p["bytes"] += _shard_bytes(entry)
    manifest["updated"] = now()


def list_shard(manifest: dict[str, Any], entry: dict[str, Any]) -> None:
    """List the shard ``entry`` (its files written) in ``manifest``, in index order, and
    bring the run's counts up to date: a simulated run's progress by the one shard (its
    thousands of shards are not summed again per shard), a run of imported hands' summed
    again (one shard per import) with its ``deals`` and ``hands_total``."""
    bisect.insort(manifest["shards"], entry, key=lambda s: s["index"])
    if not Manifest(manifest).imported:
        add_progress(manifest, entry)
        return
    set_progress(manifest)
    n = manifest["progress"]["hands"]
    manifest["params"]["deals"] = manifest["params"]["hands_total"] = n
