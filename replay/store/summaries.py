"""Writing a shard's summary file, and indexing the runs recorded before summaries (or
before this :data:`~replay.store.summary_schema.SUMMARY_VERSION`): ``paohuzi simulate``
calls :func:`write_summary` per finished shard, ``paohuzi index`` :func:`index_run`.
"""

from __future__ import annotations

import collections
import io
import os
import stat
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engine.errors import CorruptLog
from replay.store.scan import ChecksumCache, resolve_shard_path
from replay.store.summary_schema import (
    KINDS,
    SUMMARY_SCHEMA,
    SUMMARY_TABLE,
    SUMMARY_VERSION,
    has_summary,
    summary_hands,
    summary_path,
)


def summary_table(parts: dict[str, pa.Table]) -> pa.Table:
    """The kinds of :func:`summarize_shard` in one table (the summary file's rows)."""
    tables = [parts[k] for k in KINDS if k in parts]
    return pa.concat_tables(tables) if tables else SUMMARY_SCHEMA.empty_table()


def shard_summary(hands: pa.Table, events: pa.Table, manifest: dict[str, Any]) -> pa.Table:
    """A shard's summary table: the kinds of its hands
    (:func:`~replay.analysis.summarize.summarize_shard`) and of its events
    (:func:`~replay.analysis.summarize_events.summarize_events`). ``manifest``: the run's
    ``rules`` and ``params``."""
    from replay.analysis.summarize import prepare, summarize_shard
    from replay.analysis.summarize_events import summarize_events

    h = prepare(hands, manifest)
    parts = summarize_shard(hands, manifest, h)
    parts.update(summarize_events(hands, events, manifest, h))
    return summary_table(parts)


def summary_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=9, row_group_size=1 << 20)
    return sink.getvalue()


def write_summary(
    run_path: Path, index: int, hands: pa.Table, events: pa.Table, manifest: dict[str, Any]
) -> dict[str, Any]:
    """Summarise one shard's ``hands`` and ``events`` and write
    ``summary/part-NNNNN.parquet`` atomically; the manifest entries to add to the shard's
    ``files``: ``{"summary": {path, rows, bytes, sha256, version}}``. The runner calls this
    per finished shard; ``paohuzi index`` for shards recorded before."""
    from replay.store.files import write_derived

    table = shard_summary(hands, events, manifest)
    data = summary_bytes(table)
    entry = write_derived(run_path, summary_path(index), data, table.num_rows, SUMMARY_VERSION)
    return {SUMMARY_TABLE: entry}


def spec_manifest(spec: Any) -> dict[str, Any]:
    """The parts of a manifest :func:`write_summary` reads, from a runner's ``RunSpec``."""
    return {
        "rules": spec.rules.to_dict(),
        "params": {
            "policies": list(spec.policies),
            "duplicate": spec.duplicate,
            "rotations": spec.rotations,
            "hands_total": spec.hands_total,
        },
    }


def index_run(
    run_path: Path,
    progress: Any = None,
    workers: int = 1,
) -> tuple[int, int]:
    """Summarise every listed shard of a run that has no summary of this version yet, or
    whose summary file is missing or damaged (:func:`summary_problem`), under the run's lock (:class:`~replay.store.manifest.RunLock`); the manifest is rewritten as
    summaries are made (paced: :class:`~replay.store.manifest.ManifestWriter`) and at the
    end, so an interrupted index resumes about where it stopped (a summary file written but
    not yet listed is rewritten with the same bytes). With
    ``workers > 1`` the shards are read and summarised in a pool of that many processes (the
    files and the manifest do not depend on it). Returns (shards summarised now, shards
    already summarised). ``progress(done, total)`` is called after each shard."""
    from replay.store.manifest import ManifestWriter, RunLock, read_manifest
    from replay.store.runs import Run

    run_path = Path(run_path)
    with RunLock(run_path):
        manifest = read_manifest(run_path)
        run = Run(run_path.name.removeprefix("run="), run_path, manifest)
        shards = run.shards
        cache = ChecksumCache(run_path.parent.parent)
        todo = [s for s in shards if summary_problem(run_path, s, cache) is not None]
        cache.save()
        writer = ManifestWriter(run_path, manifest)
        progress_doc = manifest.get("progress")
        try:
            for k, (shard, files) in enumerate(_summarise(run, todo, manifest, workers)):
                before = shard["files"].get(SUMMARY_TABLE) or {}  # an older version's
                shard["files"].update(files)
                if isinstance(progress_doc, dict) and isinstance(progress_doc.get("bytes"), int):
                    progress_doc["bytes"] += int(files[SUMMARY_TABLE]["bytes"]) - int(
                        before.get("bytes", 0) if isinstance(before, dict) else 0
                    )
                writer.due()
                if progress is not None:
                    progress(k + 1, len(todo))
        finally:
            writer.flush()  # what was summarised stays listed, also when interrupted
        return len(todo), len(shards) - len(todo)


def summary_problem(run_path: Path, shard: dict[str, Any], cache: ChecksumCache) -> str | None:
    """Why a shard's summary cannot be used, or None: none listed of this version, or its
    file missing, not a regular file, not of the listed size, rows or SHA-256, or counting
    other hands than its shard holds (a summary of another shard, or made up). The file's
    SHA-256 and footer come from ``cache`` when it vouches for them; the hand count is read
    (a few KB)."""
    if not has_summary(shard):
        return "no summary of this version"
    entry = shard["files"][SUMMARY_TABLE]
    rel = entry.get("path")
    try:
        path = resolve_shard_path(run_path, rel)
        st = os.stat(path)
    except CorruptLog as e:
        return str(e)
    except OSError:
        return f"summary file {rel} is missing"
    if not stat.S_ISREG(st.st_mode):
        return f"summary file {rel} is not a regular file"
    if st.st_size != entry.get("bytes"):
        return (
            f"summary file {rel} has {st.st_size:,} bytes, the manifest says {entry.get('bytes')}"
        )
    try:
        rows, _ = cache.footer(path, st, False)
        if rows != entry.get("rows"):
            return f"summary file {rel} has {rows:,} rows, the manifest says {entry.get('rows')}"
        if cache.sha256(path, st) != entry.get("sha256"):
            return f"summary file {rel} does not match its SHA-256 in the manifest"
        n = summary_hands(path)
    except (OSError, ValueError, pa.ArrowException) as e:
        return f"summary file {rel} is corrupt: {' '.join(str(e).split())[:120]}"
    if n != shard.get("hands"):
        return f"summary file {rel} counts {n:,} hands, its shard holds {shard.get('hands')}"
    return None


def _summarise_one(
    name: str, path: Path, shard: dict[str, Any], shape: dict[str, Any]
) -> dict[str, Any]:
    """Read one shard's ``hands`` and ``events`` (checked) and write its summary; ``shape`` holds the
    manifest's ``rules`` and ``params`` (a worker never receives the whole manifest). The
    shard is checked without its old summary file, which is being replaced."""
    from replay.store.runs import Run

    files = {t: f for t, f in shard["files"].items() if t != SUMMARY_TABLE}
    bare = {**shard, "files": files}
    run = Run(name, path, {**shape, "shards": [bare]})
    hands, events = (run.read_shard(bare, t) for t in ("hands", "events"))
    return write_summary(path, int(shard["index"]), hands, events, shape)


def _summarise(run: Any, todo: list[dict[str, Any]], manifest: dict[str, Any], workers: int) -> Any:
    """(shard, its new ``files`` entries) in shard order, inline or from a process pool."""
    shape = {"rules": manifest.get("rules", {}), "params": manifest.get("params", {})}
    if workers <= 1 or len(todo) <= 1:
        for shard in todo:
            yield shard, _summarise_one(run.name, run.path, shard, shape)
        return
    from replay.pool import process_pool

    # a worker interrupted mid-file would leave its temporary file behind: let it finish
    with process_pool(min(workers, len(todo)), terminate=False) as pool:
        # at most 2 shards per worker in flight, collected in order (bounded memory)
        waiting: collections.deque[tuple[dict[str, Any], Any]] = collections.deque()
        for shard in todo:
            waiting.append((shard, pool.submit(_summarise_one, run.name, run.path, shard, shape)))
            if len(waiting) >= 2 * workers:
                done, fut = waiting.popleft()
                yield done, fut.result()
        while waiting:
            done, fut = waiting.popleft()
            yield done, fut.result()
