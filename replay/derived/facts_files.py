"""A shard's facts file (docs/LOG_FORMAT.md §12), written and checked: a new shard's is
written with it by the store's writer (:mod:`replay.store.write`: ``simulate``, ``import``,
``play``); :func:`write_facts` writes one for ``paohuzi index``
(:func:`replay.derived.indexer.index_derived`), for the shards recorded before facts, or
before this :data:`~replay.store.facts_schema.FACTS_VERSION`, or whose file
:func:`facts_problem` refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from replay.store.facts_schema import FACTS_TABLE, has_facts
from replay.store.scan import ChecksumCache, check_facts
from replay.store.write.shard import facts_bytes, write_derived_table

__all__ = ["facts_bytes", "facts_problem", "write_facts"]


def write_facts(run_path: Path, index: int, table: pa.Table) -> dict[str, Any]:
    """Write one shard's facts ``table`` (:func:`replay.derived.facts.shard_facts`) as
    ``facts/part-NNNNN.parquet``, atomically (the store's writer:
    :func:`~replay.store.write.shard.write_derived_table`); the manifest entries to add to
    the shard's ``files``: ``{"facts": {path, rows, bytes, sha256, version}}``."""
    return {FACTS_TABLE: write_derived_table(run_path, index, FACTS_TABLE, table)}


def facts_problem(run_path: Path, shard: dict[str, Any], cache: ChecksumCache) -> str | None:
    """Why a shard's facts file cannot be used, or None (:func:`check_facts` of one shard)."""
    if not has_facts(shard):
        return "no facts of this version"
    return check_facts(run_path, [shard], cache)[1]
