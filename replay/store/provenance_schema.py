"""The provenance files' format (docs/LOG_FORMAT.md §13): a shard of a run of imported hands
lists ``imported/part-NNNNN.parquet``, one row per hand it holds — where the hand came from —
as ``files.imported`` with path, rows, bytes and sha256.

This module is the format and nothing else (a leaf, like :mod:`replay.store.facts_schema`):
the store's writer writes the files (:mod:`replay.store.write.shard`),
:func:`replay.replayer.importing.provenance` reads them and
:mod:`replay.replayer.verify_listed` checks them.
"""

from __future__ import annotations

import pyarrow as pa

#: The name of the provenance file in a shard's ``files`` and its folder.
PROVENANCE = "imported"
PROVENANCE_SCHEMA = pa.schema(
    [
        pa.field("hand_id", pa.uint32(), nullable=False),
        pa.field("file", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("from_run", pa.string()),
        pa.field("from_hand", pa.int64()),
        pa.field("at", pa.string(), nullable=False),
    ]
)
#: The largest provenance file read (a shard of 10,000 hands writes well under 1 MiB).
PROVENANCE_MAX_BYTES = 64 << 20
