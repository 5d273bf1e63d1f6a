"""A shard's files, written the one way every producer writes them (docs/LOG_FORMAT.md §1,
§10, §12, §13): its ``hands`` and ``events`` tables, a run of imported hands' provenance, and
its derived summary and facts, each as a Parquet file written atomically (a temporary name,
then a rename) and described by an entry of the shard's ``files``: path, rows, bytes, SHA-256
(and ``version`` for the derived ones).

:func:`write_shard` is the half of a commit that may run anywhere: inline, in a pool worker,
in a Ray task. It returns the shard's manifest entry, which only the run's writer
(:class:`~replay.store.write.run.RunWriter`) lists. The derived tables are computed above the
store (:mod:`replay.derived`); this module writes them.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from replay.store.facts_schema import FACTS_TABLE, FACTS_VERSION, facts_path
from replay.store.files import atomic_write, write_derived, write_shard_file
from replay.store.layout import shard_file
from replay.store.provenance_schema import PROVENANCE
from replay.store.summary_schema import SUMMARY_TABLE, SUMMARY_VERSION, summary_path

__all__ = ["ShardTables", "facts_bytes", "summary_bytes", "write_derived_table", "write_shard"]


def summary_bytes(table: pa.Table) -> bytes:
    """A shard's summary table (§10) as its file's bytes: one row group, zstd level 9."""
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=9, row_group_size=1 << 20)
    return sink.getvalue()


def facts_bytes(table: pa.Table) -> bytes:
    """A shard's facts table (§12) as its file's bytes: one row group, zstd level 1."""
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=1, row_group_size=1 << 30)
    return sink.getvalue()


def provenance_bytes(table: pa.Table) -> bytes:
    """A shard's provenance table (§13) as its file's bytes: zstd."""
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


#: The derived files of a shard: the name in its ``files``, the path of shard ``i``'s file,
#: the bytes of a table, the version listed.
DERIVED = {
    SUMMARY_TABLE: (summary_path, summary_bytes, SUMMARY_VERSION),
    FACTS_TABLE: (facts_path, facts_bytes, FACTS_VERSION),
}


def write_derived_table(run_path: Path, index: int, kind: str, table: pa.Table) -> dict[str, Any]:
    """Write shard ``index``'s derived ``kind`` (:data:`DERIVED`: ``summary`` or ``facts``)
    atomically; its ``files`` entry (path, rows, bytes, sha256, version)."""
    path_of, encode, version = DERIVED[kind]
    return write_derived(Path(run_path), path_of(index), encode(table), table.num_rows, version)


def _write_provenance(run_path: Path, index: int, table: pa.Table) -> dict[str, Any]:
    """Write shard ``index``'s provenance file atomically; its ``files`` entry."""
    data = provenance_bytes(table)
    rel = shard_file(PROVENANCE, index)
    (run_path / rel).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(run_path / rel, data)
    return {
        "path": rel,
        "rows": table.num_rows,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


@dataclass
class ShardTables:
    """One shard as its producer made it: shard ``index``, its hands from id ``first_hand``
    on, their ``events``; ``provenance``, where each hand came from (a run of imported
    hands); ``derived``, its derived tables by name (``summary``, ``facts``: written and
    listed in this order; a None table is not written); for a simulated shard, its
    sessions and the ``engine`` that played it."""

    index: int
    first_hand: int
    hands: pa.Table
    events: pa.Table
    provenance: pa.Table | None = None
    derived: dict[str, pa.Table | None] = field(default_factory=dict)
    first_session: int | None = None
    sessions: int = 0
    engine: str | None = None


def write_shard(run_path: Path, shard: ShardTables) -> dict[str, Any]:
    """Write ``shard``'s files into the run folder ``run_path``, each atomically; its
    manifest entry (``index``, ``first_session``, ``sessions``, ``first_hand``, ``hands``,
    ``events``, ``engine`` when known, ``files``). Nothing lists it: the run's writer does,
    once every file is written (:meth:`~replay.store.write.run.RunWriter.commit`)."""
    run_path = Path(run_path)
    i = shard.index
    files = {
        "hands": write_shard_file(run_path, shard.hands, "hands", i),
        "events": write_shard_file(run_path, shard.events, "events", i),
    }
    if shard.provenance is not None:
        files[PROVENANCE] = _write_provenance(run_path, i, shard.provenance)
    for kind, table in shard.derived.items():
        if table is not None:
            files[kind] = write_derived_table(run_path, i, kind, table)
    entry: dict[str, Any] = {
        "index": i,
        "first_session": shard.first_session,
        "sessions": shard.sessions,
        "first_hand": shard.first_hand,
        "hands": shard.hands.num_rows,
        "events": shard.events.num_rows,
    }
    if shard.engine is not None:
        entry["engine"] = shard.engine
    entry["files"] = files
    return entry
