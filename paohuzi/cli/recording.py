"""What ``paohuzi simulate``, ``sweep`` and ``report`` share: the ``--workers``,
``--backend``, ``--address`` and ``--engine`` options, the backend opened with its notices, and
a run recorded (:func:`replay.record.simulation.simulate`) with its progress bar, its one-line
result and its one-line errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.progress import Progress, fmt_duration
from replay import store
from replay.record import runner
from replay.record.backend import Backend, cap_workers
from replay.record.spec import RunError, RunSpec


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
        raise input_error(str(e)) from None


def start_backend(backend: Backend, workers: int | None, quiet: bool) -> int:
    """Open ``backend`` (Ray: start or join); the number of workers to use, capped at its
    CPUs with a one-line notice on stderr."""
    from engine.errors import PaohuziError

    try:
        backend.open()
    except PaohuziError as e:
        raise input_error(str(e)) from None
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
    from replay.record.simulation import simulate

    command = ["paohuzi", *sys.argv[1:]] if sys.argv and sys.argv[0] else []
    try:
        with Progress(f"simulate {name}", enabled=not quiet) as bar:
            result = simulate(
                spec, data, name, workers=workers, backend=backend, labels=labels,
                refresh=refresh, progress=bar, command=command, say=not quiet,
            )  # fmt: skip
    except KeyboardInterrupt:
        backend.close()
        click.echo(
            f"interrupted: run {name!r} keeps its finished shards; run the same command to resume",
            err=True,
        )
        sys.exit(130)
    except store.RunMismatch as e:
        raise input_error(str(e)) from None
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
