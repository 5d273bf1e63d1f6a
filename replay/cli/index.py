"""``paohuzi index``: build the summary tables (docs/LOG_FORMAT.md §10) of recorded runs, so
that ``paohuzi stats`` and the dashboard answer without scanning their hands. The logic is
:func:`replay.store.summaries.index_run`."""

from __future__ import annotations

import os
from pathlib import Path

import click

from replay.cli.options import pool_workers_option
from replay.store.layout import data_option


@click.command("index", short_help="Build the summary tables of runs (stats and dashboard).")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@data_option
@pool_workers_option("what is written")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def index(runs: tuple[str, ...], data: Path, workers: int, quiet: bool) -> None:
    """Summarise every shard of the named runs (all runs without RUN) that has no summary
    yet, or whose summary is missing or damaged (it is made again): small Parquet tables of
    counts and sums from which every number of `paohuzi stats` and of the dashboard follows
    exactly; and derive the shards' per-hand facts (the winning reading's groups, 破跑胡,
    臭胡/忍碰/比牌, claim conflicts) the same way. Resumable (a summarised shard is skipped); a run being written is left for
    later. The catalog is rebuilt afterwards; a store that is read-only, or a catalog that
    is not a regular file, is refused before anything is written.

    \b
    paohuzi index
    paohuzi index my-run --data /srv/paohuzi --workers 4
    """
    import time

    from engine.errors import PaohuziError
    from replay.cli.main import InputError
    from replay.store.catalog import refresh_catalog, write_problem
    from replay.store.facts_files import index_facts
    from replay.store.manifest import Manifest, read_manifest
    from replay.store.runs import open_store
    from replay.store.summaries import index_run

    store = open_store(data)
    if not store.root.is_dir():
        raise InputError(f"no store at {store.root} (run 'paohuzi simulate' first)")
    refused = write_problem(store.root)  # before any summary is written
    if refused is not None:
        raise InputError(f"nothing indexed: {refused}")
    try:
        names = list(dict.fromkeys(runs)) or store.run_names()
        paths = [store.run(n).path for n in names]
    except PaohuziError as e:
        raise InputError(" ".join(str(e).split())) from None
    failed = 0
    for name, path in zip(names, paths):
        t = time.perf_counter()
        try:
            # a run of imported hands has no summary tables: its seats' policies vary from
            # hand to hand (its figures are read from its hands); its facts are derived
            imported = Manifest(read_manifest(path)).imported
            done, skipped = (
                (0, 0) if imported else index_run(path, workers=min(workers, os.cpu_count() or 1))
            )
            f_done, f_skipped = index_facts(path)
        except (PaohuziError, OSError, ValueError) as e:
            failed += 1
            click.echo(f"Warning: run {name} not indexed: {' '.join(str(e).split())}", err=True)
            continue
        if not quiet:
            click.echo(
                f"run {name}: imported hands, no summary tables ({time.perf_counter() - t:.1f} s)"
                if imported
                else f"run {name}: {done} shard(s) summarised, {skipped} already"
                f" ({time.perf_counter() - t:.1f} s)"
            )
            click.echo(f"run {name}: facts of {f_done} shard(s) derived, {f_skipped} already")
    try:
        refresh_catalog(store.root)
    except PaohuziError as e:  # one line (StoreError), also for a full disk
        raise InputError(
            f"the catalog was not rebuilt: {' '.join(str(e).split())} (the summaries are"
            " written; run 'paohuzi index' again)"
        ) from None
    if failed:
        raise InputError(f"{failed} run(s) not indexed (see the warnings above)")
