"""``paohuzi report``: the reference statistics (docs/REFERENCE.md, :mod:`replay.reference`).

It plays the report's runs into the store (each one as ``paohuzi simulate`` plays it: resumed
after an interruption, confirmed when complete), then writes the document and its charts from
those runs alone. ``--no-play`` writes from the runs already there, and says which is missing.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.recording import (
    backend_options,
    open_backend,
    record_run,
    refresh_after,
    start_backend,
)
from replay import store


@click.command(short_help="Write the reference statistics (docs/REFERENCE.md) from their runs.")
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs/REFERENCE.md"), show_default=True,
    help="The document; its charts go to reference/ beside it.",
)  # fmt: skip
@click.option(
    "--scale", type=click.Choice(["full", "small"]), default="full", show_default=True,
    help="full: the published sizes (10⁷ hunan hands, 2×10⁶ per other preset, 10⁶ per rule"
    " switch); small: every section from a few minutes of play (the suite's check).",
)  # fmt: skip
@click.option("--no-play", is_flag=True, help="Write from the runs in the store; play none.")
@click.option("--list", "list_only", is_flag=True, help="Print the report's run names and stop.")
@backend_options
@store.data_option
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def report(
    out: Path,
    scale: str,
    no_play: bool,
    list_only: bool,
    workers: int | None,
    backend_name: str,
    address: str | None,
    data: Path,
    quiet: bool,
) -> None:
    """Play the reference runs (or find them in the store) and write the document.

    Each table of the document states the runs it comes from: their commands, seeds, code
    version, hands and wall time. Run the same command again to resume; the document is the
    same bytes from the same runs.

    \b
    paohuzi report --data data/reference                      # docs/REFERENCE.md
    paohuzi report --data /tmp/ref --scale small --out /tmp/ref/REFERENCE.md
    """
    import dataclasses

    from engine.errors import PaohuziError
    from replay.record.fast_engine import resolve
    from replay.reference import build
    from replay.reference.plan import SCALES, studies

    the_scale = SCALES[scale]
    try:
        plan = []
        for study in studies(the_scale):
            spec = study.spec()
            plan.append((study, dataclasses.replace(spec, engine=resolve("auto", spec))))
        if not (list_only or no_play):
            store.ensure_writable(data)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    if list_only:
        for study, _ in plan:
            click.echo(study.run_name())
        return
    start = time.perf_counter()
    if not no_play:
        backend = open_backend(backend_name, address)
        played = False
        try:
            n_workers = start_backend(backend, workers, quiet)
            for study, spec in plan:
                name = study.run_name()
                if build.complete(data, name):  # used as it is: its manifest left alone
                    continue
                labels = {"reference": {"study": study.key, "scale": scale}}
                played = True
                record_run(spec, data, name, n_workers, quiet, backend, labels, refresh=False)
        finally:
            backend.close()
            if played:  # once for every run (a refresh reads every run's listing)
                refresh_after(data, "the report's runs are recorded")
    import duckdb

    from replay.store.ducklimits import failure_line

    try:
        text, svgs = build.document(data, the_scale)
        written = build.write(out, text, svgs)
    except (PaohuziError, OSError, ValueError, duckdb.Error) as e:
        raise input_error(f"report: {failure_line(e)}") from None
    click.echo(
        f"report: {out} and {len(written) - 1} files beside it from {len(plan)} runs in {data}"
        f" ({time.perf_counter() - start:,.0f} s)"
    )
