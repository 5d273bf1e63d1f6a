"""Writing a shard's facts file (docs/LOG_FORMAT.md §12) and checking it: ``paohuzi
simulate`` calls :func:`write_facts` per finished shard; ``paohuzi index``
(:func:`replay.store.indexer.index_derived`) for the shards recorded before facts, or before
this :data:`~replay.store.facts_schema.FACTS_VERSION`, or whose file :func:`facts_problem`
refuses.
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
