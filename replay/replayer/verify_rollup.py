"""The verifier's check of a run's rollup (docs/LOG_FORMAT.md §13): derived data checked
against its source. The rollup is made again from the summary files of the shards it covers
(with the code every writer uses, :func:`replay.store.rollup.recomputed_problem`, which
``paohuzi index`` calls too) and compared with the file, row by row; the first difference is
named. The summary files themselves are checked
against their shards' hands by :mod:`replay.replayer.verify_summary`.
"""

from __future__ import annotations

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
    from replay.store.rollup import ROLLUP_KEY, conformed, entry_problem, recomputed_problem

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
        got = conformed(pq.read_table(path))
    except (OSError, ValueError, KeyError, pa.ArrowException) as e:
        return f"{where} cannot be read: {' '.join(str(e).split())[:160]}", None
    try:
        diff = recomputed_problem(run_path, manifest, got)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None, None  # a covered summary cannot be read: its own check names it
    if diff is None:
        return None, None
    return f"{where} does not match the summaries it rolls up: {diff} ({_REBUILD})", None
