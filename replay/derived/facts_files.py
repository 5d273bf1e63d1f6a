"""Writing a shard's facts file (docs/LOG_FORMAT.md §12) and checking it: ``paohuzi
simulate`` calls :func:`write_facts` per finished shard; ``paohuzi index``
(:func:`replay.derived.indexer.index_derived`) for the shards recorded before facts, or before
this :data:`~replay.store.facts_schema.FACTS_VERSION`, or whose file :func:`facts_problem`
refuses.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from replay.store.facts_schema import FACTS_TABLE, FACTS_VERSION, facts_path, has_facts
from replay.store.scan import ChecksumCache, check_facts


def facts_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=1, row_group_size=1 << 30)
    return sink.getvalue()


def write_facts(run_path: Path, index: int, table: pa.Table) -> dict[str, Any]:
    """Write one shard's facts ``table`` (:func:`replay.derived.facts.shard_facts`) as
    ``facts/part-NNNNN.parquet``, atomically; the manifest entries to add to the shard's
    ``files``: ``{"facts": {path, rows, bytes, sha256, version}}``."""
    from replay.store.files import write_derived

    data = facts_bytes(table)
    return {
        FACTS_TABLE: write_derived(run_path, facts_path(index), data, table.num_rows, FACTS_VERSION)
    }


def facts_problem(run_path: Path, shard: dict[str, Any], cache: ChecksumCache) -> str | None:
    """Why a shard's facts file cannot be used, or None (:func:`check_facts` of one shard)."""
    if not has_facts(shard):
        return "no facts of this version"
    return check_facts(run_path, [shard], cache)[1]
