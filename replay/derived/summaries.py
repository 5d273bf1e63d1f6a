"""A shard's summary table, its file, and why a listed one cannot be used: a new shard's
summary (:func:`shard_summary`) is written with it by the store's writer
(:mod:`replay.store.write`: ``simulate``, ``import``, ``play``); :func:`write_summary` writes
one for ``paohuzi index`` (:func:`replay.derived.indexer.index_derived`), for the shards
recorded before summaries, or before this
:data:`~replay.store.summary_schema.SUMMARY_VERSION`, or whose file :func:`summary_problem`
refuses.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pyarrow as pa

from engine.errors import CorruptLog
from replay.store.scan import ChecksumCache, resolve_shard_path
from replay.store.summary_schema import (
    KINDS,
    SUMMARY_SCHEMA,
    SUMMARY_TABLE,
    has_summary,
    summary_hands,
)
from replay.store.write.shard import summary_bytes, write_derived_table

__all__ = [
    "shard_summary",
    "spec_manifest",
    "summary_bytes",
    "summary_problem",
    "summary_table",
    "write_summary",
]


def summary_table(parts: dict[str, pa.Table]) -> pa.Table:
    """The kinds of :func:`summarize_shard` in one table (the summary file's rows)."""
    tables = [parts[k] for k in KINDS if k in parts]
    return pa.concat_tables(tables) if tables else SUMMARY_SCHEMA.empty_table()


def shard_summary(
    hands: pa.Table, events: pa.Table, manifest: dict[str, Any], facts: pa.Table | None = None
) -> pa.Table:
    """A shard's summary table: the kinds of its hands
    (:func:`~replay.derived.summarize.summarize_shard`) and of its events and their facts
    (:func:`~replay.derived.summarize_events.summarize_events`). ``manifest``: the run's
    ``rules`` and ``params``; ``facts``: the shard's facts table when the caller has it
    (:func:`~replay.derived.facts.shard_facts`; else derived from the events)."""
    from replay.derived.summarize import prepare, summarize_shard
    from replay.derived.summarize_events import summarize_events

    h = prepare(hands, manifest)
    parts = summarize_shard(hands, manifest, h)
    parts.update(summarize_events(hands, events, manifest, h, facts))
    return summary_table(parts)


def write_summary(
    run_path: Path,
    index: int,
    hands: pa.Table,
    events: pa.Table,
    manifest: dict[str, Any],
    facts: pa.Table | None = None,
) -> dict[str, Any]:
    """Summarise one shard's ``hands`` and ``events`` and write
    ``summary/part-NNNNN.parquet`` atomically (the store's writer:
    :func:`~replay.store.write.shard.write_derived_table`); the manifest entries to add to
    the shard's ``files``: ``{"summary": {path, rows, bytes, sha256, version}}``.
    ``paohuzi index`` calls this for shards recorded before. ``facts``: as for
    :func:`shard_summary`."""
    table = shard_summary(hands, events, manifest, facts)
    return {SUMMARY_TABLE: write_derived_table(run_path, index, SUMMARY_TABLE, table)}


def spec_manifest(spec: Any) -> dict[str, Any]:
    """The parts of a manifest :func:`write_summary` reads, from a runner's ``RunSpec``."""
    return {
        "rules": spec.rules.to_dict(),
        "params": {
            "policies": list(spec.policies),
            "duplicate": spec.duplicate,
            "rotations": spec.rotations,
            "hands_total": spec.hands_total,
        },
    }


def summary_problem(run_path: Path, shard: dict[str, Any], cache: ChecksumCache) -> str | None:
    """Why a shard's summary cannot be used, or None: none listed of this version, or its
    file missing, not a regular file, not of the listed size, rows or SHA-256, or counting
    other hands than its shard holds (a summary of another shard, or made up). The file's
    SHA-256 and footer come from ``cache`` when it vouches for them; the hand count is read
    (a few KB)."""
    if not has_summary(shard):
        return "no summary of this version"
    entry = shard["files"][SUMMARY_TABLE]
    rel = entry.get("path")
    try:
        path = resolve_shard_path(run_path, rel)
        st = os.stat(path)
    except CorruptLog as e:
        return str(e)
    except OSError:
        return f"summary file {rel} is missing"
    if not stat.S_ISREG(st.st_mode):
        return f"summary file {rel} is not a regular file"
    if st.st_size != entry.get("bytes"):
        return (
            f"summary file {rel} has {st.st_size:,} bytes, the manifest says {entry.get('bytes')}"
        )
    try:
        rows, _ = cache.footer(path, st, False)
        if rows != entry.get("rows"):
            return f"summary file {rel} has {rows:,} rows, the manifest says {entry.get('rows')}"
        if cache.sha256(path, st) != entry.get("sha256"):
            return f"summary file {rel} does not match its SHA-256 in the manifest"
        n = summary_hands(path)
    except (OSError, ValueError, pa.ArrowException) as e:
        return f"summary file {rel} is corrupt: {' '.join(str(e).split())[:120]}"
    if n != shard.get("hands"):
        return f"summary file {rel} counts {n:,} hands, its shard holds {shard.get('hands')}"
    return None
