"""``paohuzi index``'s one pass over a run: each listed shard whose derived files — its
summary (docs/LOG_FORMAT.md §10) and its facts (§12) — are missing, of an older version, or
damaged gets them made again from its hands and events, read once (checked) for both.

Under the run's lock (:class:`~replay.store.manifest.RunLock`); the manifest is rewritten as
files are made (paced: :class:`~replay.store.manifest.ManifestWriter`) and at the end, so an
interrupted index resumes about where it stopped (a file written but not yet listed is
rewritten with the same bytes). With ``workers > 1`` the shards are read and derived in a
pool of that many processes, at most two shards per worker in flight, collected in shard
order (the files and the manifest do not depend on it). In a run of imported hands, whose
seats' policies vary from hand to hand, a summary's rotations are the run's policy classes
(:func:`~replay.store.summary_schema.run_shape`): the classes of the hands to summarise are
added to ``params.seat_policies`` first, from their ``policy_*`` columns in shard order;
past four classes the run gets no more summaries (its figures come from its hands).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.store.facts_schema import FACTS_TABLE
from replay.store.scan import ChecksumCache
from replay.store.summary_schema import SUMMARY_TABLE

if TYPE_CHECKING:
    from replay.pool import SharedPool

#: The derived files of a shard, in the order they are made.
DERIVED = (SUMMARY_TABLE, FACTS_TABLE)


def _problem(kind: str) -> Callable[[Path, dict[str, Any], ChecksumCache], str | None]:
    """Why a shard's derived file of ``kind`` cannot be used (None: it can)."""
    if kind == SUMMARY_TABLE:
        from replay.derived.summaries import summary_problem

        return summary_problem
    from replay.derived.facts_files import facts_problem

    return facts_problem


def index_derived(
    run_path: Path, progress: Any = None, workers: int = 1, pool: SharedPool | None = None
) -> dict[str, tuple[int, int]]:
    """Make the derived files every listed shard of the run at ``run_path`` lacks (see the
    module); per derived kind of the run, (shards done now, shards that had it).
    ``progress(done, total)`` is called after each shard. ``pool``: the workers to use when
    ``workers > 1`` (one :class:`~replay.pool.SharedPool` for many runs), else the run's own."""
    from replay.store.files import cleanup_temp
    from replay.store.manifest import (
        Manifest,
        ManifestWriter,
        RunLock,
        read_manifest,
        write_manifest,
    )
    from replay.store.rollup import covered, prune, rebuild_rollup
    from replay.store.runs import Run
    from replay.store.scan import check_rollup

    run_path = Path(run_path)
    with RunLock(run_path):
        cleanup_temp(run_path)  # what a killed writer of the run (an index too) left
        manifest = read_manifest(run_path)
        run = Run(run_path.name.removeprefix("run="), run_path, manifest)
        kinds: tuple[str, ...] = DERIVED
        cache = ChecksumCache(run_path.parent.parent)
        checks = {k: _problem(k) for k in kinds}
        todo = []
        for shard in run.shards:
            missing = tuple(k for k in kinds if checks[k](run_path, shard, cache) is not None)
            if missing:
                todo.append((shard, missing))
        cache.save()
        if Manifest(manifest).imported and not _classes(run, todo, manifest):
            kinds = (FACTS_TABLE,)
            todo = [(sh, (FACTS_TABLE,)) for sh, m in todo if FACTS_TABLE in m]
        made = dict.fromkeys(kinds, 0)
        for _, missing in todo:
            for k in missing:
                made[k] += 1
        writer = ManifestWriter(run_path, manifest)
        progress_doc = manifest.get("progress")
        try:
            derived = _derive(run, todo, manifest, workers, pool)
            for n, (shard, files) in enumerate(derived, 1):
                for kind, entry in files.items():
                    before = shard["files"].get(kind)
                    shard["files"][kind] = entry
                    if isinstance(progress_doc, dict) and isinstance(
                        progress_doc.get("bytes"), int
                    ):
                        old = before.get("bytes", 0) if isinstance(before, dict) else 0
                        progress_doc["bytes"] += int(entry["bytes"]) - int(old or 0)
                writer.due()
                if progress is not None:
                    progress(n, len(todo))
        finally:
            writer.flush()  # what was made stays listed, also when interrupted
        listed, shards, problem = check_rollup(run_path, manifest, cache)
        if problem is None and listed and shards == len(covered(manifest)):
            problem = _recheck_rollup(run_path, manifest, listed[0][1], cache)
        if problem is not None or shards != len(covered(manifest)):
            rebuild_rollup(
                run_path,
                manifest,
                damaged=problem is not None,
                write=lambda m: write_manifest(run_path, m, rollup=False),
            )
            _vouch_made(run_path, manifest, cache)
        prune(run_path, manifest)  # the rollups replaced longer ago than the grace period
        cache.save()
        return {k: (made[k], len(run.shards) - made[k]) for k in kinds}


def _vouch_made(run_path: Path, manifest: dict[str, Any], cache: ChecksumCache) -> None:
    """Remember the rollup just made from the summaries as equal to them (it is, by making)."""
    import os

    from replay.store.check import resolve_shard_path
    from replay.store.rollup import ROLLUP_KEY

    entry = manifest.get(ROLLUP_KEY)
    if isinstance(entry, dict):
        path = resolve_shard_path(run_path, entry["path"])
        cache.vouch_rollup(path, os.lstat(path), entry["binding"])


def _recheck_rollup(
    run_path: Path, manifest: dict[str, Any], path: str, cache: ChecksumCache
) -> str | None:
    """What ``paohuzi verify`` would find wrong with the run's rollup (listed, sound for the
    readers): the first difference from the rollup made again from its summaries, or None.
    Recomputed once per file: the checksum cache remembers a file found equal (by its stat,
    which no edit keeps, and the summaries it was made from)."""
    import os

    import pyarrow as pa

    from replay.store.rollup import ROLLUP_KEY, listed_problem

    bind = manifest[ROLLUP_KEY]["binding"]
    st = os.lstat(path)
    if cache.rollup_recomputed(path, st, bind):
        return None
    try:
        problem = listed_problem(run_path, manifest)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None  # a summary that cannot be read: the summaries' own check rebuilds it
    if problem is None:
        cache.vouch_rollup(path, st, bind)
    return problem


def _classes(
    run: Any, todo: list[tuple[dict[str, Any], tuple[str, ...]]], manifest: dict[str, Any]
) -> bool:
    """Extend a run of imported hands' policy classes (``params.seat_policies``) with those
    of the shards to summarise; whether its shards can have summaries (at most four
    classes; past them ``params.seat_policies_overflow`` is set)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.errors import CorruptLog
    from replay.derived.summarize import seat_assignments
    from replay.store import summary_schema
    from replay.store.scan import resolve_shard_path

    params = manifest.setdefault("params", {})
    players = int(manifest.get("rules", {}).get("players", 3))
    cols = [f"policy_{s}" for s in range(players)]
    for shard, missing in todo:
        if SUMMARY_TABLE not in missing:
            continue
        rel = shard["files"]["hands"]["path"]
        try:
            t = pq.read_table(resolve_shard_path(run.path, rel), columns=cols)
        except (OSError, ValueError, pa.ArrowException) as e:
            raise CorruptLog(f"run {run.name}: {rel} cannot be read: {str(e)[:120]}") from None
        if not summary_schema.add_policy_classes(params, seat_assignments(t, players)):
            return False
    return summary_schema.summarizable(params)


def _derive_one(
    name: str, path: Path, shard: dict[str, Any], shape: dict[str, Any], missing: tuple[str, ...]
) -> dict[str, Any]:
    """Read one shard's ``hands`` and ``events`` (checked, without the derived files being
    replaced) and write its ``missing`` derived files; their ``files`` entries. ``shape``:
    the manifest's ``rules`` and ``params`` (a worker never receives the whole manifest)."""
    from engine.rules import RuleSet
    from replay.derived.facts import shard_facts
    from replay.derived.facts_files import write_facts
    from replay.derived.summaries import write_summary
    from replay.store.runs import Run

    bare = {**shard, "files": {t: f for t, f in shard["files"].items() if t not in missing}}
    run = Run(name, path, {**shape, "shards": [bare]})
    hands, events = (run.read_shard(bare, t) for t in ("hands", "events"))
    index = int(shard["index"])
    files: dict[str, Any] = {}
    facts = shard_facts(hands, events, RuleSet.from_dict(shape["rules"]))  # the summary's too
    if SUMMARY_TABLE in missing:
        files.update(write_summary(path, index, hands, events, shape, facts))
    if FACTS_TABLE in missing:
        files.update(write_facts(path, index, facts))
    return files


def _derive(
    run: Any,
    todo: list[tuple[dict[str, Any], tuple[str, ...]]],
    manifest: dict[str, Any],
    workers: int,
    pool: SharedPool | None = None,
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(shard, its new ``files`` entries) in shard order, inline or from a process pool
    (``pool``'s, else one of the run's own)."""
    shape = {"rules": manifest.get("rules", {}), "params": manifest.get("params", {})}
    if workers <= 1 or len(todo) <= 1:
        for shard, missing in todo:
            yield shard, _derive_one(run.name, run.path, shard, shape, missing)
        return
    from replay.pool import process_pool

    if pool is not None:
        yield from _collect(pool.get(), run, todo, shape, workers)
        return
    # a worker interrupted mid-file would leave its temporary file behind: let it finish
    with process_pool(min(workers, len(todo)), terminate=False) as own:
        yield from _collect(own, run, todo, shape, workers)


def _collect(
    pool: Any,
    run: Any,
    todo: list[tuple[dict[str, Any], tuple[str, ...]]],
    shape: dict[str, Any],
    workers: int,
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Submit ``todo`` to ``pool``, at most two shards per worker in flight, and yield the
    results in shard order. On an error, the shards not started are cancelled and the running
    ones finish (a worker interrupted mid-file would leave its temporary file behind) before
    the error goes on: a pool shared with the next run is left idle."""
    import concurrent.futures

    waiting: collections.deque[tuple[dict[str, Any], Any]] = collections.deque()
    try:
        for shard, missing in todo:
            fut = pool.submit(_derive_one, run.name, run.path, shard, shape, missing)
            waiting.append((shard, fut))
            if len(waiting) >= 2 * workers:
                done, fut = waiting.popleft()
                yield done, fut.result()
        while waiting:
            done, fut = waiting.popleft()
            yield done, fut.result()
    except BaseException:
        for _, fut in waiting:
            fut.cancel()
        concurrent.futures.wait([fut for _, fut in waiting])
        raise
