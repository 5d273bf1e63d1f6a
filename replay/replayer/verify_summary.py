"""The verifier's check of a shard's summary file (docs/LOG_FORMAT.md §10): derived data
checked against its source. The summary is recomputed from the shard's hands and events
with the builder ``simulate`` and ``index`` use (:func:`replay.derived.summaries.shard_summary`)
and compared with the file, kind by kind and row by row; the first difference is named. A
file that passes its manifest's size and SHA-256 checks can still summarise other hands (a
summary rewritten with its manifest entry), and that is what this finds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.errors import CorruptLog
from replay.store.summary_schema import KINDS, SUMMARY_SCHEMA, SUMMARY_TABLE, has_summary

_REBUILD = "'paohuzi index' rebuilds it"


def summary_problem(
    run_path: Path,
    shard: dict[str, Any],
    shape: dict[str, Any],
    hands_path: Path,
    events_path: Path,
    checksums: bool,
) -> str | None:
    """Why the summary file a shard entry lists does not hold what its shard's hands and
    events give (or cannot be checked), or None (also when the shard lists none, or one of
    an older version: no reader uses it, and ``paohuzi index`` replaces it; or when a hand
    does not replay, which the hand check reports). ``shape``: the
    manifest's ``rules`` and ``params``; ``hands_path``, ``events_path``: the shard's checked
    files."""
    from replay.replayer.verify_listed import listed_file

    entry = shard.get("files", {}).get(SUMMARY_TABLE)
    if entry is None:
        return None
    if not isinstance(entry, dict):
        return f"bad summary entry in the manifest: {entry!r:.60}"
    if not has_summary(shard):
        return None
    path, why = listed_file(run_path, entry, "summary file", checksums, _REBUILD)
    if path is None:
        return why
    where = f"summary file {entry.get('path')}"
    try:
        got = pq.read_table(path)
        hands, events = pq.read_table(hands_path), pq.read_table(events_path)
    except (OSError, pa.ArrowException, ValueError) as e:
        return f"{where} cannot be read: {' '.join(str(e).split())[:160]}"
    if got.num_rows != entry.get("rows"):
        return f"{where} has {got.num_rows:,} rows, the manifest says {entry.get('rows')}"
    if set(SUMMARY_SCHEMA.names) - set(got.column_names):
        return f"{where} lacks the summary columns ({_REBUILD})"
    got = got.select(SUMMARY_SCHEMA.names)
    counted = pc.sum(pc.filter(got.column("n"), pc.equal(got.column("kind"), "hands"))).as_py()
    if (counted or 0) != hands.num_rows:
        return (
            f"{where} counts {counted or 0:,} hands, its shard holds {hands.num_rows:,}"
            f" (the summary of other hands: {_REBUILD})"
        )
    try:
        want = _recompute(hands, events, shape, got)
    except CorruptLog:
        return None  # a hand does not replay (its facts, summarised too): the hand check says so
    except (ValueError, KeyError, TypeError, pa.ArrowException) as e:
        return f"{where}: the shard's hands cannot be summarised: {e}"
    diff = first_difference(got, want)
    return None if diff is None else f"{where} does not match the hands it summarises: {diff}"


def _recompute(hands: pa.Table, events: pa.Table, shape: dict[str, Any], got: pa.Table) -> pa.Table:
    """The shard's summary table from its hands and events. The ``conv`` bins use the
    granule the file was made with (a run of imported hands grows after its earlier shards
    were indexed, and the granule follows the run's planned hands); every other row does not
    depend on it."""
    from replay.derived.summaries import shard_summary

    grains = pc.unique(pc.filter(got.column("granule"), pc.equal(got.column("kind"), "conv")))
    params = dict(shape.get("params") or {})
    if len(grains) == 1 and grains[0].as_py():
        params["hands_total"] = int(grains[0].as_py()) * 100  # granule(g·100) = g
    return shard_summary(hands, events, {**shape, "params": params})


def first_difference(got: pa.Table, want: pa.Table) -> str | None:
    """The first difference between two summary tables, kind by kind (in
    :data:`~replay.store.summary_schema.KINDS` order): "its hands rows differ (row 3, n: 17
    in the file, 12 recomputed)"; None when they are equal."""
    got_kinds = set(got.column("kind").to_pylist())
    extra = sorted(str(k) for k in got_kinds - set(KINDS))
    if extra:
        return f"it holds rows of kind {extra[0]!r}, which no summary has"
    for kind in KINDS:
        a = _rows(got, kind)
        b = _rows(want, kind)
        if a.equals(b):
            continue
        if a.num_rows != b.num_rows:
            return f"its {kind} rows differ ({a.num_rows:,} in the file, {b.num_rows:,} recomputed)"
        for name in SUMMARY_SCHEMA.names:
            x, y = a.column(name).to_pylist(), b.column(name).to_pylist()
            for i, (u, v) in enumerate(zip(x, y, strict=True)):
                if u != v:
                    return f"its {kind} rows differ (row {i}, {name}: {u!r} in the file, {v!r} recomputed)"
        return f"its {kind} rows differ"
    return None


def _rows(t: pa.Table, kind: str) -> pa.Table:
    sub = t.filter(pc.equal(t.column("kind"), kind))
    return pa.Table.from_arrays(
        [sub.column(f.name).cast(f.type) for f in SUMMARY_SCHEMA], schema=SUMMARY_SCHEMA
    ).combine_chunks()
