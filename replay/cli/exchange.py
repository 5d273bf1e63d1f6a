"""``paohuzi export`` and ``paohuzi import``: one hand as a replay file and back
(docs/REPLAY_FILE.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from replay.cli.main import input_error
from replay.store.layout import data_option

#: The default of ``--max-bytes`` (replay.replayer.exchange.MAX_BYTES, not imported here so
#: that ``--help`` stays cheap).
MAX_BYTES = 1 << 20


def max_bytes_option(f: Any) -> Any:
    """``--max-bytes N``: the largest replay file read (shared by import and replay)."""
    return click.option(
        "--max-bytes",
        type=click.IntRange(min=1),
        default=MAX_BYTES,
        show_default=True,
        metavar="N",
        help="Refuse a replay file larger than N bytes (a hand is a few KB).",
    )(f)


@click.command("export", short_help="Write one recorded hand as a replay file.")
@click.argument("run")
@click.argument("hand", type=int)
@data_option
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "json"]),
    default=None,
    help="text (default) or json; with -o FILE.json json is the default.",
)
@click.option(
    "--output",
    "-o",
    metavar="FILE",
    help="File to write (default and '-': stdout); a device or FIFO is written as a stream.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing --output file.")
def export(
    run: str, hand: int, data: Path, fmt: str | None, output: str | None, force: bool
) -> None:
    """Write hand HAND of run RUN as a human-readable replay file: rules, deck, every
    decision in card notation (with its options) and the outcome. `paohuzi import` reads it
    back; a person can edit or write one by hand.

    -o FILE writes a new file, or replaces a regular one with --force (atomically: a
    temporary file renamed over it). A character device (/dev/null) or a FIFO is written
    to as a stream, never replaced; a symlink is followed (the link stays); a folder, a
    block device or a socket is refused. -o - is standard output.

    \b
    paohuzi export my-run 17 > hand17.phz
    paohuzi export my-run 17 -o hand17.json
    """
    from engine.errors import PaohuziError
    from replay import store
    from replay.replayer import exchange
    from replay.store import output as out_file

    try:
        target = out_file.plan_output(out_file.STDOUT if output is None else output, force)
        if fmt is None:
            fmt = "json" if output and Path(output).suffix.lower() == ".json" else "text"
        text, _ = exchange.export_hand(store.open_store(data), run, hand, fmt)
        out_file.write_output(target, text.encode("utf-8"))
    except PaohuziError as e:
        raise input_error(str(e)) from None
    if target.how != "stdout":
        click.echo(f"wrote run {run} hand {hand} to {output}", err=True)


@click.command("import", short_help="Verify replay files and add their hands to the store.")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@data_option
@click.option(
    "--run",
    "run_name",
    metavar="NAME",
    help="Run of imported hands to add to (default: imported-<rules preset>).",
)
@click.option(
    "--allow-duplicate",
    is_flag=True,
    help="Import a hand even if the same hand (rules, deck, dealer, events) was imported.",
)
@max_bytes_option
def import_(
    files: tuple[Path, ...],
    data: Path,
    run_name: str | None,
    allow_duplicate: bool,
    max_bytes: int,
) -> None:
    """Read each replay FILE (text or JSON), replay its hand through the engine's checked
    path, compare the outcome it states, and add the hands to a run of imported hands (one
    new shard, written atomically; the catalog is refreshed). Nothing is written unless
    every file verifies. A hand imported before is refused unless --allow-duplicate; a file
    larger than --max-bytes (default 1 MiB) is refused unread.

    \b
    paohuzi import docs/examples/honghu-zimo.phz
    paohuzi import hand17.json --run puzzles
    """
    from engine.errors import PaohuziError
    from replay.replayer import exchange
    from replay.store.layout import StoreError

    try:
        parsed = [exchange.read_replay_file(f, max_bytes) for f in files]
        res = exchange.import_files(
            data,
            parsed,
            run_name,
            ["paohuzi", *sys.argv[1:]] if sys.argv else [],
            allow_duplicate=allow_duplicate,
        )
    except (PaohuziError, StoreError) as e:
        raise input_error(str(e)) from None
    for f, hid in zip(files, res.hand_ids, strict=True):
        click.echo(f"imported {f} as run {res.run} hand {hid}")
    if res.catalog_problem is not None:
        click.echo(
            f"Warning: the hands are imported, but the catalog was not refreshed"
            f" ({res.catalog_problem}); readers rebuild it when they can",
            err=True,
        )


import_command = import_  # the name replay.cli.main registers: "replay.cli.exchange:import_command"
export_command = export
