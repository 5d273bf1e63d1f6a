"""``paohuzi play``: a hand against the bots in the terminal, recorded as it is played
(:mod:`replay.play.table`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.errors import input_error
from replay.play.table import DEFAULT_OPPONENTS
from replay.store.layout import data_option


class _Stopped(Exception):
    """End of input or Ctrl-C at a decision: the hand so far is on disk."""


def _read_line(prompt: str) -> str:
    click.echo(prompt, nl=False)
    line = sys.stdin.readline()
    if not line:
        raise _Stopped
    if not sys.stdin.isatty():
        click.echo(line.rstrip("\n"))  # a script's move shown as typed
    return line.strip()


def _options(legal: Sequence[int], per_line: int = 6) -> list[str]:
    """The options numbered from 1, a few to a line."""
    from engine.actions import action_str

    cells = [f"{i:>2}. {action_str(a):<9}" for i, a in enumerate(legal, 1)]
    return [
        "  " + "".join(cells[i : i + per_line]).rstrip() for i in range(0, len(cells), per_line)
    ]


def choose(text: str, legal: Sequence[int]) -> tuple[int | None, str | None]:
    """The action a line names: an option's number (from 1) or its notation
    (:func:`replay.replayer.replay_file.parse_action_text`); else (None, why)."""
    from engine.errors import InvalidNotation
    from replay.replayer.replay_file import parse_action_text

    if not text:
        return None, "type an option's number or its notation"
    if text.isdigit():
        k = int(text)
        if 1 <= k <= len(legal):
            return legal[k - 1], None
        return None, f"no option {k}: choose 1–{len(legal)}"
    try:
        action = parse_action_text(text)
    except InvalidNotation as e:
        return None, f"not a move: {e}"
    if action not in legal:
        return None, f"{text!r} is not one of your options now"
    return action, None


class Screen:
    """What the terminal shows: the person's view at each decision, the bots' moves one by
    one (``speed`` seconds apart), the end of the hand."""

    def __init__(self, color: bool, speed: float) -> None:
        self.color, self.speed = color, speed

    def show(self, state: Any, seat: int | None) -> None:
        from replay.replayer.render_text import render_text, to_terminal
        from replay.replayer.views import state_view

        click.echo(to_terminal(render_text(state_view(state, seat)), self.color))

    def ask(self, state: Any, seat: int, legal: Sequence[int]) -> int:
        click.echo("")
        self.show(state, seat)
        click.echo("your options:")
        click.echo("\n".join(_options(legal)))
        while True:
            action, why = choose(_read_line("your move> "), legal)
            if action is not None:
                return action
            click.echo(f"  {why}; your options:")
            click.echo("\n".join(_options(legal)))

    def move(self, seat: int, seen: Any, forced: bool, names: Sequence[str], human: int) -> None:
        """One move as the person sees it (:func:`replay.play.table.move_line`; a draw or a
        card nobody takes: :func:`event_line`)."""
        from replay.play.table import move_line

        if seen.get("event"):
            click.echo(event_line(seat, seen, names, human))
        else:
            click.echo(move_line(seat, seen, forced, names, human))
        if seat != human and self.speed > 0:
            time.sleep(self.speed)


def event_line(seat: int, seen: dict[str, Any], seats: Sequence[str], human: int) -> str:
    """A move of the engine's as the person sees it (:class:`replay.replayer.views.
    PublicMoves`): ``seat 2 (heuristic) draws 五 from the stock (17 left)``, ``you draw a
    card … (face down)``, ``nobody takes 五: it goes to seat 2's right``."""
    you = seat == human
    if seen["event"] == "draw":
        who = "you draw" if you else f"seat {seat} ({seats[seat]}) draws"
        card = seen["card"] or "a card, face down,"
        return f"{who} {card} from the stock ({seen['stock']} left)"
    whose = "your" if you else f"seat {seat}'s"
    return f"nobody takes {seen['card']}: it goes to {whose} right"


@click.command(short_help="Play a hand against the bots, recorded as it is played.")
@data_option
@click.option("--rules", "preset", default="hunan", show_default=True, help="Rule preset.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Rule override.")
@click.option("--seat", type=int, default=0, show_default=True, help="Your seat (0 deals).")
@click.option(
    "--opponents",
    default=DEFAULT_OPPONENTS,
    show_default=True,
    help="The bots, in seat order after yours (one name: every bot).",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    default=None,
    help="The deal's seed, 0 … 2^64-1 (default: a new one).",
)
@click.option(
    "--daily",
    is_flag=True,
    help="The deal of the day (UTC): the same for everyone who plays in this store that day,"
    " from the store's secret; its commitment is shown before the hand, its seed after.",
)
@click.option("--run", default="play", show_default=True, help="The run the hand goes into.")
@click.option("--name", default="player", show_default=True, help="Your name in the log.")
@click.option(
    "--resume",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[TABLE]",
    help="Go on with the table TABLE (as doctor lists it), or without TABLE the latest"
    " unfinished one that can be read (the broken ones are skipped and named).",
)
@click.option(
    "--discard",
    default=None,
    metavar="TABLE",
    help="Remove the unfinished table TABLE (its hand is lost), then exit.",
)
@click.option(
    "--results",
    is_flag=True,
    help="With --daily: the recorded results of the deal of the day in RUN, then exit.",
)
@click.option(
    "--speed",
    type=float,
    default=None,
    help="Seconds between the bots' moves (default 0.6 in a terminal, 0 otherwise).",
)
@click.option(
    "--compare",
    default=None,
    metavar="BOTS",
    help="After the hand, the same deal played by each of these bots in your seat (default"
    " heuristic, heuristic@tuned-PRESET, search@64; 'none': not).",
)
@click.option(
    "--review/--no-review",
    default=True,
    show_default=True,
    help="After the hand, your decisions valued (paohuzi review's default budget).",
)
@click.option("--color/--no-color", default=None, help="Red cards in red (default: a terminal).")
def play(
    data: Path,
    resume: str | None,
    discard: str | None,
    results: bool,
    speed: float | None,
    compare: str | None,
    review: bool,
    color: bool | None,
    **deal: Any,
) -> None:
    """Play a hand of 跑胡子 against the bots. Your moves: an option's number or its
    notation, one per line (from a script too). Every decision is on disk as you make it:
    end of input or Ctrl-C stops (exit 130) and `--resume` goes on (`--resume TABLE`: that
    table; `--discard TABLE` removes one). The finished hand is verified and stored in RUN
    (default `play`), for stats, replay, review and export. The bots are built-in policies
    (a table's file names them, and a file never chooses code: no module:Class)."""
    from engine.errors import PaohuziError
    from paohuzi.cli.replay import use_color
    from replay.play.table import (
        Journal,
        bots_to_compare,
        check_play_folder,
        check_run,
        new_deal,
        resumable,
    )  # fmt: skip

    if results:
        _results(data, deal)
        return
    if discard is not None:
        _discard(data, discard, resume)
        return
    screen = Screen(
        use_color(color), speed if speed is not None else (0.6 if sys.stdin.isatty() else 0.0)
    )
    try:
        check_play_folder(data)
        if resume is not None:
            journal, skipped = resumable(data, resume or None)
            for b in skipped:
                click.echo(
                    f"Warning: skipped the table {b.table}, which cannot be resumed ({b.why});"
                    f" paohuzi play --discard {b.table} removes it",
                    err=True,
                )
            check_run(data, journal.deal)
            bots = bots_to_compare(compare, journal.deal.preset)
            click.echo(f"resuming table {journal.table} ({len(journal.decisions)} decision(s))")
        else:  # every bot loaded before anything is written
            bots = bots_to_compare(compare, deal["preset"])
            new = new_deal(**deal, root=data)
            check_run(data, new)
            journal = Journal.create(data, new)
    except (PaohuziError, ValueError) as e:
        raise input_error(e) from None
    try:
        final = _play(journal, screen)
    except _Stopped:
        again = f"paohuzi play --resume {journal.table} --data {data}"
        click.echo(f"\nstopped; the hand is saved: {again}")
        sys.exit(130)
    except PaohuziError as e:  # a journal that does not fit; a bot that cannot be loaded
        raise input_error(
            f"{e} (the table {journal.table} is kept: paohuzi play --discard {journal.table}"
            " removes it)"
        ) from None
    click.echo("")
    screen.show(final, None)
    click.echo(journal.deal.revealed())
    from replay.play.table import record

    try:
        result = record(data, journal, final)
    except (PaohuziError, OSError) as e:
        raise input_error(f"{e} (the table {journal.path} is kept)") from None
    who = journal.deal
    click.echo(
        f"stored as run {result.run} hand {result.hand_ids[0]} ({who.player}, seat {who.human})"
    )
    try:
        if bots:
            _compare(data, result, who, final, bots)
        if review:
            _review(data, str(result.run), result.hand_ids[0], who.human)
    except (PaohuziError, OSError) as e:
        raise input_error(f"after the hand: {e} (the hand is stored)") from None
    except KeyboardInterrupt:
        click.echo("\nstopped (the hand is stored)", err=True)
        sys.exit(130)


def _discard(data: Path, name: str, resume: str | None) -> None:
    """``--discard TABLE``: that table's file removed, its hand lost."""
    from engine.errors import PaohuziError
    from replay.play.table import discard

    if resume is not None:
        raise input_error("--discard and --resume: choose one")
    try:
        path = discard(data, name)
    except PaohuziError as e:
        raise input_error(e) from None
    click.echo(f"discarded table {path.stem} ({path})")


def _results(data: Path, deal: dict[str, Any]) -> None:
    """``--daily --results``: every recorded hand of today's deal in the run (none when
    the store never dealt a deal of the day: its secret is not made for this)."""
    from engine.deck import shuffle_deck
    from engine.errors import PaohuziError
    from replay.play.table import daily_seed, results, today

    if not deal["daily"]:
        raise input_error("--results lists the results of the deal of the day: add --daily")
    day = today()
    try:
        seed = daily_seed(data, day, create=False)
    except PaohuziError as e:
        raise input_error(e) from None
    got = [] if seed is None else results(data, deal["run"], shuffle_deck(seed))
    if not got:
        click.echo(f"no hand of the deal of {day.isoformat()} in run {deal['run']} yet")
        return
    click.echo(f"the deal of {day.isoformat()} in run {deal['run']}:")
    for r in sorted(got, key=lambda r: (-r.score, r.hand_id)):
        click.echo(f"  {r.player:<20} seat {r.seat}  {r.score:+d}   (hand {r.hand_id})")


def _compare(data: Path, result: Any, deal: Any, final: Any, bots: list[str]) -> None:
    """The person's score beside each bot's on the same deal, kept with the hand."""
    from replay.play.table import compare

    got = compare(data, str(result.run), result.hand_ids[0], deal, bots)
    click.echo(got.line(int(final.outcome.deltas[deal.human])))


def _play(journal: Any, screen: Screen) -> Any:
    """The hand played on from the journal, the moves shown as the person sees them; the
    final state (a hand won at the deal has no step)."""
    from replay.play.table import play
    from replay.replayer.views import PublicMoves

    deal = journal.deal
    click.echo(
        f"跑胡子 {deal.preset} · {deal.seed_text} · you are seat {deal.human} · "
        + " · ".join(f"seat {i}: {s}" for i, s in enumerate(deal.seats) if i != deal.human)
    )
    state = deal.initial_state()
    public = PublicMoves(deal.human)  # the draws and untaken cards between the decisions
    public.watch(state)
    last = journal.decisions[-1][0] if journal.decisions else -1
    try:
        for _, _, shown in play(journal, screen.ask, state):
            events = public.add(state)
            if len(state.history) - 1 < last:  # a resumed hand's past
                events = []
            for seat, what, forced in [*shown, *events]:
                screen.move(seat, what, forced, deal.seats, deal.human)
    except KeyboardInterrupt:
        raise _Stopped from None
    return state


#: The costliest decisions shown after a hand.
SHOWN = 3


def _review(data: Path, run: str, hand: int, seat: int) -> None:
    """The person's decisions valued by the review at its default budget (stored, so
    ``paohuzi review RUN HAND --seat S`` shows them again): the costliest few with every
    option's value, then the accuracy."""
    from paohuzi.cli.review import render_decision, render_summary
    from replay.play.table import review_played
    from replay.review.defaults import DEFAULT_ROLLOUT_POLICY, DEFAULT_ROLLOUTS

    result = review_played(data, run, hand, seat)
    costly = result.summary()["seats"][seat]["costliest"][:SHOWN]
    click.echo(
        f"\nyour decisions, reviewed ({DEFAULT_ROLLOUTS} rollouts per option by"
        f" {DEFAULT_ROLLOUT_POLICY}; every one: paohuzi review {run} {hand} --seat {seat}):"
    )
    for d in result.decisions:
        if d.step in costly:
            click.echo("")
            click.echo("\n".join(render_decision(d)))
    click.echo("")
    click.echo(render_summary(result)[-1])
