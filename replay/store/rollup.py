"""A run's rollup: its shards' summary rows combined into one file, so that a figure reads one
file per run, not one per shard (docs/LOG_FORMAT.md §13).

``rollup/part-NNNNN.parquet`` in the run folder holds, for the run's first NNNNN shards
(indices 0 … NNNNN − 1, every one with a summary file of
:data:`~replay.store.summary_schema.SUMMARY_VERSION`), each summary kind's rows summed over
those shards per key — what :func:`replay.store.catalog.rollup_sql` makes of their summary
files — in the summary files' columns (:data:`~replay.store.summary_schema.SUMMARY_SCHEMA`),
sorted. The manifest lists it beside its shards::

    "rollup": {"path": "rollup/part-00042.parquet", "rows": …, "bytes": …, "sha256": …,
               "version": 5, "shards": 42, "binding": "<sha256>"}

``binding`` is the SHA-256 of the covered shards' summary SHA-256s, in index order: a rollup
is used only for exactly the summaries it was made from. Summing is additive, so the catalog
reads a run's rollup and the summary files of the shards after it as one ``summary``
relation, and every figure is the same as from the summary files alone (integer sums
exactly; the few float sums of ``paired`` to the last bits).

Every write of a manifest (:func:`replay.store.manifest.write_manifest`: ``simulate``,
``import``, ``index``) brings the rollup up to date first (:func:`refresh_rollup`; while the
run is being written, only every :data:`RUNNING_STEP` shards or more): from the rollup it
had and the summaries of the shards since, so the work of a run's rollups is linear in its
shards. A rollup missing, stale (another summary since) or damaged is not
used: the run's figures come from its shards' summaries, with a one-line note, and the next
``paohuzi index`` writes it again, resumably (:func:`rebuild_rollup`). ``paohuzi verify`` recomputes it from the summaries.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from engine.errors import PaohuziError
from replay.store.summary_schema import (
    KINDS,
    SUMMARY_SCHEMA,
    SUMMARY_TABLE,
    SUMMARY_VERSION,
    has_summary,
)

#: The rollup's folder in a run folder (a shard folder: ``paohuzi doctor`` knows its files).
ROLLUP_DIR = "rollup"
#: The manifest's key of the rollup entry.
ROLLUP_KEY = "rollup"


def rollup_path(shards: int) -> str:
    """The rollup file of a run's first ``shards`` shards, relative to its run folder."""
    return f"{ROLLUP_DIR}/part-{shards:05d}.parquet"


def covered(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The shards a rollup can cover now: indices 0, 1, … while each has a summary of this
    version (a gap or a shard without one ends them), in index order."""
    try:
        shards = sorted(manifest.get("shards") or [], key=lambda s: int(s["index"]))
    except (KeyError, TypeError, ValueError):
        return []
    out = []
    for i, s in enumerate(shards):
        if int(s["index"]) != i or not has_summary(s):
            break
        out.append(s)
    return out


def binding(shards: list[dict[str, Any]]) -> str:
    """The SHA-256 of the shards' summary SHA-256s, in their order."""
    h = hashlib.sha256()
    for s in shards:
        h.update(f"{s['files'][SUMMARY_TABLE].get('sha256')}\n".encode())
    return h.hexdigest()


def entry_problem(manifest: dict[str, Any]) -> str | None:
    """Why the manifest's rollup entry cannot stand for its shards (without reading the
    file: :func:`replay.store.scan.check_rollup` checks that), or None. A manifest without
    one: ``"none"``."""
    e = manifest.get(ROLLUP_KEY)
    if e is None:
        return "none"
    if not isinstance(e, dict) or e.get("version") != SUMMARY_VERSION:
        return "it is of another version"
    k = e.get("shards")
    cov = covered(manifest)
    if type(k) is not int or not 0 < k <= len(cov):
        return f"it covers {k!r} shards, the run has {len(cov)} summarised from the first"
    if e.get("path") != rollup_path(k):
        return f"it names the file {e.get('path')!r}, not {rollup_path(k)!r}"
    if e.get("binding") != binding(cov[:k]):
        return "it was made from other summaries than the shards' (stale)"
    return None


def combine(tables: list[pa.Table]) -> pa.Table:
    """Summary rows (summary files, rollups) summed per kind and key, in the summary files'
    columns, sorted by kind and key: what :func:`~replay.store.catalog.rollup_sql` makes of
    them, as one table. The float sums add in the order of ``tables`` (then rows)."""
    import pyarrow.compute as pc

    rows = pa.concat_tables([t.select(SUMMARY_SCHEMA.names).cast(SUMMARY_SCHEMA) for t in tables])
    parts = []
    for kind, (keys, sums) in KINDS.items():
        t = rows.filter(pc.equal(rows.column("kind"), kind))
        if t.num_rows == 0:
            continue
        agg = t.group_by(list(keys), use_threads=False).aggregate([(c, "sum") for c in sums])
        agg = agg.rename_columns([c.removesuffix("_sum") for c in agg.column_names])
        cols = {}
        for f in SUMMARY_SCHEMA:
            if f.name == "kind":
                cols[f.name] = pa.array([kind] * agg.num_rows, pa.string())
            elif f.name in agg.column_names:
                cols[f.name] = agg.column(f.name).cast(f.type)
            else:
                cols[f.name] = pa.nulls(agg.num_rows, f.type)
        part = pa.table(cols, schema=SUMMARY_SCHEMA)
        parts.append(part.sort_by([(k, "ascending") for k in keys]))
    return pa.concat_tables(parts) if parts else SUMMARY_SCHEMA.empty_table()


def rollup_bytes(table: pa.Table) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=9, row_group_size=1 << 20)
    return sink.getvalue()


#: While a run is being written (status ``running``), its rollup is written again only once
#: this many shards (or a quarter of those it covers, if more) are past it: a few rollups
#: per run, and one at its last write.
RUNNING_STEP = 16


def refresh_rollup(run_path: Path, manifest: dict[str, Any]) -> None:
    """Bring ``manifest``'s rollup entry up to date before it is written (module docstring):
    a new rollup file when more shards can be covered than it covers, from the rollup it
    had (when sound) and the summaries of the shards after it; the entry dropped when no
    shard can be covered or the files cannot be read (the figures then come from the
    summaries). Never raises for the rollup's sake: it is derived data. ``paohuzi index``
    rebuilds a rollup in steps instead (:func:`rebuild_rollup`)."""
    cov = covered(manifest)
    old = manifest.get(ROLLUP_KEY)
    # the shards a sound entry covers (at least 1: entry_problem checks it), else 0
    have = int(old["shards"]) if isinstance(old, dict) and entry_problem(manifest) is None else 0
    sound = have > 0
    if sound and have == len(cov):
        return  # up to date
    running = manifest.get("status") == "running" and (sound or old is None)
    if running and len(cov) - have < max(RUNNING_STEP, have // 4):
        return  # a run being written: readers read the summaries after the rollup
    manifest.pop(ROLLUP_KEY, None)
    if not cov:
        return
    try:
        entry = _write(Path(run_path), cov, old)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return
    manifest[ROLLUP_KEY] = entry


#: A rollup rebuilt by ``paohuzi index`` is written, and listed in the manifest, every this
#: many shards: an interrupted rebuild resumes from the last one (:func:`rebuild_rollup`).
CHECKPOINT = 4096


def rebuild_rollup(
    run_path: Path,
    manifest: dict[str, Any],
    damaged: bool,
    write: Callable[[dict[str, Any]], None],
) -> None:
    """Bring the rollup of the run at ``run_path`` up to date for ``paohuzi index`` (run lock
    held; ``damaged``: its listed file failed its checks; ``write``: writes the manifest as it
    is, :func:`~replay.store.manifest.write_manifest` with ``rollup=False``): from a sound
    entry when there is one, else from the first shard's summary, in steps of :data:`CHECKPOINT` shards, each
    step's rollup written and listed in the manifest before the next, so a killed rebuild
    of a 10⁸-hand run starts again from its last step, not from its first shard. Raises as
    reading a summary does; the manifest then lists the last step's rollup, which readers
    use for the shards it covers."""
    run_path = Path(run_path)
    cov = covered(manifest)
    changed = False
    if ROLLUP_KEY in manifest and (damaged or entry_problem(manifest) is not None):
        manifest.pop(ROLLUP_KEY)  # from the summaries, never from a damaged or stale rollup
        changed = True
    have = int(manifest[ROLLUP_KEY]["shards"]) if ROLLUP_KEY in manifest else 0
    while have < len(cov):
        upto = min(len(cov), have + CHECKPOINT)
        manifest[ROLLUP_KEY] = _write(run_path, cov[:upto], manifest.get(ROLLUP_KEY))
        write(manifest)
        have, changed = upto, False
    if changed:
        write(manifest)


def _listed_table(run_path: Path, entry: dict[str, Any]) -> pa.Table | None:
    """The table of a listed file when its bytes are the ones its entry names (size and
    SHA-256), else None."""
    import pyarrow.parquet as pq

    from replay.store.check import resolve_shard_path
    from replay.store.files import read_regular

    try:
        path = resolve_shard_path(run_path, entry.get("path"))
        data = read_regular(path, int(entry.get("bytes") or 0))
    except (OSError, ValueError, TypeError, PaohuziError):
        return None
    if len(data) != entry.get("bytes") or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        return None
    return pq.read_table(pa.BufferReader(data))


#: Summary files combined at once while a rollup is written (its memory is about this many
#: files' rows; the float sums add in the same order whatever it is).
FOLD = 256


def _write(run_path: Path, cov: list[dict[str, Any]], old: Any) -> dict[str, Any]:
    """Write the rollup of the shards ``cov`` from the rollup ``old`` (its entry, when it
    covers a prefix of them and its bytes are its entry's) and the summaries after it; its
    manifest entry."""
    from replay.store.files import write_derived

    start, table = 0, None
    if isinstance(old, dict) and old.get("version") == SUMMARY_VERSION:
        k = old.get("shards")
        if type(k) is int and 0 < k <= len(cov) and old.get("binding") == binding(cov[:k]):
            table = _listed_table(run_path, old)
            start = k if table is not None else 0
    table = summed(run_path, cov[start:], table)
    data = rollup_bytes(table)
    entry = write_derived(run_path, rollup_path(len(cov)), data, table.num_rows, SUMMARY_VERSION)
    entry.update(shards=len(cov), binding=binding(cov))
    return entry


def summed(run_path: Path, shards: list[dict[str, Any]], start: pa.Table | None = None) -> pa.Table:
    """The summaries of ``shards`` (each checked against its manifest entry) summed, after
    the rows ``start`` (a rollup of the shards before them), folded :data:`FOLD` files at a
    time: the rollup of those shards. Raises ``ValueError`` for a summary file that is not
    its entry's bytes."""
    table = start
    for i in range(0, len(shards), FOLD):
        tables = [] if table is None else [table]
        for s in shards[i : i + FOLD]:
            e = s["files"][SUMMARY_TABLE]
            t = _listed_table(run_path, e)
            if t is None:
                raise ValueError(f"summary file {e.get('path')} does not match its manifest entry")
            tables.append(t)
        table = combine(tables)
    return table if table is not None else combine([])


def difference(got: pa.Table, want: pa.Table) -> str | None:
    """The first difference between two rollup tables (float sums equal to 1e-9 relative:
    they may add in another order), or None."""
    import math

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


def recomputed_problem(run_path: Path, manifest: dict[str, Any], got: pa.Table) -> str | None:
    """The first difference between ``got``, the rows of the rollup a manifest lists (its
    entry sound: :func:`entry_problem`) in the summary files' columns (:func:`conformed`),
    and the same rollup made again from the summary files it covers, or None. Raises
    ``ValueError`` (and as reading Parquet does) when a summary file cannot be read or is not
    its entry's bytes. What ``paohuzi verify`` and ``paohuzi index`` hold a rollup to; a
    reader checks only its hands (:func:`replay.store.scan.check_rollup`)."""
    want = summed(Path(run_path), covered(manifest)[: int(manifest[ROLLUP_KEY]["shards"])])
    return difference(got, want)


def listed_problem(run_path: Path, manifest: dict[str, Any]) -> str | None:
    """:func:`recomputed_problem` of the rollup file the manifest lists, read and held to
    its entry's size and SHA-256 (a file that is not: its problem)."""
    entry = manifest[ROLLUP_KEY]
    got = _listed_table(Path(run_path), entry)
    if got is None:
        return f"rollup file {entry.get('path')} does not match its manifest entry"
    try:
        got = conformed(got)
    except (KeyError, ValueError, pa.ArrowException) as e:
        return f"rollup file {entry.get('path')} is not a rollup: {str(e).splitlines()[0][:120]}"
    return recomputed_problem(run_path, manifest, got)


def conformed(table: pa.Table) -> pa.Table:
    """A rollup file's rows in the summary files' columns and types, nothing else; raises
    (``KeyError``, Arrow's errors) for a file without them."""
    return table.select(SUMMARY_SCHEMA.names).cast(SUMMARY_SCHEMA)


#: Seconds a rollup file stays after the manifests stopped listing it, by default: a reader
#: holding an earlier manifest (a scan, then a catalog built or a query run on it) reads the
#: file it lists for at least this long (``$PAOHUZI_ROLLUP_GRACE`` sets another).
GRACE = 600
GRACE_ENV = "PAOHUZI_ROLLUP_GRACE"


def grace_seconds() -> float:
    """The grace period (:data:`GRACE`, or ``$PAOHUZI_ROLLUP_GRACE``); raises
    :class:`~replay.store.layout.StoreError` for a value that is not a number of seconds ≥ 0."""
    from replay.store.layout import StoreError

    text = os.environ.get(GRACE_ENV, "").strip()
    if not text:
        return float(GRACE)
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise StoreError(f"{GRACE_ENV}={text[:40]!r}: not a number of seconds >= 0")
    return value


def prune(run_path: Path, manifest: dict[str, Any], grace: float | None = None) -> None:
    """After ``manifest`` is written (run lock held): remove the rollup files it does not
    list that were replaced more than ``grace`` seconds (:func:`grace_seconds`) ago, so a
    reader that read an earlier manifest still finds the file it lists (LOG_FORMAT §14).

    A rollup is written just before the manifest that lists it, and every write of a new
    one lists it: so the file written next after an unlisted one (by modification time)
    was written when the unlisted one was replaced, or later; that time is the one held to
    the grace period. The newest file unlisted while the manifest lists none may have been
    listed until this very write: it stays. One newer than the listed one was never listed
    (a writer killed between the two writes): its own time counts."""
    import time

    listed = manifest.get(ROLLUP_KEY)
    keep = listed.get("path") if isinstance(listed, dict) else None
    folder = Path(run_path) / ROLLUP_DIR
    try:
        entries = [
            (e.stat(follow_symlinks=False).st_mtime_ns, e.name, e.path)
            for e in os.scandir(folder)
            if e.name.startswith("part-") and e.is_file(follow_symlinks=False)
        ]
    except OSError:
        return
    entries.sort()
    grace = grace_seconds() if grace is None else grace
    limit = time.time_ns() - int(grace * 1e9)
    listed_at = next((t for t, n, _ in entries if f"{ROLLUP_DIR}/{n}" == keep), None)
    for i, (mtime, name, path) in enumerate(entries):
        if f"{ROLLUP_DIR}/{name}" == keep:
            continue
        if i + 1 < len(entries):
            replaced = entries[i + 1][0]
        elif listed_at is not None:
            replaced = mtime  # newer than the listed one: never listed
        else:
            continue  # may have been listed until now
        if replaced < limit:
            with contextlib.suppress(OSError):
                os.unlink(path)
