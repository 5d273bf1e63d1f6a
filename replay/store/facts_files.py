"""Writing a shard's facts file (docs/LOG_FORMAT.md §12), checking it, and indexing the runs
recorded before facts (or before this :data:`~replay.store.facts_schema.FACTS_VERSION`):
``paohuzi simulate`` calls :func:`write_facts` per finished shard, ``paohuzi index``
:func:`index_facts` per run, resumably under the run's lock, as it does the summaries
(:mod:`replay.store.summaries`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.rules import RuleSet
from replay.store.facts_schema import FACTS_TABLE, FACTS_VERSION, facts_path, has_facts
from replay.store.scan import ChecksumCache, check_facts


def facts_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=1, row_group_size=1 << 30)
    return sink.getvalue()


def write_facts(
    run_path: Path,
    index: int,
    hands: pa.Table,
    events: pa.Table,
    rules: RuleSet,
    rows: np.ndarray | None = None,
) -> dict[str, Any]:
    """Write one shard's facts, ``facts/part-NNNNN.parquet``, atomically: from the facts rows
    the compiled play loop counted (``rows``), else derived by replay
    (:func:`replay.analysis.facts.derive_facts`); the manifest entries to add to the shard's
    ``files``: ``{"facts": {path, rows, bytes, sha256, version}}``."""
    from replay.analysis.facts import derive_facts, facts_table
    from replay.store.files import write_derived

    if rows is None:
        table = derive_facts(hands, events, rules)
    else:
        table = facts_table(hands, rows, rules)
    data = facts_bytes(table)
    return {
        FACTS_TABLE: write_derived(run_path, facts_path(index), data, table.num_rows, FACTS_VERSION)
    }


def facts_problem(run_path: Path, shard: dict[str, Any], cache: ChecksumCache) -> str | None:
    """Why a shard's facts file cannot be used, or None (:func:`check_facts` of one shard)."""
    if not has_facts(shard):
        return "no facts of this version"
    return check_facts(run_path, [shard], cache)[1]


def index_facts(run_path: Path, progress: Any = None) -> tuple[int, int]:
    """Derive the facts of every listed shard of a run that has none of this version, or
    whose file is missing or damaged, under the run's lock; the manifest is rewritten as
    files are made (paced) and at the end, so an interrupted index resumes about where it
    stopped (a file written but not yet listed is rewritten with the same bytes). Returns
    (shards done now, shards that had facts). ``progress(done, total)`` after each shard."""
    from replay.store.manifest import ManifestWriter, RunLock, read_manifest
    from replay.store.runs import Run

    run_path = Path(run_path)
    with RunLock(run_path):
        manifest = read_manifest(run_path)
        run = Run(run_path.name.removeprefix("run="), run_path, manifest)
        shards = run.shards
        cache = ChecksumCache(run_path.parent.parent)
        todo = [s for s in shards if facts_problem(run_path, s, cache) is not None]
        cache.save()
        rules = RuleSet.from_dict(manifest["rules"])
        writer = ManifestWriter(run_path, manifest)
        progress_doc = manifest.get("progress")
        try:
            for k, shard in enumerate(todo):
                files = {t: f for t, f in shard["files"].items() if t != FACTS_TABLE}
                bare = {**shard, "files": files}
                hands = run.read_shard(bare, "hands")
                events = run.read_shard(bare, "events")
                before = shard["files"].get(FACTS_TABLE) or {}
                new = write_facts(run_path, int(shard["index"]), hands, events, rules)
                shard["files"].update(new)
                if isinstance(progress_doc, dict) and isinstance(progress_doc.get("bytes"), int):
                    old = before.get("bytes", 0) if isinstance(before, dict) else 0
                    progress_doc["bytes"] += int(new[FACTS_TABLE]["bytes"]) - int(old or 0)
                writer.due()
                if progress is not None:
                    progress(k + 1, len(todo))
        finally:
            writer.flush()
        return len(todo), len(shards) - len(todo)
