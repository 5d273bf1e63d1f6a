"""``paohuzi simulate``: play hands with policies and record them into the store (the work:
:mod:`replay.record.simulation`; what it shares with ``sweep`` and ``report``:
:mod:`paohuzi.cli.recording`)."""

from __future__ import annotations

from pathlib import Path

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.recording import (
    backend_options,
    engine_option,
    open_backend,
    record_run,
    start_backend,
)
from replay import store
from replay.record.spec import DEFAULT_POLICIES, DEFAULT_SESSION_LENGTH, DEFAULT_SHARD_HANDS


@click.command(short_help="Play hands with policies and record them (Parquet + DuckDB).")
@click.option(
    "--hands",
    "-n",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Hands to play (with --duplicate: deals, each played once per rotation).",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    default=0,
    show_default=True,
    help="Run seed: every session, deck and policy seed derives from it.",
)
@click.option("--rules", "-r", default="hunan", show_default=True, help="Rule preset.")
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a rule switch (repeatable).",
)
@click.option(
    "--policies",
    "-p",
    default=DEFAULT_POLICIES,
    show_default=True,
    help="Policy per seat, comma-separated (one name: every seat): random, greedy, heuristic,"
    " learned, search@N[/POLICY] (a bare search@N: heuristic rollouts; under hunan's or"
    " hunan-4p's own rules, those of the preset's learned set), greedy@WEIGHTS,"
    " heuristic@WEIGHTS or learned@WEIGHTS (a weights"
    " file, a path with '/' or ending in .json, or a shipped set: docs/POLICIES.md),"
    " module:Class.",
)
@engine_option
@backend_options
@store.data_option
@click.option(
    "--run",
    "run_name",
    metavar="NAME",
    help="Run name (default: derived from the arguments, so a rerun resumes).",
)
@click.option(
    "--session-length",
    type=click.IntRange(min=1),
    default=DEFAULT_SESSION_LENGTH,
    show_default=True,
    help="Deals per session (a table with the dealer rules).",
)
@click.option(
    "--duplicate",
    is_flag=True,
    help="Play every deal once per rotation of the policies over the seats.",
)
@click.option(
    "--shard-hands",
    type=click.IntRange(min=1),
    default=DEFAULT_SHARD_HANDS,
    show_default=True,
    help="Target hands per shard file (unit of work and resume).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def simulate_command(
    hands: int,
    seed: int,
    rules: str,
    overrides: tuple[str, ...],
    policies: str,
    engine: str,
    workers: int | None,
    backend_name: str,
    address: str | None,
    data: Path,
    run_name: str | None,
    session_length: int,
    duplicate: bool,
    shard_hands: int,
    quiet: bool,
) -> None:
    """Play hands in sessions and record every action into the store.

    The same command gives the same bytes with any --workers and either --backend; run it
    again to resume an interrupted run (or to confirm a finished one). Views runs/hands/events
    are in DIR/paohuzi.duckdb. With --backend ray, DIR must be a path every node reaches.

    \b
    paohuzi simulate --hands 100000 --workers 2
    paohuzi simulate -n 30000 --policies heuristic,random,heuristic --duplicate --seed 7
    paohuzi simulate -n 10000 --rules hunan --set min_huxi=10 --run min10
    paohuzi simulate -n 1000000 --backend ray --address auto --data /shared/paohuzi
    """
    from engine.errors import PaohuziError
    from replay.record.simulation import build_spec

    try:
        spec = build_spec(
            hands, seed, rules, overrides, policies, session_length, duplicate, shard_hands,
            engine, data, run_name,
        )  # fmt: skip
        if run_name is not None:
            store.check_run_name(run_name)
        store.ensure_writable(data)
    except PaohuziError as e:
        raise input_error(str(e)) from None

    name = run_name or spec.default_name()
    backend = open_backend(backend_name, address)
    try:
        n = start_backend(backend, workers, quiet)
        record_run(spec, data, name, n, quiet, backend)
    finally:
        backend.close()


simulate = simulate_command  # the name paohuzi.cli.main registers: "paohuzi.cli.simulate:simulate"
