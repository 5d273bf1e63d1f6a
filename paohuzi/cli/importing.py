"""``paohuzi import``: replay files verified and their hands added to the store, all or
nothing, or a JSON-lines batch answered line by line (docs/REPLAY_FILE.md); the one import
path, :func:`replay.record.importing.import_hands` (a
:class:`replay.replayer.importing.ImportBatch` committed by the store's writer), which
``POST /runs/{run}/hands`` takes too."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.options import max_bytes_option
from replay.store.layout import data_option

#: The defaults of ``--max-batch-bytes``, ``--max-lines`` and ``--lock-seconds``
#: (replay.replayer.importing.BATCH_BYTES, BATCH_LINES; the wait for the store's import lock
#: and the run's, replay.store.write.RunWriter).
BATCH_BYTES = 64 << 20
BATCH_LINES = 10_000
LOCK_SECONDS = 30.0


@click.command("import", short_help="Verify replay files and add their hands to the store.")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@data_option
@click.option(
    "--run",
    "run_name",
    metavar="NAME",
    help="Run of imported hands to add to (default: imported-<rules preset>).",
)
@click.option(
    "--jsonl",
    "jsonl",
    metavar="FILE",
    help="A JSON-lines batch (one replay file in the JSON spelling per line; - for stdin):"
    " each line accepted or refused on its own.",
)
@click.option(
    "--allow-duplicate",
    is_flag=True,
    help="Import a hand even if the same hand (rules, deck, dealer, events) was imported.",
)
@max_bytes_option
@click.option(
    "--max-batch-bytes",
    type=click.IntRange(min=1),
    default=BATCH_BYTES,
    show_default=True,
    metavar="N",
    help="Refuse a --jsonl batch larger than N bytes.",
)
@click.option(
    "--max-lines",
    type=click.IntRange(min=1),
    default=BATCH_LINES,
    show_default=True,
    metavar="N",
    help="Refuse a --jsonl batch of more than N replay files.",
)
@click.option(
    "--lock-seconds",
    type=click.FloatRange(min=0),
    default=LOCK_SECONDS,
    show_default=True,
    metavar="S",
    help="Seconds to wait for another import to finish (one at a time checks for duplicates"
    " and commits, in the whole store).",
)
@click.option("--json", "as_json", is_flag=True, help="With --jsonl: print the verdicts as JSON.")
def import_command(
    files: tuple[Path, ...],
    data: Path,
    run_name: str | None,
    jsonl: str | None,
    allow_duplicate: bool,
    max_bytes: int,
    max_batch_bytes: int,
    max_lines: int,
    lock_seconds: float,
    as_json: bool,
) -> None:
    """Read each replay FILE (text or JSON), replay its hand through the engine's checked
    path, compare the outcome it states, and add the hands to a run of imported hands (one
    new shard, written atomically; the catalog is refreshed). Nothing is written unless
    every file verifies. A hand imported before is refused unless --allow-duplicate; a file
    larger than --max-bytes (default 1 MiB) is refused unread.

    --jsonl FILE reads a batch instead: one replay file (JSON spelling) per line, at most
    --max-lines of them in at most --max-batch-bytes, a line at most --max-bytes. Each line
    is accepted or refused on its own (not a replay file, unknown rules, an illegal event,
    a wrong outcome, a duplicate …) and says so; the accepted ones are added as one shard.
    Exit status: 0 every line accepted, 1 some refused, 2 the batch itself refused.

    \b
    paohuzi import docs/examples/honghu-zimo.phz
    paohuzi import hand17.json --run puzzles
    paohuzi import --jsonl hands.jsonl --run field
    """
    from engine.errors import PaohuziError
    from replay.record.importing import import_hands
    from replay.replayer import importing, replay_file
    from replay.store.layout import StoreError

    command = ["paohuzi", *sys.argv[1:]] if sys.argv else []
    if jsonl is not None:
        if files:
            raise input_error("give replay files or --jsonl FILE, not both")
        try:
            name = "<stdin>" if jsonl == "-" else jsonl
            data_ = _read_batch(jsonl, max_batch_bytes)
            items = importing.parse_jsonl(
                data_, name, max_lines, max_bytes, "raise it with --max-lines / --max-bytes"
            )
            if not items:
                raise replay_file.ReplayFileError(f"{name}: no replay file in the batch")
            res = import_hands(
                data,
                importing.ImportBatch(items),
                run_name,
                command,
                allow_duplicate=allow_duplicate,
                lock_wait=lock_seconds,
            )
        except (PaohuziError, StoreError) as e:
            raise input_error(" ".join(str(e).split())) from None
        _say_verdicts(res, name, as_json)
        if res.refused:
            sys.exit(1)
        return
    if not files:
        raise input_error("give replay files to import, or --jsonl FILE")
    if as_json:
        raise input_error("--json goes with --jsonl")
    try:
        parsed = [replay_file.read_replay_file(f, max_bytes) for f in files]
        res = import_hands(
            data,
            importing.ImportBatch(parsed, all_or_nothing=True),
            run_name,
            command,
            allow_duplicate=allow_duplicate,
            lock_wait=lock_seconds,
        )
    except (PaohuziError, StoreError) as e:
        raise input_error(str(e)) from None
    for f, hid in zip(files, res.hand_ids, strict=True):
        click.echo(f"imported {f} as run {res.run} hand {hid}")
    _catalog_warning(res.catalog_problem)


def _read_batch(source: str, max_bytes: int) -> bytes:
    """The batch's bytes: a file (bounded, as a replay file is), or stdin for ``-`` (at most
    ``max_bytes + 1`` read)."""
    from replay.replayer import replay_file

    if source != "-":
        return _bounded_file(source, max_bytes)
    data = sys.stdin.buffer.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise replay_file.ReplayFileError(
            f"<stdin>: larger than {max_bytes:,} bytes, the limit for a JSON-lines batch"
            " (raise it with --max-batch-bytes)"
        )
    return data


def _bounded_file(source: str, max_bytes: int) -> bytes:
    from replay.replayer import replay_file

    try:
        return replay_file.read_bounded(source, max_bytes, "JSON-lines batch")
    except replay_file.ReplayFileError as e:
        raise replay_file.ReplayFileError(
            str(e).replace("--max-bytes", "--max-batch-bytes"), e.reason
        ) from None


def _say_verdicts(res: Any, name: str, as_json: bool) -> None:
    """One line per item (accepted as which hand, or refused and why), then the count."""
    import json

    if as_json:
        click.echo(json.dumps(res.to_dict(), ensure_ascii=False))
    else:
        for v in res.verdicts:
            if v.accepted:
                click.echo(f"{v.name}: accepted as run {res.run} hand {v.hand_id}")
            else:
                why = str(v.error).removeprefix(f"{v.name}: ")
                click.echo(f"{v.name}: refused ({v.reason}): {why}")
    where = f" into run {res.run}" if res.accepted else ""
    click.echo(f"{name}: {res.accepted} accepted{where}, {res.refused} refused", err=True)
    _catalog_warning(res.catalog_problem)


def _catalog_warning(problem: str | None) -> None:
    if problem is not None:
        click.echo(
            f"Warning: the hands are imported, but the catalog was not refreshed"
            f" ({problem}); readers rebuild it when they can",
            err=True,
        )
