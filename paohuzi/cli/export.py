"""``paohuzi export``: one recorded hand as a replay file (docs/REPLAY_FILE.md; ``paohuzi
import`` reads it back)."""

from __future__ import annotations

from pathlib import Path

import click

from paohuzi.cli.errors import input_error
from replay.store.layout import data_option


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
def export_command(
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
    from replay.replayer import replay_file
    from replay.store import output as out_file

    try:
        target = out_file.plan_output(out_file.STDOUT if output is None else output, force)
        if fmt is None:
            fmt = "json" if output and Path(output).suffix.lower() == ".json" else "text"
        text, _ = replay_file.export_hand(store.open_store(data), run, hand, fmt)
        out_file.write_output(target, text.encode("utf-8"))
    except PaohuziError as e:
        raise input_error(str(e)) from None
    if target.how != "stdout":
        click.echo(f"wrote run {run} hand {hand} to {output}", err=True)
