"""The import's write: hands from outside (replay files, ``paohuzi import``,
``POST /runs/{run}/hands``, a hand played by ``paohuzi play``) committed into a run of
imported hands through the store's writer (:class:`~replay.store.write.RunWriter`), as one
new shard.

What the hands are and whether they may come in — parsed, verified by the rules, their
outcome compared, no hand stored twice — is the reader's business
(:class:`replay.replayer.importing.ImportBatch`, the ``batch`` given here); this module only
orders it with the locks: the hands are verified before any lock is taken; under the store's
import lock and the run's (waiting at most ``lock_wait`` seconds in all) the run and the
duplicates, in every run of imported hands, are checked again, so a hand is stored once in
the store however many imports into however many runs race; hand ids follow the run's last,
the compiled verifier re-applies the rows, and the shard's files (its two tables, its
provenance, its summary and facts: :func:`replay.derived.shard_derived.imported_derived`)
are written atomically before the manifest lists them. A writer killed at any point leaves
the run as it was (a file not listed is rewritten by the next import; one killed before a
new run's first manifest leaves a folder with no manifest, whose files the next writer into
the run clears: :func:`~replay.store.manifest.clear_first_write`). Nothing is written, not
even the run folder, when no hand is accepted before the lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from engine.rules import RuleSet
from replay.derived.shard_derived import imported_derived
from replay.store.layout import MANIFEST_NAME, check_run_name, ensure_writable, run_dir
from replay.store.manifest import read_manifest
from replay.store.write import RunWriter, ShardTables, imported_manifest

__all__ = ["DUPLICATE_HINT", "ImportBatch", "import_hands"]

#: What a duplicate's refusal adds for ``paohuzi import`` (the API has no such option).
DUPLICATE_HINT = "; give --allow-duplicate to import it again"


class ImportBatch(Protocol):
    """The items of one import on their way to a shard
    (:class:`replay.replayer.importing.ImportBatch`): their verdicts and derived rows."""

    def verify(self) -> None: ...
    def ok(self) -> list[int]: ...
    def raise_if_refused(self) -> None: ...
    def default_run(self, root: Path) -> str: ...
    def screen(
        self,
        root: Path,
        name: str,
        manifest: dict[str, Any] | None,
        allow_duplicate: bool,
        hint: str,
    ) -> RuleSet | None: ...
    def tables(self, name: str, rules: RuleSet, first: int) -> tuple[pa.Table, pa.Table]: ...
    def provenance(self, origin: str | None) -> pa.Table: ...
    def result(
        self, run: str | None, shard: int | None = None, path: Path | None = None
    ) -> Any: ...


def _manifest(path: Path) -> dict[str, Any] | None:
    """The manifest of the run folder ``path``, or None for a new run."""
    return read_manifest(path) if (path / MANIFEST_NAME).exists() else None


def import_hands(
    root: str | Path,
    batch: ImportBatch,
    run: str | None = None,
    command: list[str] | None = None,
    *,
    allow_duplicate: bool = False,
    lock_wait: float = 0.0,
    origin: str | None = None,
    duplicate_hint: str = DUPLICATE_HINT,
) -> Any:
    """Verify each item of ``batch`` and add the hands that pass, as one new shard, to the
    run of imported hands ``run`` (default: the batch's, for the rules of its first good
    hand); then refresh the catalog. The one import path: ``paohuzi import`` (files, all or
    nothing: a batch made so), ``paohuzi import --jsonl``, ``POST /runs/{run}/hands`` and
    ``paohuzi play``. Its :class:`~replay.replayer.importing.ImportResult`.

    Each item is accepted or refused, in input order; a hand already in an imported run of
    the store or earlier in the batch is refused unless ``allow_duplicate``
    (``duplicate_hint`` ends the refusal). ``origin`` prefixes the item names the shard's
    provenance records. See the module for the order of the checks and the locks."""
    batch.verify()
    batch.raise_if_refused()
    if not batch.ok():
        return batch.result(run)
    root = ensure_writable(Path(root))
    name = check_run_name(run or batch.default_run(root))
    batch.screen(root, name, _manifest(run_dir(root, name)), allow_duplicate, duplicate_hint)
    batch.raise_if_refused()
    if not batch.ok():
        return batch.result(name)
    # the duplicate check reads every run of imported hands, so it and the commit are one
    # step against every other import, into this run or any other: the store's import lock
    with RunWriter(root, name, imports=True, lock_wait=lock_wait) as w:
        index = _commit(w, batch, command, allow_duplicate, duplicate_hint, origin)
    if index is None:
        return batch.result(name)
    res = batch.result(name, index, w.path)
    if w.catalog_error is not None:  # the hands are committed whatever becomes of the catalog
        res.catalog_problem = " ".join(str(w.catalog_error).split())
    return res


def _commit(
    w: RunWriter,
    batch: ImportBatch,
    command: list[str] | None,
    allow_duplicate: bool,
    hint: str,
    origin: str | None,
) -> int | None:
    """The import's write, under the locks ``w`` holds: the run and the duplicates checked
    again, the hands' tables re-applied by the compiled verifier, the shard committed (its
    files, then the manifest that lists them). The new shard's index, or None when no hand
    is left to write."""
    rules = batch.screen(w.root, w.name, w.manifest, allow_duplicate, hint)
    batch.raise_if_refused()
    if rules is None or not batch.ok():
        return None
    if w.manifest is None:
        w.create(imported_manifest(w.name, rules, command))
    assert w.manifest is not None
    index, first = w.next_shard()
    hands, events = batch.tables(w.name, rules, first)
    batch.raise_if_refused()
    if hands.num_rows == 0:
        return None
    provenance = batch.provenance(origin)
    derived = imported_derived(hands, events, w.manifest, rules)
    w.commit(ShardTables(index, first, hands, events, provenance, derived))
    return index
