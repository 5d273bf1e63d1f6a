"""``paohuzi runs``, ``paohuzi hands`` and ``paohuzi rm``: list the runs of a store, list and
filter the hands of a run, remove a run (the logic is in :mod:`replay.store.manage`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from engine.errors import printable
from paohuzi.cli.errors import input_error
from paohuzi.cli.options import BoundedInt
from paohuzi.cli.tabular import Column, choose_format, emit, encode, output_options, plan
from paohuzi.cli.text_table import headed
from replay.store.layout import data_option

#: ``paohuzi hands --limit`` default (replay.store.manage.DEFAULT_LIMIT; not imported here so
#: that ``--help`` stays cheap).
DEFAULT_LIMIT = 50
#: ``paohuzi hands --limit`` at most (the query asks for one hand more, in a 64-bit integer).
MAX_LIMIT = 10**9


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _text(v: Any) -> str:
    return "-" if v is None else str(v)


@click.command("runs", short_help="List the runs of the store.")
@data_option
@click.option("--json", "as_json", is_flag=True, help="One JSON array of run objects.")
def runs(data: Path, as_json: bool) -> None:
    """List the runs of the store: name, status, rules, policies, hands, size on disk and
    when each was created.

    \b
    paohuzi runs
    paohuzi runs --json
    """
    from engine.errors import PaohuziError
    from replay.store import manage, open_store

    try:
        rows = manage.run_summaries(open_store(data))
    except (PaohuziError, OSError) as e:
        raise input_error(str(e)) from None
    if as_json:
        click.echo(printable(json.dumps(rows, ensure_ascii=False, indent=1), "\n", json=True))
        return
    if not rows:
        click.echo(f"no runs in {data}", err=True)
        return
    header = ["run", "status", "rules", "policies", "hands", "size", "created"]
    body = [
        [
            r["run"],
            r["state"],
            _text(r["rules"]),
            _text(r["policies"]),
            _text(r["hands"]),
            _size(r["bytes"]),
            _text(r["created"]),
        ]
        for r in rows
    ]
    click.echo(headed(header, body))


@click.command("hands", short_help="List and filter the hands of a run.")
@click.argument("run")
@data_option
@click.option("--winner", type=click.IntRange(0, 3), help="Only hands won by this seat.")
@click.option(
    "--outcome",
    metavar="KIND",
    help="Only hands with this outcome: hu, huangzhuang, tianhu_auto, tianhu.",
)
@click.option("--huxi-min", type=int, metavar="N", help="Only hands with 胡息 ≥ N.")
@click.option("--huxi-max", type=int, metavar="N", help="Only hands with 胡息 ≤ N.")
@click.option(
    "--mingtang", metavar="NAME", help="Only hands with this 名堂 (pinyin id or name, e.g. 红胡)."
)
@click.option(
    "--limit",
    type=BoundedInt(1, MAX_LIMIT),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="Show at most this many hands (the first ones in hand order).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object: run, hands, more (--format json)."
)
@output_options
def hands(
    run: str,
    data: Path,
    winner: int | None,
    outcome: str | None,
    huxi_min: int | None,
    huxi_max: int | None,
    mingtang: str | None,
    limit: int,
    as_json: bool,
    fmt: str | None,
    output: str | None,
    force: bool,
) -> None:
    """List the hands of run RUN that match every filter given, in hand order: id, outcome,
    winner, 胡息, 番, score, 名堂 and number of events. The ids are those `paohuzi replay RUN
    ID` and `paohuzi export RUN ID` take.

    --format csv or parquet (or -o FILE.csv / FILE.parquet) writes the table's rows, one
    typed column each (-o: as paohuzi export writes a file: --force to overwrite one).

    \b
    paohuzi hands my-run --winner 1 --huxi-min 20
    paohuzi hands my-run --mingtang honghu --limit 10
    paohuzi hands my-run --outcome huangzhuang --json
    paohuzi hands my-run --limit 100000 -o my-run-hands.parquet
    """
    from engine.errors import PaohuziError
    from replay.store import manage, open_store

    fmt = choose_format(fmt, as_json, output)
    target = plan(fmt, output, force)
    try:
        flt = manage.hand_filter(winner, outcome, huxi_min, huxi_max, mingtang)
        rows, more = manage.query_hands(open_store(data), run, flt, limit)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    rows = [manage.named_hand(r) for r in rows]
    if fmt == "json":
        doc = json.dumps({"run": run, "hands": rows, "more": more}, ensure_ascii=False)
        emit(target, printable(doc, json=True) + "\n", f"run {run}'s hands")
        return
    if not rows and fmt == "table":
        click.echo(f"run {run}: no hands match", err=True)
        return
    values = [
        [r["hand_id"], r["outcome"], r["winner"], r["source"], r["huxi"], r["fan"], r["score"],
         " ".join(r["mingtang"]) or None, r["n_events"]]
        for r in rows
    ]  # fmt: skip
    if fmt == "table":
        body = [[_text("-" if v is None else v) for v in r] for r in values]
        emit(target, headed([c.name for c in HAND_COLUMNS], body) + "\n", f"run {run}'s hands")
    else:
        emit(target, encode(fmt, HAND_COLUMNS, values), f"{len(rows):,} hands of run {run}")
    if not rows:
        click.echo(f"run {run}: no hands match", err=True)
    if more:
        click.echo(f"(the first {limit} matching hands; raise --limit for more)", err=True)


#: The columns of ``paohuzi hands``, as its table shows them.
HAND_COLUMNS = [
    Column("hand", "int64"),
    Column("outcome"),
    Column("winner", "int64"),
    Column("source"),
    Column("huxi", "int64"),
    Column("fan", "int64"),
    Column("score", "int64"),
    Column("mingtang"),
    Column("events", "int64"),
]


@click.command("rm", short_help="Remove a run from the store.")
@click.argument("run")
@data_option
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def rm(run: str, data: Path, yes: bool) -> None:
    """Remove run RUN (its folder: manifest and shards) and rebuild the catalog. Asks first
    unless --yes; refuses while the run is being written (simulate or import holds its
    lock). An interrupted removal of RUN (runs/.removing-RUN-PID left by a killed rm) is
    finished, never rolled back; a run folder that is a symlink is removed as a link, its
    target kept. A folder whose name rm refuses: see paohuzi doctor.

    \b
    paohuzi rm my-run
    paohuzi rm my-run --yes
    """
    from engine.errors import PaohuziError
    from replay.store import manage, open_store
    from replay.store.fsinfo import link_target

    try:
        st = open_store(data)
        plan = manage.plan_removal(st.root, run)
        summary = None
        if plan.exists and not plan.linked:
            summary = next((r for r in manage.run_summaries(st) if r["run"] == run), None)
        if not yes:
            if plan.linked:
                question = f"remove run {run} (a link to {link_target(plan.path)})?"
            elif plan.exists:
                what = f"{_text(summary and summary['hands'])} hands" if summary else "no manifest"
                size = _size(summary["bytes"]) if summary else "?"
                question = f"remove run {run} ({what}, {size})?"
            else:
                question = f"finish the interrupted removal of run {run}?"
            try:
                ok = click.confirm(question, default=False)
            except click.Abort:
                raise input_error(
                    f"run {run} not removed: no confirmation (give --yes to remove it)"
                ) from None
            if not ok:
                click.echo(f"run {run} kept", err=True)
                raise SystemExit(1)
        path = manage.remove_run(st.root, run)
    except PaohuziError as e:
        raise input_error(_name_hint(str(e), data, run)) from None
    for gone in plan.interrupted:
        click.echo(f"finished the interrupted removal of run {run} ({gone})")
    if plan.linked:
        click.echo(f"removed run {run} (the link {path}; its target is kept)")
    elif plan.exists:
        click.echo(f"removed run {run} ({path})")


def _name_hint(msg: str, data: Path, run: str) -> str:
    """A refused run name that a folder of the store has: say who removes it."""
    import os

    if not msg.startswith("bad run name") or os.sep in run or "\x00" in run:
        return msg  # (a name with a / is no entry of runs/)
    if os.path.lexists(os.path.join(data, "runs", f"run={run}")):
        return f"{msg}; paohuzi doctor --fix removes the folder run={run}"
    return msg
