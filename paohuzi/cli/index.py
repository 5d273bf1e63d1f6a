"""``paohuzi index``: build the summary tables (docs/LOG_FORMAT.md §10) and the per-hand facts
(§12) of recorded runs, so that ``paohuzi stats`` and the dashboard answer without scanning
their hands or replaying them. The logic is :func:`replay.derived.indexer.index_derived`: one
pass per run, each shard read once for both."""

from __future__ import annotations

from pathlib import Path

import click

from paohuzi.cli.options import pool_workers_option
from replay.pool import cpu_count
from replay.store.layout import data_option


@click.command("index", short_help="Build the summary tables and facts of runs.")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@data_option
@pool_workers_option("what is written")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def index(runs: tuple[str, ...], data: Path, workers: int, quiet: bool) -> None:
    """Summarise every shard of the named runs (all runs without RUN) that has no summary
    yet, or whose summary is missing or damaged (it is made again): small Parquet tables of
    counts and sums from which every number of `paohuzi stats` and of the dashboard follows
    exactly; and derive the shards' per-hand facts (the winning reading's groups, 破跑胡,
    臭胡/忍碰/比牌, claim conflicts) the same way, in the same pass (each shard is read once,
    in --workers processes). Resumable (a shard that has both is skipped); a run being
    written is left for later. The catalog is rebuilt afterwards; a store that is read-only, or a catalog that
    is not a regular file, is refused before anything is written.

    \b
    paohuzi index
    paohuzi index my-run --data /srv/paohuzi --workers 4
    """
    import time

    from engine.errors import PaohuziError
    from paohuzi.cli.errors import InputError
    from replay.derived.indexer import index_derived
    from replay.pool import SharedPool
    from replay.store.catalog import refresh_catalog, write_problem
    from replay.store.facts_schema import FACTS_TABLE
    from replay.store.runs import open_store
    from replay.store.summary_schema import SUMMARY_TABLE

    store = open_store(data)
    if not store.root.is_dir():
        raise InputError(f"no store at {store.root} (run 'paohuzi simulate' first)")
    refused = write_problem(store.root)  # before any summary is written
    if refused is not None:
        raise InputError(f"nothing indexed: {refused}")
    known = store.run_names()
    names = list(dict.fromkeys(runs)) or known
    try:
        for name in names:
            if name not in known:
                store.run(name)  # raises the one-line "no run …" before anything is written
    except PaohuziError as e:
        raise InputError(_line(e)) from None
    failed = 0
    n = min(workers, cpu_count())
    # one pool for every run: its workers start once (a worker interrupted mid-file would
    # leave its temporary file behind: let it finish)
    with SharedPool(n, terminate=False) as pool:
        for name in names:
            t = time.perf_counter()
            try:
                path = store.run(name).path
            except PaohuziError as e:  # a damaged run: every reader leaves it out, and so do we
                failed += bool(runs)  # unless it was named
                click.echo(f"Warning: run {name} left out (a damaged run: {_line(e)})", err=True)
                continue
            try:
                got = index_derived(path, workers=n, pool=pool)
            except (PaohuziError, OSError, ValueError) as e:
                failed += 1
                click.echo(f"Warning: run {name} not indexed: {_line(e)}", err=True)
                continue
            if not quiet:
                took = f"({time.perf_counter() - t:.1f} s)"
                if SUMMARY_TABLE in got:
                    done, skipped = got[SUMMARY_TABLE]
                    click.echo(f"run {name}: {done} shard(s) summarised, {skipped} already {took}")
                else:  # more policy classes than a summary holds: read from its hands
                    click.echo(
                        f"run {name}: imported hands of more than 4 seat-policy assignments, no"
                        f" summary tables (its figures come from its hands) {took}"
                    )
                f_done, f_skipped = got[FACTS_TABLE]
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


def _line(e: BaseException) -> str:
    return " ".join(str(e).split())
