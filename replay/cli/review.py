"""``paohuzi review``: what each decision of a recorded hand was worth (replay.review.hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from replay.store.layout import data_option

_MAX_SEED = 2**64 - 1


def _input_error(msg: str) -> click.ClickException:
    from replay.cli.main import InputError

    text = " ".join(str(msg).split())
    return InputError(text if len(text) <= 400 else text[:397] + "...")


def _seats(value: str, players: int) -> list[int]:
    if value.strip().lower() == "all":
        return list(range(players))
    try:
        seat = int(value)
    except ValueError:
        raise _input_error(f"--seat {value!r}: a seat number or 'all'") from None
    if not 0 <= seat < players:
        raise _input_error(f"seat {seat} out of range: seats are 0 … {players - 1}")
    return [seat]


@click.command(short_help="Value every decision of a recorded hand (determinized rollouts).")
@click.argument("run")
@click.argument("hand", type=click.IntRange(min=0))
@data_option
@click.option("--seat", "-s", "seat", default="all", show_default=True,
              help="The seat to review, or 'all'.")  # fmt: skip
@click.option(
    "--rollouts",
    "-N",
    type=click.IntRange(1, 4096),
    default=256,
    show_default=True,
    help="Determinizations per decision (each option played out from every one).",
)
@click.option(
    "--rollout-policy",
    type=click.Choice(["random", "greedy", "heuristic"]),
    default="heuristic",
    show_default=True,
    help="Who plays the rollouts (every seat).",
)
@click.option("--seed", type=click.IntRange(0, _MAX_SEED), default=0, show_default=True,
              help="Seed of the rollouts: the same seed, the same review.")  # fmt: skip
@click.option(
    "--engine",
    type=click.Choice(["auto", "fast", "reference"]),
    default="auto",
    show_default=True,
    help="'fast' (and auto): the compiled rollouts; 'reference': the Python engine (the same"
    " numbers, about 30× slower).",
)
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: one JSON object (docs/REVIEW.md).")  # fmt: skip
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def review(
    run: str,
    hand: int,
    data: Path,
    seat: str,
    rollouts: int,
    rollout_policy: str,
    seed: int,
    engine: str,
    fmt: str,
    quiet: bool,
) -> None:
    """Review hand HAND of run RUN: for each decision of the reviewed seats with two or more
    options, every option's win chance and mean score delta (95 % intervals) from
    determinized rollouts that see only what the deciding seat saw; the option played, the
    best one, what the choice lost, and its class (inaccuracy, mistake, blunder: 5, 10, 15
    points of winning chance given up); then per seat the agreement with the best option,
    the accuracy and the costliest decisions. Ctrl-C stops it.

    \b
    paohuzi review my-run 17
    paohuzi review my-run 17 --seat 0 --rollouts 1024 --format json
    """
    from engine.errors import PaohuziError
    from replay import store
    from replay.cli.replay import _load
    from replay.cli.simulate import Progress
    from replay.review.hand import review_hand

    try:
        log = _load(store.open_store(data), run, hand)
        seats = _seats(seat, log.rules.players)
        with Progress(f"review {log.where}", not quiet, "review", "decisions") as bar:
            result = review_hand(log, seats, rollouts, rollout_policy, seed, engine, bar)
    except PaohuziError as e:
        raise _input_error(str(e)) from None
    except KeyboardInterrupt:
        click.echo("review interrupted: nothing printed", err=True)
        raise SystemExit(130) from None
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
        return
    click.echo(render(result))


def _pct(e: Any) -> str:
    return f"{100 * e.mean:5.1f} ±{100 * (e.high - e.mean):4.1f}"


def _score(e: Any) -> str:
    return f"{e.mean:+6.2f} ±{e.high - e.mean:4.2f}"


def render(result: Any) -> str:
    """The review as text: one block per decision, then the summary."""
    from engine.actions import action_str
    from replay.cli.runs import _table

    lines = [
        f"review of {result.where}: seats {', '.join(map(str, result.seats))},"
        f" {result.rollouts} rollouts per decision by {result.rollout_policy}, seed"
        f" {result.seed} ({result.engine} engine); win % and score ± a 95 % interval"
    ]
    for d in result.decisions:
        mark = f"  {d.kind.upper()}" if d.kind else ""
        lines.append(
            f"\nstep {d.step} · seat {d.seat} · {d.phase}: played {action_str(d.played)},"
            f" best {action_str(d.best)}; lost {d.win_loss:.1f} win points,"
            f" {d.score_loss:.2f} score{mark}"
        )
        rows = []
        for v in sorted(d.options, key=lambda v: (-v.delta.mean, v.action)):
            tag = " ".join(
                t
                for t, on in (("played", v.action == d.played), ("best", v.action == d.best))
                if on
            )
            rows.append([action_str(v.action), _pct(v.win), _score(v.delta), tag])
        table = _table(["  option", "win %", "score", ""], [["  " + r[0], *r[1:]] for r in rows])
        lines.append(table)
    summary = result.summary()
    lines.append("")
    for key, s in [
        ("all", summary["all"]),
        *((f"seat {k}", v) for k, v in summary["seats"].items()),
    ]:
        if not s["decisions"]:
            lines.append(f"{key}: no decision with a choice")
            continue
        costly = ", ".join(f"step {k}" for k in s["costliest"]) or "none"
        lines.append(
            f"{key}: {s['decisions']} decisions, {100 * s['agreement']:.0f}% the best option,"
            f" accuracy {s['accuracy']:.1f}; {s['blunder']} blunders, {s['mistake']} mistakes,"
            f" {s['inaccuracy']} inaccuracies; costliest: {costly}"
        )
    return "\n".join(lines)
