"""``paohuzi verify``: re-apply every recorded decision through the engine and recompute every
recorded outcome; report each bad hand (run, hand, event seq, reason)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.options import pool_workers_option
from paohuzi.cli.progress import Progress
from replay.store.layout import data_option

MAX_LINES_DEFAULT = 200


@click.command(short_help="Check recorded hands against the rules; report every bad hand.")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@data_option
@pool_workers_option("the report")
@click.option("--no-checksum", is_flag=True, help="Skip the SHA-256 check of the shard files.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option(
    "--max-lines",
    type=click.IntRange(min=0),
    default=MAX_LINES_DEFAULT,
    show_default=True,
    help="Problems printed per run (0: all); the summary counts every one.",
)
@click.option(
    "--reference",
    is_flag=True,
    help="Re-apply hands through the Python reference engine (the independent, slow path)"
    " instead of the compiled one.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Also the store's housekeeping that needs nothing done (an earlier rollup file kept"
    " for readers of an earlier manifest).",
)
def verify(
    runs: tuple[str, ...],
    data: Path,
    workers: int,
    no_checksum: bool,
    as_json: bool,
    max_lines: int,
    reference: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Re-apply every event of every hand of RUN (all runs without RUN) through the engine's
    checked path (the compiled engine; --reference: the Python reference engine), recompute
    each recorded outcome (winner, deltas, 胡息, 等, 番, 名堂, source, stock left …) and check the
    store around them (manifest, shard files, checksums, row counts, event order, decks,
    and each summary file, recomputed from the hands it summarises and compared).
    Every bad hand is reported with its run, hand, event seq and the reason; the check goes
    on. Exit status 1 if anything is bad, 0 otherwise. A note says what a user may act on;
    -v also says the store's housekeeping that needs nothing done.

    \b
    paohuzi verify
    paohuzi verify my-run --workers 4
    paohuzi verify my-run --reference
    paohuzi verify --json | jq '.runs[].bad_hands'
    """
    from engine.errors import PaohuziError
    from paohuzi.cli.errors import InputError
    from replay.replayer.verify import verify_store
    from replay.store.layout import StoreError

    if not data.is_dir():
        raise InputError(f"no store at {data}")
    try:
        with Progress(
            "verify", not quiet and not as_json, "verify", plain=False, thread=False
        ) as bar:
            report = verify_store(
                data,
                runs,
                workers,
                checksums=not no_checksum,
                progress=bar,
                engine="reference" if reference else "fast",
            )
    except (StoreError, PaohuziError) as e:
        raise InputError(" ".join(str(e).split())) from None
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    else:
        click.echo(render_report(report, max_lines, verbose))
    if not report.ok:
        sys.exit(1)


def render_report(report: Any, max_lines: int = MAX_LINES_DEFAULT, verbose: bool = False) -> str:
    """The report as ``paohuzi verify`` prints it: problems, the notes a user may act on
    (``verbose``: the housekeeping details too), a line per run and the verdict."""
    lines = []
    for r in report.runs:
        shown = r.problems if not max_lines else r.problems[:max_lines]
        lines += [str(p) for p in shown]
        if len(shown) < len(r.problems):
            lines.append(f"run {r.run}: … {len(r.problems) - len(shown)} more problem(s)")
    lines += [f"Note: {note}" for r in report.runs for note in r.notes]
    if verbose:
        lines += [f"Note: {note}" for r in report.runs for note in getattr(r, "details", ())]
    rate = report.hands / report.seconds if report.seconds > 0 else 0.0
    for r in report.runs:
        state = "ok" if r.ok else f"{r.n_bad:,} bad hand(s), {len(r.problems):,} problem(s)"
        status = f" [{r.status}]" if r.status not in (None, "complete") else ""
        lines.append(
            f"run {r.run}{status}: {r.hands:,} hands, {r.events:,} events verified — {state}"
        )
    verdict = "all good"
    if not report.ok:
        verdict = f"{report.n_bad:,} bad hand(s)"
        other = sum(1 for p in report.problems if p.hand is None)
        if other:
            verdict += f", {other:,} problem(s) of runs or files"
    engines = sorted({r.engine for r in report.runs if r.engine})
    by = f" by the {' and '.join(engines)} engine" if engines else ""
    lines.append(
        f"verified {report.hands:,} hands in {len(report.runs)} run(s) in"
        f" {report.seconds:.1f} s ({rate:,.0f} hands/s{by}): {verdict}"
    )
    return "\n".join(lines)
