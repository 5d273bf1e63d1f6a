"""The verifier's checks of the files a shard lists besides its two tables, other than the
summary (:mod:`replay.replayer.verify_summary`): its facts file (docs/LOG_FORMAT.md §12),
derived data recomputed from the shard's hands and events with the one derivation ``index``
uses (:func:`replay.derived.facts.derive_facts`) and compared column by column, and the
provenance file of a run of imported hands (§13), checked for its size, SHA-256, rows and
hand ids. :func:`listed_file` is the file-level check all three share.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.errors import CorruptLog
from engine.rules import RuleSet
from replay.store.scan import file_sha256, resolve_shard_path

_REBUILD = "'paohuzi index' rebuilds it"


def listed_file(
    run_path: Path, entry: Any, what: str, checksums: bool, rebuild: str = ""
) -> tuple[Path | None, str | None]:
    """A listed file against its manifest entry (inside the run folder, a regular file of
    the listed size and SHA-256): ``(path, None)``, or ``(None, why)`` naming it as ``what``
    (``rebuild``: how it is rebuilt, added to a missing or mismatched file's line)."""
    if not isinstance(entry, dict):
        return None, f"bad {what} entry in the manifest: {entry!r:.60}"
    rel = entry.get("path")
    try:
        path = resolve_shard_path(run_path, rel)
    except CorruptLog as e:
        return None, str(e)
    where = f"{what} {rel}"
    how = f" ({rebuild})" if rebuild else ""
    try:
        st = os.stat(path)
    except OSError:
        return None, f"{where} is missing{how}"
    if not stat.S_ISREG(st.st_mode):
        return None, f"{where} is not a regular file"
    if checksums and st.st_size != entry.get("bytes"):
        return None, f"{where} has {st.st_size:,} bytes, the manifest says {entry.get('bytes')}"
    if checksums and file_sha256(path) != entry.get("sha256"):
        return None, f"{where} does not match its SHA-256 in the manifest{how}"
    return path, None


def facts_problem(
    run_path: Path,
    shard: dict[str, Any],
    rules: RuleSet,
    hands: pa.Table,
    events: pa.Table,
    checksums: bool,
    rows: np.ndarray | None = None,
) -> str | None:
    """Why the facts file a shard lists does not hold what its hands and events give, or
    None (also when it lists none, or one of an older version, which no reader uses, or when
    a hand does not replay: the hand check reports that). ``hands``/``events``: the shard's
    checked tables; ``rows``: their facts rows, counted by the compiled check as it
    re-applied them (else they are derived by a replay)."""
    from replay.derived.facts import shard_facts
    from replay.store.facts_schema import FACTS_SCHEMA, FACTS_TABLE, has_facts

    entry = shard.get("files", {}).get(FACTS_TABLE)
    if entry is None or not has_facts(shard):
        return None
    path, why = listed_file(run_path, entry, "facts file", checksums, _REBUILD)
    if path is None:
        return why
    where = f"facts file {entry.get('path')}"
    try:
        got = pq.read_table(path)
    except (OSError, pa.ArrowException, ValueError) as e:
        return f"{where} cannot be read: {' '.join(str(e).split())[:160]}"
    if got.num_rows != entry.get("rows") or got.num_rows != hands.num_rows:
        return (
            f"{where} has {got.num_rows:,} rows, the manifest says {entry.get('rows')} and its"
            f" shard holds {hands.num_rows:,} hands"
        )
    if got.schema.remove_metadata() != FACTS_SCHEMA.remove_metadata():
        return f"{where} does not have the facts columns ({_REBUILD})"
    try:
        want = shard_facts(hands, events, rules, rows)
    except CorruptLog:
        return None
    for name in FACTS_SCHEMA.names:
        a, b = got.column(name).to_pylist(), want.column(name).to_pylist()
        if a != b:
            i = next(i for i, (u, v) in enumerate(zip(a, b, strict=True)) if u != v)
            hand = want.column("hand_id")[i].as_py()
            return (
                f"{where} does not match the hands it describes: hand {hand}, {name}:"
                f" {a[i]!r} in the file, {b[i]!r} recomputed ({_REBUILD})"
            )
    return None


def provenance_problem(run_path: Path, shard: dict[str, Any], checksums: bool) -> str | None:
    """Why the provenance file a shard of imported hands lists (where each hand came from)
    is not the one the manifest describes — size, SHA-256, one row per hand of the shard in
    hand order — or None (also when it lists none: a shard of a run written before there
    were such files, or of a simulated run)."""
    from replay.store.provenance_schema import PROVENANCE, PROVENANCE_SCHEMA

    entry = shard.get("files", {}).get(PROVENANCE)
    if entry is None:
        return None
    path, why = listed_file(run_path, entry, "provenance file", checksums)
    if path is None:
        return why
    where = f"provenance file {entry.get('path')}"
    try:
        got = pq.read_table(path)
        ids = got.column("hand_id").to_pylist()
    except (OSError, pa.ArrowException, ValueError, KeyError) as e:
        return f"{where} cannot be read: {' '.join(str(e).split())[:160]}"
    if set(PROVENANCE_SCHEMA.names) - set(got.column_names):
        return f"{where} lacks the provenance columns"
    first, n = int(shard.get("first_hand", 0)), int(shard.get("hands", 0))
    if got.num_rows != entry.get("rows") or ids != list(range(first, first + n)):
        return (
            f"{where} lists {got.num_rows:,} hands, not the shard's {n:,} (hands {first}"
            f"…{first + n - 1})"
        )
    return None
