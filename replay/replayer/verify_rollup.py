"""The verifier's check of a run's rollup (docs/LOG_FORMAT.md §13): derived data checked
against its source. The rollup is made again from the summary files of the shards it covers
(with the code every writer uses, :func:`replay.store.rollup.combine`) and compared with the
file, row by row; the first difference is named. The summary files themselves are checked
against their shards' hands by :mod:`replay.replayer.verify_summary`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

_REBUILD = "'paohuzi index' rebuilds it"


def rollup_problem(
    run_path: Path, manifest: dict[str, Any], checksums: bool
) -> tuple[str | None, str | None]:
    """(problem, note) of the rollup a manifest lists: a problem when it claims to stand for
    the summaries it covers (current version, right binding) and its file is damaged or
    does not hold them summed; a note when it is stale or of another version (no reader
    uses it; the next write of the run or ``paohuzi index`` replaces it). Covered summary
    files that cannot be read are the summaries' check's to name: then neither."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from replay.replayer.verify_listed import listed_file
    from replay.store.rollup import FOLD, ROLLUP_KEY, combine, covered, entry_problem
    from replay.store.scan import resolve_shard_path
    from replay.store.summary_schema import SUMMARY_SCHEMA, SUMMARY_TABLE

    entry = manifest.get(ROLLUP_KEY)
    if entry is None:
        return None, None
    name = Path(run_path).name.removeprefix("run=")
    where = f"rollup {entry.get('path') if isinstance(entry, dict) else entry!r:.60}"
    why = entry_problem(manifest)
    if why is not None:
        return None, f"run {name}: {where} is not used: {why} ({_REBUILD})"
    path, why = listed_file(run_path, entry, "rollup file", checksums, _REBUILD)
    if path is None:
        return why, None
    try:
        got = pq.read_table(path).select(SUMMARY_SCHEMA.names)
    except (OSError, ValueError, KeyError, pa.ArrowException) as e:
        return f"{where} cannot be read: {' '.join(str(e).split())[:160]}", None
    table = None
    try:
        cov = covered(manifest)[: int(entry["shards"])]
        for i in range(0, len(cov), FOLD):
            parts = [] if table is None else [table]
            for s in cov[i : i + FOLD]:
                rel = s["files"][SUMMARY_TABLE]["path"]
                parts.append(pq.read_table(resolve_shard_path(run_path, rel)))
            table = combine(parts)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None, None  # a covered summary cannot be read: its own check names it
    assert table is not None
    diff = difference(got, table)
    if diff is None:
        return None, None
    return f"{where} does not match the summaries it rolls up: {diff} ({_REBUILD})", None


def difference(got: Any, want: Any) -> str | None:
    """The first difference between two rollup tables (float sums equal to 1e-9 relative:
    they may add in another order), or None."""
    if got.num_rows != want.num_rows:
        return f"{got.num_rows:,} rows in the file, {want.num_rows:,} recomputed"
    for name in want.column_names:
        floating = str(want.schema.field(name).type).startswith("double")
        xs, ys = got.column(name).to_pylist(), want.column(name).to_pylist()
        for i, (u, v) in enumerate(zip(xs, ys, strict=True)):
            same = (
                u is v
                or u == v
                or (
                    floating
                    and u is not None
                    and v is not None
                    and math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-9)
                )
            )
            if not same:
                return f"row {i}, {name}: {u!r} in the file, {v!r} recomputed"
    return None
