"""``paohuzi simulate``: play hands with policies and record them into the store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.progress import Progress, fmt_duration
from replay import store
from replay.record import runner
from replay.record.backend import Backend, cap_workers
from replay.record.spec import (
    DEFAULT_POLICIES,
    DEFAULT_SESSION_LENGTH,
    DEFAULT_SHARD_HANDS,
    RunError,
    RunSpec,
)


def _input_error(msg: str) -> click.ClickException:
    from paohuzi.cli.errors import InputError

    return InputError(msg)


def backend_options(f: Any) -> Any:
    """``--workers``, ``--backend`` and ``--address``, shared by ``simulate`` and ``sweep``."""
    f = click.option(
        "--address",
        metavar="ADDR",
        default=None,
        help="With --backend ray: join a running cluster ('auto' or HOST:PORT); without it,"
        " a local Ray instance bound to 127.0.0.1.",
    )(f)
    f = click.option(
        "--backend",
        "backend_name",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where shards are played: this machine's process pool, or Ray tasks.",
    )(f)
    return click.option(
        "--workers",
        "-w",
        type=click.IntRange(min=1),
        default=None,
        show_default="CPU count (of the Ray cluster with --backend ray)",
        help="Shards played at once; above the CPU count it is lowered to it (the result"
        " does not depend on it).",
    )(f)


def engine_option(f: Any) -> Any:
    """``--engine``, shared by ``simulate`` and ``sweep``."""
    return click.option(
        "--engine",
        type=click.Choice(["auto", "fast", "reference"]),
        default="auto",
        show_default=True,
        help="Who plays: 'fast' the compiled engine (built-in policies), 'reference' the"
        " Python engine (any policy, module:Class plug-ins); 'auto' fast when it can. Both"
        " record the same rows.",
    )(f)


def open_backend(name: str, address: str | None) -> Backend:
    """The backend asked for, not yet opened; one-line input error if it cannot be."""
    from engine.errors import PaohuziError

    try:
        return runner.make_backend(name, address)
    except PaohuziError as e:
        raise _input_error(str(e)) from None


def start_backend(backend: Backend, workers: int | None, quiet: bool) -> int:
    """Open ``backend`` (Ray: start or join); the number of workers to use, capped at its
    CPUs with a one-line notice on stderr."""
    from engine.errors import PaohuziError

    try:
        backend.open()
    except PaohuziError as e:
        raise _input_error(str(e)) from None
    if backend.name != "local" and not quiet:
        click.echo(backend.describe(), err=True)
    n, notice = cap_workers(workers or backend.cpus(), backend)
    if notice:
        click.echo(notice, err=True)
    return n


def record_run(
    spec: RunSpec,
    data: Path,
    name: str,
    workers: int,
    quiet: bool,
    backend: Backend,
    labels: dict[str, Any] | None = None,
    refresh: bool = True,
) -> bool:
    """Play (or resume) one run with a progress bar and print its one-line result (True if it
    was already complete); on an interruption or a failure print one line and exit (130, 2
    or 1). ``refresh``: refresh the store's catalog after it (a command recording many runs
    passes False and calls :func:`refresh_after` once, after the last or on its way out)."""
    from engine.errors import PaohuziError

    command = ["paohuzi", *sys.argv[1:]] if sys.argv and sys.argv[0] else []
    if spec.engine == "fast":
        from replay.record.fast_engine import warm_up

        warm_up(spec, say=not quiet)
    try:
        with Progress(f"simulate {name}", enabled=not quiet) as bar:
            result = runner.simulate(
                spec, data, name, workers, command, bar, backend, labels, refresh
            )
    except KeyboardInterrupt:
        backend.close()
        click.echo(
            f"interrupted: run {name!r} keeps its finished shards; run the same command to resume",
            err=True,
        )
        sys.exit(130)
    except store.RunMismatch as e:
        raise _input_error(str(e)) from None
    except store.StoreError as e:
        backend.close()
        click.echo(f"Error: {e}", err=True)
        sys.exit(1)
    except (RunError, PaohuziError) as e:
        backend.close()
        click.echo(f"Error: {str(e).splitlines()[0]}", err=True)
        sys.exit(1)
    if result.catalog_problem is not None:
        _catalog_warning(data, f"run {result.name} is recorded", result.catalog_problem)
    if result.already_complete:
        click.echo(
            f"run {result.name}: already complete, {result.hands:,} hands, {result.events:,}"
            f" events, {result.bytes:,} bytes ({result.path})"
        )
        return True
    rate = result.played / result.seconds if result.seconds > 0 else 0.0
    per_hand = result.bytes / result.hands if result.hands else 0.0
    click.echo(
        f"run {result.name}: {result.hands:,} hands ({result.played:,} played in"
        f" {fmt_duration(result.seconds)}, {rate:,.0f} hands/s), {result.events:,} events,"
        f" {result.bytes:,} bytes ({per_hand:.0f} bytes/hand) → {result.path}"
    )
    return False


def refresh_after(data: Path, what: str) -> None:
    """Refresh the store's catalog once after runs recorded with ``refresh=False``; a failure
    is one warning line naming ``what`` was recorded."""
    problem = runner.refresh_catalog(data)
    if problem is not None:
        _catalog_warning(data, what, problem)


def _catalog_warning(data: Path, what: str, problem: str) -> None:
    click.echo(
        f"Warning: {what}, but the catalog {Path(data) / store.CATALOG_NAME} was not refreshed"
        f" ({problem}); readers build it in memory until it can be written",
        err=True,
    )


def build_spec(
    hands: int,
    seed: int,
    rules: str,
    overrides: tuple[str, ...] | list[str],
    policies: str,
    session_length: int,
    duplicate: bool,
    shard_hands: int,
    engine: str = "auto",
    data: Path | None = None,
    run_name: str | None = None,
    preset_rollout: bool = True,
) -> RunSpec:
    """The run of these options, with ``engine`` resolved to ``fast`` or ``reference``
    (raises ``PaohuziError`` on bad input). A ``POLICY@WEIGHTS`` table is read now; if the
    run (``run_name``, else the default name, in the store ``data``) already exists, the table
    it recorded is used when the file is gone, and a file that now says otherwise is refused
    (:func:`replay.record.spec.resolve_tables`). With ``preset_rollout`` a bare ``search@N``
    plays its preset's rollouts
    (:func:`engine.policies.search_policy.with_preset_rollout`), except in a run of the
    store recorded with it bare, which resumes as it was played."""
    import dataclasses

    from engine.policies import load_policy, table_spec
    from engine.policies.search_policy import is_search_spec, with_preset_rollout
    from engine.policies.search_policy import parse_spec as parse_search
    from engine.policies.weights import canonical, defaults, parse_spec
    from engine.rules import find_rules
    from replay.record.spec import resolve_tables

    ruleset = find_rules(rules).with_overrides(tuple(overrides))
    names = [s.strip() for s in policies.split(",") if s.strip()]
    for n in names:  # names and syntax; a weights file is read below
        if is_search_spec(n):
            parse_search(n)
        elif table_spec(n) is not None:
            parse_spec(n)
        else:
            load_policy(n)
    if len(names) == 1:
        names = names * ruleset.players
    if len(names) != ruleset.players:
        from engine.errors import InvalidNotation

        raise InvalidNotation(
            f"{len(names)} policies given for {ruleset.players} seats: {policies!r}"
        )

    def planned(seats: list[str]) -> RunSpec:
        """The run of ``seats``, with stand-in tables: the run's name does not depend on the
        tables (they are outside its identity), so it is found before any file is read."""
        played = [t for t in map(table_spec, seats) if t is not None]
        stand_in = {canonical(t): defaults(parse_spec(t)[0]) for t in played}
        return RunSpec(
            rules=ruleset,
            policies=tuple(seats),
            seed=seed,
            deals=hands,
            session_length=session_length,
            duplicate=duplicate,
            shard_hands=shard_hands,
            weights=tuple(sorted(stand_in.items())),
        )

    spec = planned(names)
    if preset_rollout:
        # a bare search@N gets its preset's rollouts, unless the run these very words
        # address was recorded with it bare (before there were preset rollouts): that run
        # resumes as it was played
        with_rollout = [with_preset_rollout(n, ruleset) for n in names]
        bare_run = run_name or spec.default_name()
        if with_rollout != names and _recorded_policies(data, bare_run) != names:
            names, spec = with_rollout, planned(with_rollout)
    if spec.weights:
        name = run_name or spec.default_name()
        recorded = _recorded(data, name) if data is not None else {}
        tables = resolve_tables(names, recorded, name if recorded else None)
        spec = dataclasses.replace(spec, weights=tables)
    if engine == "reference":
        return spec
    from replay.record.fast_engine import resolve

    return dataclasses.replace(spec, engine=resolve(engine, spec))


def _recorded_manifest(data: Path | None, name: str) -> dict[str, Any] | None:
    """The manifest of run ``name`` of the store ``data`` (None when there is no such run, or
    its manifest cannot be read: the runner then says why)."""
    from engine.errors import PaohuziError

    if data is None:
        return None
    try:
        path = store.run_dir(data, name)
        if not (path / store.MANIFEST_NAME).exists():
            return None
        return store.read_manifest(path)
    except (OSError, PaohuziError):
        return None


def _recorded_policies(data: Path | None, name: str) -> list[str] | None:
    """The seats' policies run ``name`` of the store ``data`` recorded (None as
    :func:`_recorded_manifest`)."""
    manifest = _recorded_manifest(data, name)
    policies = (manifest or {}).get("params", {}).get("policies")
    return [str(p) for p in policies] if isinstance(policies, list) else None


def _recorded(data: Path, name: str) -> dict[str, Any]:
    """The weight tables run ``name`` of the store ``data`` recorded ({} as
    :func:`_recorded_manifest` gives None, or when they cannot be read)."""
    from engine.errors import PaohuziError
    from replay.record.spec import recorded_tables

    manifest = _recorded_manifest(data, name)
    try:
        return recorded_tables(manifest) if manifest is not None else {}
    except PaohuziError:
        return {}


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

    try:
        spec = build_spec(
            hands, seed, rules, overrides, policies, session_length, duplicate, shard_hands,
            engine, data, run_name,
        )  # fmt: skip
        if run_name is not None:
            store.check_run_name(run_name)
        store.ensure_writable(data)
    except PaohuziError as e:
        raise _input_error(str(e)) from None

    name = run_name or spec.default_name()
    backend = open_backend(backend_name, address)
    try:
        n = start_backend(backend, workers, quiet)
        record_run(spec, data, name, n, quiet, backend)
    finally:
        backend.close()


simulate = simulate_command  # the name paohuzi.cli.main registers: "paohuzi.cli.simulate:simulate"
