"""``make bench-dashboard``: the dashboard and ``paohuzi stats`` on a big store, from the
summary tables and from the hands (measured, never asserted in tests).

How the store is built (honestly but cheaply), under ``--data DIR``:

* ``DIR/src``: a store with one real run ``src`` of ``--source-hands`` hands
  (``paohuzi simulate``, made once and reused);
* ``DIR/bigN``: a store with one run ``bigN`` of ``--hands`` (N) hands, made of copies of
  ``src``'s shards under new hand, deal and session ids and new manifest entries, by
  ``--workers`` processes writing whole shards (:func:`replicate_parallel`, which the seek
  benchmark of ``make bench`` uses too). A whole copy of a source shard also gets its derived
  files without recomputing them (:func:`derived_copy`): the facts with the hand ids
  shifted, the summary with its ``conv`` rows regrouped into the big run's bins (exact when
  a copy's hand offset is a multiple of the source's bin, as with the default
  ``--source-hands`` 102,400 = 100 bins of 1,024); a cut shard, or ``--no-derived``, leaves
  them to ``paohuzi index`` (timed either way). ``paohuzi verify`` recomputes every derived
  file and names the first difference (tests/replay/store/test_replicate_derived.py runs it on a
  replicated run). The replication resumes after an interruption, and a complete run is not
  rebuilt. Its costs, per shard of 4,096 hands on one core: the Parquet encoding of the hands
  and events (~30 ms), the facts' and summary's (~13 ms; a copy's summary bytes are reused
  for copies in the same ``conv`` bins), the source's derived files read once per worker, not
  per copy; the files are not fsynced one by one (one ``sync`` before the manifest). The
  workers then sum the run's rollup (consecutive shards each), and the store's checksum cache
  vouches for every file written (hands, events, summary, facts, rollup: SHA-256, rows, hand
  ids, hands counted; :meth:`~replay.store.scan.ChecksumCache.vouch`), so neither ``paohuzi
  index`` nor the first reader reads the 17 GB back.

Then, printed: the replication's hands/s; ``paohuzi index``'s wall time and peak memory; the
summary files' size per million hands and the store's size on disk; ``paohuzi stats``' wall
time and peak memory from the summaries and from the hands (``PAOHUZI_SUMMARY=0``); every
page server-side through AppTest with the data caches emptied and in Chromium, median of
``--browser-runs`` (:mod:`bench.pages`, whose docstring says exactly what is
timed). The raw-hands path is measured with ``--raw`` (default up to 20,000,000 hands; at
100 M it is known to be slow).

    .venv/bin/python -m bench.dashboard --hands 10000000 --data /tmp/bench-dash
    .venv/bin/python -m bench.dashboard --hands 100000000 --no-raw
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from paohuzi.cli.main import main; main()"]
#: the replication's journal in the run folder: one JSON line of what is being built, then
#: one manifest shard entry per finished shard (deleted once the manifest is written)
JOURNAL = ".replicate.jsonl"


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and stdout of one child process. The peak is that
    child's own (``wait4``), the largest of it and the processes it waited for, not the
    largest of every child this process ever had."""
    with tempfile.TemporaryFile() as out:
        t = time.perf_counter()
        proc = subprocess.Popen(args, env={**os.environ, **(env or {})}, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode:
        sys.stdout.write(text)
        raise subprocess.CalledProcessError(proc.returncode, args)
    return wall, usage.ru_maxrss / 1024, text


def stats_document(out: str) -> dict[str, Any]:
    """The JSON object in ``paohuzi stats --json``'s stdout. DuckDB draws its progress bar
    (``\\r 42% ▕██▏ (~4 seconds remaining)``, its last redraw without a newline) on the same
    stdout when a query runs for over 2 s, so the document can follow other text on its
    first line: take the first ``{`` that starts an object with ``runs``.

    >>> stats_document('\\r 42% ▕██▏ (~4 s)\\n\\r100% ▕████▏ (<1 s)  {"runs": []}\\n')
    {'runs': []}
    """
    dec = json.JSONDecoder()
    for m in re.finditer(r"\{", out):
        try:
            doc, _ = dec.raw_decode(out, m.start())
        except ValueError:
            continue
        if isinstance(doc, dict) and "runs" in doc:
            return doc
    raise ValueError(f"no stats document in the output: {out[:200]!r}")


# ---------------------------------------------------------------------------------------------
# The big run: copies of the source run's shards, one whole shard per task
# ---------------------------------------------------------------------------------------------

#: a worker's state: the source run, its last shards' tables, where to write
_WORKER: dict[str, Any] = {}


def _worker_init(
    src_root: str, src: str, dst_path: str, period: dict[str, int], big_granule: int
) -> None:
    from replay.store import open_store

    _WORKER.update(
        run=open_store(src_root).run(src),
        dst=Path(dst_path),
        period=period,
        tables=collections.OrderedDict(),
        big_granule=big_granule,
    )


def derived_copy(
    summary: Any, facts: Any, offset: int, src_granule: int, big_granule: int
) -> tuple[Any, Any] | None:
    """A copy's summary and facts tables from its source shard's, for hands shifted by
    ``offset`` in a run whose ``conv`` bins hold ``big_granule`` hands: the facts' hand ids
    shifted; every summary kind as it was (a shard's counts and cluster sums do not depend
    on its ids, and the paired sums run in deal order, which a shift keeps) but ``conv``,
    whose rows are regrouped into the new bins. None when that is not exact: the offset is
    not a multiple of the source's bin, or the new bin not one of the source's (then a
    source bin could straddle two new ones)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from replay.store import summary_schema as S

    if offset % src_granule or big_granule % src_granule:
        return None
    i = facts.schema.get_field_index("hand_id")
    f = facts.schema.field(i)
    facts = facts.set_column(
        i, f, pc.add(facts["hand_id"], pa.scalar(offset, pa.int64())).cast(f.type)
    )
    parts = []
    for kind in S.KINDS:
        t = summary.filter(pc.equal(summary["kind"], kind))
        if kind == "conv" and t.num_rows:
            if not pc.all(pc.equal(t["granule"], src_granule)).as_py():
                return None
            first = pc.multiply(t["bin"].cast(pa.int64()), src_granule)
            t = t.set_column(
                t.schema.get_field_index("bin"),
                "bin",
                pc.divide(pc.add(first, offset), big_granule).cast(pa.uint32()),
            )
            keys = ["bin", "rotation", "seat", "policy"]
            g = t.group_by(keys).aggregate([("n", "sum"), ("won", "sum")])
            g = g.sort_by([(k, "ascending") for k in keys])
            t = S.conform(
                "conv",
                pa.table(
                    {
                        "granule": pa.array([big_granule] * g.num_rows, pa.uint32()),
                        **{k: g[k] for k in keys},
                        "n": g["n_sum"],
                        "won": g["won_sum"],
                    }
                ),
            )
        parts.append(t)
    return pa.concat_tables(parts), facts


def _source_tables(pos: int) -> dict[str, Any]:
    """Source shard ``pos``'s hands and events (read and checked once, the last two kept:
    tasks come sorted by source shard)."""
    cache = _WORKER["tables"]
    if pos not in cache:
        run = _WORKER["run"]
        shard = run.shards[pos]
        cache[pos] = {name: run.read_shard(shard, name) for name in ("hands", "events")}
        while len(cache) > 2:
            cache.popitem(last=False)
    return dict(cache[pos])


def _source_derived(pos: int) -> tuple[Any, Any] | None:
    """Source shard ``pos``'s summary and facts tables (read once, the last two kept, as
    :func:`_source_tables`), or None when it has no current ones."""
    import pyarrow.parquet as pq

    from replay.store import facts_schema as F
    from replay.store import summary_schema as S

    cache = _WORKER.setdefault("derived", collections.OrderedDict())
    if pos not in cache:
        run = _WORKER["run"]
        shard = run.shards[pos]
        got = None
        if S.has_summary(shard) and F.has_facts(shard):
            got = (
                pq.read_table(run.shard_path(shard, S.SUMMARY_TABLE)),
                pq.read_table(run.shard_path(shard, F.FACTS_TABLE)),
            )
        cache[pos] = got
        while len(cache) > 2:
            cache.popitem(last=False)
    return cache[pos]  # type: ignore[no-any-return]


def _write(run_path: Path, rel: str, data: bytes) -> str:
    """Write a file of the big run (through a temporary file and a rename, not fsynced: the
    replication syncs the file system once, before it writes the manifest); its SHA-256."""
    import hashlib

    path = run_path / rel
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return hashlib.sha256(data).hexdigest()


def _copy_shard(task: tuple[int, int, int, int]) -> dict[str, Any]:
    """Write shard ``index`` of the big run: the first ``n`` hands of source shard ``pos``
    as hands ``first``…, and its deals and sessions as new ones (copy ``k`` of the source
    adds ``k`` times the source's number of deals and sessions to their ids); its manifest
    entry. The files are written as :func:`replay.store.write_shard_file` writes them
    (:func:`replay.store.files.parquet_bytes`), without an fsync each (:func:`_write`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from replay.store.files import parquet_bytes
    from replay.store.layout import shard_file

    index, pos, first, n = task
    shard = _WORKER["run"].shards[pos]
    period = _WORKER["period"]
    offset = first - shard["first_hand"]
    copy_k = offset // period["hands"]
    files, events = {}, 0
    # (file, hand-id range, hands a summary counts) of every file written
    vouch: list[tuple[str, tuple[int, int] | None, int | None]] = []
    for name, t in _source_tables(pos).items():
        if name == "hands":
            t = t.slice(0, n)
        elif n < shard["hands"]:
            t = t.filter(pc.less(t["hand_id"], shard["first_hand"] + n))
        shifts = {"hand_id": offset}
        if name == "hands":
            shifts.update(deal_id=copy_k * period["deals"], session=copy_k * period["sessions"])
        for col, by in shifts.items():
            i = t.schema.get_field_index(col)
            f = t.schema.field(i)
            t = t.set_column(i, f, pc.add(t[col], pa.scalar(by, pa.int64())).cast(f.type))
        data = parquet_bytes(t, name)
        rel = shard_file(name, index)
        (_WORKER["dst"] / rel).parent.mkdir(parents=True, exist_ok=True)
        files[name] = {
            "path": rel,
            "rows": t.num_rows,
            "bytes": len(data),
            "sha256": _write(_WORKER["dst"], rel, data),
        }
        ids = pc.min_max(t["hand_id"]).as_py() if t.num_rows else None
        vouch.append((rel, ids and (int(ids["min"]), int(ids["max"])), None))
        if name == "events":
            events = t.num_rows
    if n == shard["hands"]:
        files.update(_derived_files(pos, index, offset, vouch))
    return {
        **shard,
        "index": index,
        "first_hand": first,
        "hands": n,
        "events": events,
        "files": files,
        VOUCH: vouch,
    }


def _derived_files(
    pos: int, index: int, offset: int, vouch: list[tuple[str, Any, int | None]]
) -> dict[str, Any]:
    """The summary and facts entries of a whole copy of source shard ``pos``
    (:func:`derived_copy`), or none (then ``paohuzi index`` derives them): the source shard
    has no current ones, or the copy would not be exact, or ``--no-derived``. The summary's
    bytes are kept per source shard and ``conv`` bins: copies that land in the same bins of
    the big run have the same summary file. What a reader's check would find of them (the
    facts' hand ids, the hands the summary counts) is added to ``vouch``."""
    from replay.derived.facts_files import facts_bytes
    from replay.derived.summaries import summary_bytes
    from replay.store import facts_schema as F
    from replay.store import summary_schema as S

    run, big = _WORKER["run"], _WORKER["big_granule"]
    src = _source_derived(pos) if big else None
    if src is None:
        return {}
    got = derived_copy(*src, offset, S.run_shape(run.manifest).granule, big)
    if got is None:
        return {}
    import pyarrow.compute as pc

    summary, facts = got
    memo = _WORKER.setdefault("summaries", {})
    key = (pos, summary.num_rows, summary["bin"].to_numpy(zero_copy_only=False).tobytes())
    if key not in memo or not memo[key][0].equals(summary):
        if len(memo) > 64:
            memo.clear()
        memo[key] = (summary, summary_bytes(summary))
    dst = _WORKER["dst"]
    out = {}
    for table, rel, data, rows, version in (
        (S.SUMMARY_TABLE, S.summary_path(index), memo[key][1], summary.num_rows,
         S.SUMMARY_VERSION),
        (F.FACTS_TABLE, F.facts_path(index), facts_bytes(facts), facts.num_rows,
         F.FACTS_VERSION),
    ):  # fmt: skip
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        out[table] = {
            "path": rel,
            "rows": rows,
            "bytes": len(data),
            "sha256": _write(dst, rel, data),
            "version": version,
        }
    ids = pc.min_max(facts["hand_id"]).as_py() if facts.num_rows else None
    vouch.append((out[F.FACTS_TABLE]["path"], ids and (int(ids["min"]), int(ids["max"])), None))
    hands = pc.sum(pc.filter(summary["n"], pc.equal(summary["kind"], "hands"))).as_py()
    vouch.append((out[S.SUMMARY_TABLE]["path"], None, int(hands or 0)))
    return out


def _period(run: Any) -> dict[str, int]:
    """Hands, deals and sessions of a run (ids 0…count-1): what one copy adds to each id."""
    import pyarrow.parquet as pq

    deals = sessions = 0
    for shard in run.shards:
        t = pq.read_table(run.shard_path(shard, "hands"), columns=["deal_id", "session"])
        if t.num_rows:
            deals = max(deals, int(t["deal_id"].to_numpy().max()) + 1)
            sessions = max(sessions, int(t["session"].to_numpy().max()) + 1)
    return {"hands": run.n_hands, "deals": deals, "sessions": sessions}


def _plan(src_shards: list[dict[str, Any]], hands: int) -> list[tuple[int, int, int, int]]:
    """(index, source shard position, first hand, hands) of every shard of the big run: the
    source's shards over and over, the last one cut to fit."""
    tasks, first, index = [], 0, 0
    while first < hands:
        for pos, shard in enumerate(src_shards):
            if first >= hands:
                break
            n = min(shard["hands"], hands - first)
            tasks.append((index, pos, first, n))
            first += n
            index += 1
    return tasks


def _complete(run_path: Path, hands: int) -> bool:
    from replay.store import MANIFEST_NAME, read_manifest

    if not (run_path / MANIFEST_NAME).exists():
        return False
    m = read_manifest(run_path)
    return m.get("status") == "complete" and sum(s["hands"] for s in m["shards"]) == hands


def _status(run_path: Path) -> str:
    from replay.store import read_manifest

    return str(read_manifest(run_path).get("status"))


def replicate_parallel(
    src_root: Path,
    src: str,
    dst_root: Path,
    dst: str,
    hands: int,
    workers: int,
    derived: bool = True,
    derive_cut: bool = False,
) -> tuple[int, int]:
    """Make run ``dst`` of ``hands`` hands in the store ``dst_root`` from copies of run
    ``src``'s shards (store ``src_root``, which may be ``dst_root``) under new hand ids (no
    summary files), and new deal and session ids too: a copy's deals are new deals, as in a
    real run of that size (``count(DISTINCT deal_id)`` and the per-deal clusters are
    those of a run of ``hands`` hands). ``workers`` processes each write whole shards
    (:func:`replay.store.write_shard_file`) and, with ``derived``, a whole copy's summary and
    facts (:func:`derived_copy`; ``derive_cut``: a cut shard's too, made as ``paohuzi
    index`` makes them, :func:`_derive_cut`, else left to index); this process writes the
    manifest once, at the end. Resumable: every finished shard is journalled, and a rerun writes only the missing
    ones. Returns the shards and hands written now ((0, 0): the run was complete)."""
    import pyarrow.parquet as pq

    from replay import store

    run_path = store.run_dir(dst_root, dst)
    if _complete(run_path, hands):
        return 0, 0
    source = store.open_store(src_root).run(src)
    header = {
        "ids": "hand, deal and session ids shifted per copy",
        "source": str(source.path),
        "source_hands": source.n_hands,
        "hands": hands,
        "source_shards": [s["files"]["hands"]["sha256"] for s in source.shards],
        "derived": derived,
    }
    run_path.mkdir(parents=True, exist_ok=True)
    with store.RunLock(run_path):
        store.cleanup_temp(run_path)
        done = _read_journal(run_path, header)
        tasks = [t for t in _plan(source.shards, hands) if t[0] not in done]
        tasks.sort(key=lambda t: (t[1], t[0]))  # a worker reads each source shard once
        if done:
            print(f"  resuming: {len(done):,} shard(s) already written, {len(tasks):,} to go")
        fresh = not (run_path / JOURNAL).exists()
        journal = (run_path / JOURNAL).open("a", encoding="utf-8")
        if fresh:
            journal.write(json.dumps(header) + "\n")
        ctx = multiprocessing.get_context("forkserver")
        step = max(1, len(tasks) // 10)
        t0, written = time.perf_counter(), 0
        from replay.store.summary_schema import granule

        init = (
            str(src_root),
            src,
            str(run_path),
            _period(source),
            granule(hands) if derived else 0,
        )
        from replay.store.scan import ChecksumCache

        cache = ChecksumCache(dst_root)
        with ctx.Pool(workers, _worker_init, init) as pool:
            for k, entry in enumerate(pool.imap_unordered(_copy_shard, tasks, chunksize=4), 1):
                _vouch(cache, run_path, entry)
                done[entry["index"]] = entry
                written += entry["hands"]
                journal.write(json.dumps(entry) + "\n")
                if k % step == 0 or k == len(tasks):
                    journal.flush()
                    el = max(time.perf_counter() - t0, 1e-6)
                    print(
                        f"  {k:,}/{len(tasks):,} shards, {written:,} hands in {el:.0f} s"
                        f" ({written / el:,.0f} hands/s)",
                        flush=True,
                    )
        journal.close()
        t1 = time.perf_counter()
        os.sync()  # the shard files were not fsynced one by one (_write)
        shards = [done[i] for i in sorted(done)]
        manifest = copy.deepcopy(source.manifest)
        manifest["run"], manifest["shards"] = dst, shards
        manifest["command"] = ["python", "-m", "bench.dashboard", *sys.argv[1:]]
        manifest["replicated_from"] = {"store": str(src_root), "run": src, "hands": source.n_hands}
        manifest["progress"] = {
            "shards": len(shards),
            "hands": sum(s["hands"] for s in shards),
            "events": sum(s["events"] for s in shards),
            "bytes": sum(f["bytes"] for s in shards for f in s["files"].values()),
        }
        params = manifest["params"]
        params["hands_total"] = hands
        params["deals"] = hands // int(params.get("rotations") or 1)  # a shard holds whole deals
        params["n_shards"] = len(shards)
        last = pq.read_table(run_path / shards[-1]["files"]["hands"]["path"], columns=["session"])
        params["n_sessions"] = int(last["session"].to_numpy().max()) + 1
        manifest.pop("rollup", None)  # the source's
        if derive_cut and derived:
            _derive_cut(run_path, manifest)
            manifest["progress"]["bytes"] = sum(
                f["bytes"] for s in shards for f in s["files"].values()
            )
        _rollup(ctx, workers, run_path, manifest, cache)
        cache.save()
        store.write_manifest(run_path, manifest)
        (run_path / JOURNAL).unlink()
        print(
            f"  synced, checksums and manifest (with its rollup) written in"
            f" {time.perf_counter() - t1:.0f} s",
            flush=True,
        )
    return len(tasks), written


def _derive_cut(run_path: Path, manifest: dict[str, Any]) -> None:
    """The summary and facts of the shards no whole copy gave them (the last one, cut to
    fit), made as ``paohuzi index`` makes them (from the shard's hands and events and the
    big run's ``rules`` and ``params``) and listed in ``manifest``: the rollup then covers
    every shard, and index has nothing to derive (nor a rollup to make and check again)."""
    from engine.rules import RuleSet
    from replay.derived.facts import shard_facts
    from replay.derived.facts_files import write_facts
    from replay.derived.summaries import write_summary
    from replay.store import facts_schema as F
    from replay.store import summary_schema as S
    from replay.store.runs import Run

    if not S.summarizable(manifest.get("params")):
        return
    shape = {"rules": manifest.get("rules", {}), "params": manifest.get("params", {})}
    for shard in manifest["shards"]:
        if S.has_summary(shard) and F.has_facts(shard):
            continue
        run = Run(manifest["run"], run_path, {**shape, "shards": [shard]})
        hands, events = (run.read_shard(shard, t) for t in ("hands", "events"))
        facts = shard_facts(hands, events, RuleSet.from_dict(shape["rules"]))
        index = int(shard["index"])
        shard["files"].update(write_summary(run_path, index, hands, events, shape, facts))
        shard["files"].update(write_facts(run_path, index, facts))


def _rollup_part(task: tuple[str, list[dict[str, Any]]]) -> Any:
    """The rollup of some consecutive shards of a run (:func:`replay.store.rollup.summed`)."""
    from replay.store.rollup import summed

    run_path, shards = task
    return summed(Path(run_path), shards)


def _rollup(ctx: Any, workers: int, run_path: Path, manifest: dict[str, Any], cache: Any) -> None:
    """The big run's rollup (:mod:`replay.store.rollup`), written and listed in
    ``manifest`` before it is written, by ``workers`` processes each summing consecutive
    shards' summaries, then summed: the same rows as :func:`~replay.store.rollup.refresh_rollup`
    writes from one process (the float sums added in another order: ``paohuzi verify``
    compares them to 1e-9), which then finds it up to date. The checksum cache ``cache``
    vouches for it as made from those summaries (:meth:`~replay.store.scan.ChecksumCache.vouch_rollup`:
    ``paohuzi index`` does not make it again to compare)."""
    from replay.store import rollup as R
    from replay.store.files import write_derived
    from replay.store.summary_schema import SUMMARY_VERSION

    cov = R.covered(manifest)
    if not cov:
        return
    step = max(1, -(-len(cov) // (4 * workers)))
    chunks = [(str(run_path), cov[i : i + step]) for i in range(0, len(cov), step)]
    with ctx.Pool(workers) as pool:
        parts = pool.map(_rollup_part, chunks)
    table = R.combine(parts)
    entry = write_derived(
        run_path, R.rollup_path(len(cov)), R.rollup_bytes(table), table.num_rows, SUMMARY_VERSION
    )
    entry.update(shards=len(cov), binding=R.binding(cov))
    manifest[R.ROLLUP_KEY] = entry
    path = run_path / entry["path"]
    cache.vouch(path, entry["sha256"], int(entry["rows"]), None)
    _vouch_counted(cache, path, table)
    cache.vouch_rollup(path, os.lstat(path), entry["binding"])


#: A copied shard's entry key (taken out before it is journalled) of the files its worker
#: wrote and their hand-id ranges.
VOUCH = "_vouch"


def _vouch(cache: Any, run_path: Path, entry: dict[str, Any]) -> None:
    """Remember in the store's checksum cache what the worker knows of the shard files it
    wrote (SHA-256, rows, hand ids: :meth:`~replay.store.scan.ChecksumCache.vouch`; the hands a
    summary counts), so the
    first reader of the big store does not read its 17 GB back to hash them."""
    by_path = {f["path"]: f for f in entry["files"].values()}
    for rel, ids, counted in entry.pop(VOUCH):
        f = by_path[rel]
        cache.vouch(run_path / rel, f["sha256"], int(f["rows"]), ids and (ids[0], ids[1]))
        if counted is not None:
            _vouch_counted(cache, run_path / rel, counted)


def _vouch_counted(cache: Any, path: Path, counted: Any) -> None:
    """Remember the hands a summary or rollup file counts (``counted``: the number, or its
    table), where :meth:`~replay.store.scan.ChecksumCache.summary_hands` keeps them."""
    if not isinstance(counted, int):
        import pyarrow.compute as pc

        t = counted
        counted = int(pc.sum(pc.filter(t["n"], pc.equal(t["kind"], "hands"))).as_py() or 0)
    cache._entry(path, os.lstat(path))[6] = counted


def _read_journal(run_path: Path, header: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The shards a previous, interrupted replication finished (their files still there
    with the journalled size); none if it copied another source or size."""
    path = run_path / JOURNAL
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        same = json.loads(lines[0]) == header
    except (IndexError, ValueError):
        same = False
    if not same:
        print(f"  {path} is from another source or size: starting again")
        shutil.rmtree(run_path / "hands", ignore_errors=True)
        shutil.rmtree(run_path / "events", ignore_errors=True)
        path.unlink()
        return {}
    done: dict[int, dict[str, Any]] = {}
    for line in lines[1:]:
        try:
            entry = json.loads(line)
        except ValueError:  # the last line of a killed writer
            continue
        ok = all(
            (run_path / f["path"]).is_file() and (run_path / f["path"]).stat().st_size == f["bytes"]
            for f in entry["files"].values()
        )
        if ok:
            done[int(entry["index"])] = entry
    return done


# ---------------------------------------------------------------------------------------------
# The figures
# ---------------------------------------------------------------------------------------------


def disk_bytes(path: Path) -> int:
    """Bytes the files under ``path`` take on disk (allocated blocks)."""
    total = 0
    for dirpath, _, names in os.walk(path):
        for name in names:
            st = os.lstat(os.path.join(dirpath, name))
            total += st.st_blocks * 512
    return total


def differences(a: Any, b: Any, where: str = "", rel: float = 1e-9) -> list[str]:
    """Where two JSON values differ (numbers beyond a relative ``rel``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{where}.{k}" for k in a.keys() ^ b.keys()]
        for k in a.keys() & b.keys():
            out += differences(a[k], b[k], f"{where}.{k}", rel)
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where} (length {len(a)} vs {len(b)})"]
        return [
            d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]", rel)
        ]
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool):
        return [] if abs(a - b) <= rel * max(abs(a), abs(b), 1) else [f"{where}: {a} vs {b}"]
    return [] if a == b else [f"{where}: {a!r} vs {b!r}"]


def _arguments() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="/tmp/paohuzi-bench-dashboard", help="benchmark folder")
    ap.add_argument("--hands", type=int, default=10_000_000)
    ap.add_argument("--source-hands", type=int, default=102_400)
    ap.add_argument("--workers", type=int, default=2, help="simulate and replication processes")
    ap.add_argument("--policies", default="greedy,random,heuristic")
    ap.add_argument("--runs", type=int, default=3, help="AppTest measurements per page")
    ap.add_argument("--browser-runs", type=int, default=3, help="Chromium measurements per page")
    ap.add_argument(
        "--raw",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also measure from the hands (default: up to 20,000,000 hands)",
    )
    ap.add_argument(
        "--pages",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time the pages (AppTest, and Chromium with --browser; default on)",
    )
    ap.add_argument(
        "--browser",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Chromium timings (default on; needs Debian's chromium)",
    )
    ap.add_argument(
        "--derived",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="copy the source shards' summary and facts with each whole copy (default on);"
        " --no-derived leaves them all to paohuzi index",
    )
    ap.add_argument(
        "--reindex",
        action="store_true",
        help="drop the big run's summaries and facts first, so that paohuzi index is timed again",
    )
    return ap


def main(argv: list[str] | None = None) -> None:
    a = _arguments().parse_args(argv)
    # our lines in order with the children's when piped to a log
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    raw = a.raw if a.raw is not None else a.hands <= 20_000_000
    paths: list[tuple[str, dict[str, str]]] = [("summaries", {})]
    if raw:
        paths.append(("raw hands", {"PAOHUZI_SUMMARY": "0"}))

    data = Path(a.data)
    src_root, big = data / "src", f"big{a.hands}"
    big_root = data / big
    print(
        f"bench-dashboard: {a.hands:,} hands in {big_root}; {os.cpu_count()} cores,"
        f" load {os.getloadavg()[0]:.1f}; paths: {', '.join(p for p, _ in paths)}"
    )
    _build(a, src_root, big_root, big)
    _measure_index(big_root, big, a.hands)
    _measure_stats(big_root, paths)
    if a.pages:
        _measure_pages(big_root, paths, a.runs, a.browser_runs if a.browser else None)


def _build(a: argparse.Namespace, src_root: Path, big_root: Path, big: str) -> None:
    """The build phase: the source run ``src`` (simulated once, then reused), the big run
    ``big`` replicated from it (not rebuilt when complete), its derived files dropped with
    ``--reindex``."""
    from replay import store

    src_path = store.run_dir(src_root, "src")
    if not (src_path / store.MANIFEST_NAME).exists() or _status(src_path) != "complete":
        w, _, _ = _run([*CLI, "simulate", "--data", str(src_root), "--run", "src", "-q",
                        "--hands", str(a.source_hands), "--seed", "1", "--policies", a.policies,
                        "--workers", str(a.workers)])  # fmt: skip
        print(f"simulated run src: {a.source_hands:,} hands in {w:.0f} s")
    source = store.open_store(src_root).run("src")
    if source.n_hands != a.source_hands:
        print(
            f"note: reusing run src of {source.n_hands:,} hands (not --source-hands"
            f" {a.source_hands:,}); remove {src_root} for another"
        )

    t = time.perf_counter()
    n_shards, n_hands = replicate_parallel(
        src_root, "src", big_root, big, a.hands, a.workers, a.derived, derive_cut=True
    )
    w = time.perf_counter() - t
    if n_shards:
        print(
            f"replicated src ({source.n_hands:,} hands, {len(source.shards)} shards) into"
            f" {big}: {n_hands:,} hands ({n_shards:,} shards) in {w:.0f} s by {a.workers}"
            f" workers, {n_hands / w:,.0f} hands/s"
        )
    else:
        print(f"run {big}: complete, not rebuilt (copies of src's {len(source.shards)} shards)")
    if a.reindex:
        run_path = store.run_dir(big_root, big)
        m = store.read_manifest(run_path)
        for s in m["shards"]:
            s["files"].pop("summary", None)
            s["files"].pop("facts", None)
        store.write_manifest(run_path, m)


def _measure_index(big_root: Path, big: str, hands: int) -> None:
    """``paohuzi index``'s wall time and peak memory on the big run (``hands``: per million
    of the requested size), then its summary files' and the store's size."""
    from replay import store

    w, peak, out = _run([*CLI, "index", "--data", str(big_root), big])
    print(
        f"paohuzi index {big}: {w:.1f} s ({w * 1e6 / hands:.1f} s per million hands),"
        f" peak {peak:.0f} MiB  [{out.strip()}]"
    )
    run = store.open_store(big_root).run(big)
    per_m = 1e6 / run.n_hands
    size = {
        t: sum(s["files"][t]["bytes"] for s in run.shards if t in s["files"])
        for t in ("hands", "events", "summary")
    }
    srows = sum(s["files"]["summary"]["rows"] for s in run.shards if "summary" in s["files"])
    mib = 2**20
    print(
        f"summary files: {size['summary'] / mib:.1f} MiB, {srows:,} rows for"
        f" {run.n_hands:,} hands: {size['summary'] * per_m / mib:.2f} MiB and"
        f" {srows * per_m:,.0f} rows per million hands"
    )
    disk = disk_bytes(big_root)
    print(
        f"store on disk: {disk / 2**30:.2f} GiB ({disk * per_m / mib:.1f} MiB per million"
        f" hands; per million: hands {size['hands'] * per_m / mib:.1f} MiB, events"
        f" {size['events'] * per_m / mib:.1f} MiB, summary {size['summary'] * per_m / mib:.2f}"
        f" MiB; {len(run.shards):,} shards)",
        flush=True,
    )


def _measure_stats(big_root: Path, paths: list[tuple[str, dict[str, str]]]) -> None:
    """``paohuzi stats`` and ``stats --events`` on each path (summaries, raw), timed, then
    whether the two paths give the same numbers."""
    docs = {}
    for label, env in paths:
        w, peak, out = _run([*CLI, "stats", "--data", str(big_root), "--json"], env)
        docs[label] = doc = stats_document(out)
        n = doc["runs"][0]["hands"]
        print(
            f"paohuzi stats ({label}): {w:.2f} s wall, peak {peak:.0f} MiB, {n:,} hands", flush=True
        )
    events_docs = {}
    for label, env in paths:
        w, peak, out = _run([*CLI, "stats", "--events", "--data", str(big_root), "--json"], env)
        events_docs[label] = doc = stats_document(out)
        print(
            f"paohuzi stats --events ({label}): {w:.2f} s wall, peak {peak:.0f} MiB,"
            f" {doc['runs'][0]['hands']:,} hands, from its {doc['runs'][0]['source']}",
            flush=True,
        )
    if len(events_docs) == 2:
        ev_fast, ev_raw = (
            {k: v for k, v in d["runs"][0].items() if k != "source"} for d in events_docs.values()
        )
        diff = differences(ev_fast, ev_raw)
        print(
            "paohuzi stats --events: the same numbers from event summaries and from events"
            if not diff
            else f"paohuzi stats --events: summaries and events DIFFER at {len(diff)} values: {diff[:5]}"
        )
    if len(docs) == 2:
        diff = differences(docs["summaries"], docs["raw hands"])
        print(
            "paohuzi stats: the same numbers from summaries and from hands"
            if not diff
            else f"paohuzi stats: summaries and hands DIFFER at {len(diff)} values: {diff[:5]}"
        )


def _measure_pages(
    big_root: Path, paths: list[tuple[str, dict[str, str]]], runs: int, browser_runs: int | None
) -> None:
    """Every page on each path by :mod:`bench.pages`: ``runs`` times through AppTest, then
    ``browser_runs`` times in Chromium (None: not at all, ``--no-browser``)."""
    for label, env in paths:
        print(f"pages, AppTest ({label}):", flush=True)
        subprocess.run(
            [sys.executable, "-m", "bench.pages", str(big_root), "--runs", str(runs)],
            cwd=ROOT,
            env={**os.environ, **env},
            check=True,
        )
    if browser_runs is None:
        return
    for label, env in paths:
        print(f"pages, Chromium ({label}):", flush=True)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.pages",
                str(big_root),
                "--browser",
                "--runs",
                str(browser_runs),
            ],
            cwd=ROOT,
            env={**os.environ, **env},
            check=False,
        )
        if done.returncode:  # a page over its time limit (named above), or a failure
            print(f"pages, Chromium ({label}): bench.pages exited {done.returncode}")


if __name__ == "__main__":
    main()
