"""``paohuzi doctor``: list the store's left-overs and, with ``--fix``, remove them (what
counts and what is safe to remove: :mod:`replay.store.leftovers`)."""

from __future__ import annotations

from pathlib import Path

import click

from paohuzi.cli.errors import input_error
from replay.store.layout import data_option


@click.command("doctor", short_help="List (--fix: remove) left-overs of killed commands.")
@data_option
@click.option("--fix", is_flag=True, help="Remove every left-over listed, one line each.")
@click.option(
    "--yes",
    "named",
    multiple=True,
    metavar="NAME",
    help="With --fix, also remove this left-over that may hold data (a run folder of a"
    " refused name …), named as listed or by its folder's name (repeatable).",
)
def doctor(data: Path, fix: bool, named: tuple[str, ...]) -> None:
    """List what killed or interrupted commands left in the store, one line each on
    stdout: interrupted removals (runs/.removing-NAME-PID), temporary files (.NAME.tmp-PID,
    the catalog's .paohuzi.duckdb.tmp-PID) of processes that are gone, run folders with no
    manifest whose writer is gone, run folders whose names the tool refuses (rename one to
    keep it), symlinked run folders, entries run=... that are no folder, and lock files that
    are not regular files; in play/, tables that cannot be resumed (with why) and entries
    that are no table (a play that is a symlink or no folder too). The unfinished tables
    that can be resumed are named on stderr (never a left-over). Only a paohuzi store is
    looked at (its paohuzi.duckdb, a runs folder holding a run=NAME folder, or a play folder
    holding a table), and in it only the names its own writers create, where they create
    them; any other folder is refused, nothing in it touched. A run's .lock of a
    finished writer is no left-over. What a live process holds is kept, and said so on
    stderr. Exit status: 0 when there is nothing to fix, 1 when left-overs are listed.

    With --fix, remove them ("removed ..." for each; a symlink is removed as a link, its
    target never touched) and rebuild the catalog if a run folder went. What may hold a
    person's data (a run folder of a refused name, a run folder with no manifest that holds
    other files, a regular file named run=..., a folder in a lock's place) is kept unless
    named with --yes, and so is a broken table (play/TABLE.jsonl: a hand's decisions); exit
    0 when all are gone, 1 when some are kept so, or one Error line and 2 if any could not
    be removed.

    \b
    paohuzi doctor
    paohuzi doctor --fix --data /shared/paohuzi
    paohuzi doctor --fix --yes 'run=my run'
    """
    from engine.errors import PaohuziError
    from replay.play import folder
    from replay.store import leftovers

    try:
        found = leftovers.find_leftovers(data)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    play = folder.examine(data)
    found.leftovers = sorted([*found.leftovers, *play.leftovers], key=lambda lo: lo.rel)
    found.notes += play.notes
    for line in play.unfinished:
        click.echo(line, err=True)
    for note in found.notes:
        click.echo(f"Warning: {note}", err=True)
    for lo in found.in_use:
        click.echo(f"kept, in use: {lo.line(alive=True)}", err=True)
    where = str(data)
    if named and not fix:
        raise input_error("--yes names left-overs to remove: give it with --fix")
    for name in named:
        if not any(lo.needs_yes and lo.named_by(name) for lo in found.leftovers):
            raise input_error(
                f"--yes {leftovers.shown(name)[:200]!r} names no left-over that needs it;"
                " nothing removed"
            )
    if not found.leftovers:
        click.echo(f"no left-overs in {where}", err=True)
        return
    if not fix:
        for lo in found.leftovers:
            click.echo(lo.line())
        n = len(found.leftovers)
        click.echo(f"{n} left-over{'s' * (n != 1)} in {where}; --fix removes them", err=True)
        if any(lo.needs_yes for lo in found.leftovers):
            click.echo(
                "what may hold data goes only when named: --fix --yes NAME (as listed)", err=True
            )
        raise SystemExit(1)
    failed: list[str] = []
    kept = 0
    runs_changed = False
    for lo in found.leftovers:
        confirmed = any(lo.named_by(name) for name in named)
        if lo.needs_yes and not confirmed:
            kept += 1
            click.echo(f"kept: {lo.line()}; --yes {_quoted(lo.rel)} removes it", err=True)
            continue
        try:
            leftovers.remove_leftover(lo, confirmed=confirmed)
        except PaohuziError as e:
            failed.append(str(e))
            continue
        click.echo(f"removed {leftovers.shown(lo.rel)} ({lo.kind})")
        runs_changed |= lo.kind in leftovers.RUN_ENTRY_KINDS
    if runs_changed:
        _refresh_catalog(data)
    if failed:
        n = len(failed)
        raise input_error(f"{n} left-over{'s' * (n != 1)} not removed: {'; '.join(failed)}")
    if kept:
        raise SystemExit(1)


def _quoted(text: str) -> str:
    """``text`` as one shell word."""
    import shlex

    return shlex.quote(text) if text.isprintable() else repr(text)


def _refresh_catalog(data: Path) -> None:
    """Rebuild the catalog if the store has one (readers would rebuild it anyway); a
    failure is a warning: the left-overs are gone all the same."""
    from replay.store.catalog import refresh_catalog
    from replay.store.layout import CATALOG_NAME

    if not (data / CATALOG_NAME).is_file():
        return
    try:
        refresh_catalog(data)
    except Exception as e:  # the left-overs are removed whatever becomes of the catalog
        text = " ".join(str(e).split())[:200]
        click.echo(f"Warning: the catalog was not rebuilt ({type(e).__name__}: {text})", err=True)
