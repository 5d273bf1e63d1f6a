"""``paohuzi stats``: a terminal summary of recorded runs (or ``--json`` for machines).

The numbers come from :mod:`replay.analysis.stats`; this module only renders them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from engine.errors import printable
from paohuzi.cli.tabular import choose_format, emit, encode, output_options, plan
from replay.store.layout import data_option

if TYPE_CHECKING:
    from replay.store.runs import Store


@click.command(short_help="Win, 荒庄, seat, dealer, policy, 胡息 and 名堂 statistics of runs.")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@data_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--events", "events", is_flag=True,
              help="What players do, from the event log: actions, declines, forced share,"
              " options per choice, 臭胡/忍碰/八块, hand length, win timing.")  # fmt: skip
@output_options
def stats(
    runs: tuple[str, ...],
    data: Path,
    as_json: bool,
    events: bool,
    fmt: str | None,
    output: str | None,
    force: bool,
) -> None:
    """Summarise recorded runs (all of them without RUN): hands, 胡 and 荒庄 rates, win rate
    by seat, dealer and policy (paired over duplicate deals), winning 胡息 / 等 / 番,
    名堂 frequencies, mean score per seat, and the 3提/5坎 天胡 rate beside its exact
    probability. Intervals are 95 %.

    --format csv or parquet (or -o FILE.csv / FILE.parquet) writes the rows the tables show,
    one per run, section and row (count, of, rate and its interval, mean and its interval,
    quantiles, exact); -o writes a file as paohuzi export does (--force to overwrite one).

    \b
    paohuzi stats
    paohuzi stats my-run other-run --data /srv/paohuzi
    paohuzi stats my-run --json | jq .runs[0].outcomes
    paohuzi stats my-run --events
    paohuzi stats -o stats.csv
    """
    from engine.errors import PaohuziError
    from paohuzi.cli.errors import InputError
    from replay.store.runs import open_store

    fmt = choose_format(fmt, as_json, output)
    if events and fmt in ("csv", "parquet"):
        raise InputError(f"--events is a table or JSON: not --format {fmt}")
    target = plan(fmt, output, force)
    if events:
        _events(data, runs, fmt == "json", target)
        return
    try:
        data_out, what = _figures(open_store(data), runs, fmt)
    except (PaohuziError, OSError) as e:
        raise InputError(_one_line(e)) from None
    except Exception as e:  # DuckDB's, when the figures were computed (not imported before)
        if not _duckdb_error(e):
            raise
        raise InputError(_one_line(e)) from None
    emit(target, data_out, what)


def _duckdb_error(e: BaseException) -> bool:
    import sys

    duckdb = sys.modules.get("duckdb")
    return duckdb is not None and isinstance(e, duckdb.Error)


def _figures(store: Store, runs: tuple[str, ...], fmt: str) -> tuple[str | bytes, str]:
    """What ``stats`` writes in ``fmt`` for ``runs``, and what it is called. The store is
    checked first (its scan); a table or JSON answer given for the same generation of the
    store, the same code and the same arguments is given again (its warnings too) without
    computing the figures again (:mod:`replay.store.answer_memo`)."""
    from replay.store import answer_memo
    from replay.store.layout import StoreError

    if not store.root.is_dir():
        raise StoreError(f"no store at {store.root} (run 'paohuzi simulate' first)")
    state = store.scan(manifests=False)  # the check: never skipped
    summaries = _use_summaries()
    key = None
    if fmt in ("json", "table"):
        key = answer_memo.answer_key(state, "stats", [fmt, list(runs), summaries])
        kept = answer_memo.recall(store.root, key)
        if kept is not None:
            for w in kept.warnings:
                _warn(w)
            return kept.text, kept.label
    from paohuzi.cli.stats_render import STATS_COLUMNS, render, rows
    from replay.analysis.stats import run_stats, stats_payload

    warnings: list[str] = []

    def warn(text: str) -> None:
        warnings.append(text)
        _warn(text)

    result = run_stats(store, runs, on_skip=warn, summaries=summaries, state=state)
    what = f"the statistics of {len(result)} run(s)"
    if fmt == "json":
        text = _json(stats_payload(result)) + "\n"
    elif fmt == "table":
        text = printable("\n\n".join(render(r) for r in result), "\n") + "\n"
    else:
        return encode(fmt, STATS_COLUMNS, [row for r in result for row in rows(r)]), what
    if key is not None:
        answer_memo.keep(store.root, key, answer_memo.Answer(text, tuple(warnings), what))
    return text, what


def _use_summaries() -> bool:
    from replay.analysis.stats import use_summaries

    return use_summaries()


def _events(data: Path, runs: tuple[str, ...], as_json: bool, target: Any) -> None:
    import duckdb

    from engine.errors import PaohuziError
    from paohuzi.cli.errors import InputError
    from paohuzi.cli.stats_events import render as render_events
    from replay.analysis.event_stats import event_stats
    from replay.store.runs import open_store

    try:
        result = event_stats(open_store(data), runs, on_skip=_warn)
    except (PaohuziError, duckdb.Error, OSError) as e:
        raise InputError(_one_line(e)) from None
    what = f"the event statistics of {len(result)} run(s)"
    if as_json:
        emit(target, _json({"runs": [r.to_dict() for r in result]}) + "\n", what)
        return
    emit(target, printable("\n\n".join(render_events(r) for r in result), "\n") + "\n", what)


def _json(payload: object) -> str:
    """The JSON stats print: C1 controls and bidi overrides of stored names escaped too
    (``json`` writes only C0 ones as escapes with ``ensure_ascii=False``)."""
    text = json.dumps(payload, ensure_ascii=False, indent=1, allow_nan=False)
    return printable(text, "\n", json=True)


def _warn(text: str) -> None:
    click.echo(f"Warning: {printable(text)}", err=True)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__
