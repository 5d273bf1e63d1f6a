"""The one writer of the store (docs/LOG_FORMAT.md §1.1, "Who writes"). Every producer of
hands — ``simulate`` (inline, a process pool, Ray tasks), ``import`` (``paohuzi import``,
``POST /runs/{run}/hands``) and ``play`` — writes its runs through :class:`RunWriter`; the
rules of a write (what a commit lists, the locks, the derived files, the rollup, the
catalog refresh) are written here once:

* :mod:`~replay.store.write.run`: :class:`RunWriter`, a run open for writing under its lock
  (and the store's import lock for an import): its manifest created or resumed, its shards
  committed, its status at the end, the catalog refreshed after;
* :mod:`~replay.store.write.shard`: a shard's files (:class:`ShardTables` →
  :func:`write_shard`): its two tables, its provenance, its derived summary and facts, each
  atomic and checksummed — the half of a commit a pool worker or a Ray task runs;
* :mod:`~replay.store.write.listing`: a shard's entry into the manifest, the run's progress;
* :mod:`~replay.store.write.create`: a new run's manifest, simulated or imported.

The readers (:mod:`replay.replayer`, :mod:`replay.analysis`, the dashboard) import none of
this.
"""

from replay.store.write.create import imported_manifest, simulated_manifest
from replay.store.write.run import RunWriter, catalog_refresh
from replay.store.write.shard import ShardTables, write_shard

__all__ = [
    "RunWriter",
    "ShardTables",
    "catalog_refresh",
    "imported_manifest",
    "simulated_manifest",
    "write_shard",
]
