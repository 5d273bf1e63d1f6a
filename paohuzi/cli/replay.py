"""``paohuzi replay``: the table of a recorded hand (or a replay file) at any step."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from paohuzi.cli.errors import input_error
from paohuzi.cli.options import max_bytes_option
from replay.store.layout import data_option

KEYS_HELP = (
    "keys: n/space/→ next · p/← previous · g go to step · 0-3 next decision of that seat"
    " · h start · e end · v switch view · q quit"
)


def use_color(flag: bool | None) -> bool:
    """``--color`` / ``--no-color``, else on for a terminal unless ``NO_COLOR`` is set."""
    if flag is not None:
        return flag
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@click.command(short_help="Show a recorded hand at any step (or step through it).")
@click.argument("run", required=False)
@click.argument("hand", type=int, required=False)
@data_option
@click.option(
    "--file",
    "file_",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Replay a replay file (docs/REPLAY_FILE.md) instead of RUN HAND.",
)
@click.option(
    "--step",
    "-k",
    type=int,
    default=None,
    help="Decisions applied (0 = right after the deal; default: the end, or 0 with"
    " --interactive; negative counts from the end).",
)
@click.option("--seat", "-s", type=int, default=None, help="Show only what this seat sees.")
@click.option("--all", "all_", is_flag=True, help="Show every hand (the default).")
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: the state as one JSON object (replay.replayer.views.state_view).",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Red cards in red (default: on for a terminal, off with NO_COLOR).",
)
@click.option("--interactive", "-i", is_flag=True, help="Step through the hand with keys.")
@max_bytes_option
def replay(
    run: str | None,
    hand: int | None,
    data: Path,
    file_: Path | None,
    step: int | None,
    seat: int | None,
    all_: bool,
    fmt: str,
    color: bool | None,
    interactive: bool,
    max_bytes: int,
) -> None:
    """Show hand HAND of run RUN at step K: each seat's hand (hidden ones only with --all or
    for --seat S), table melds with their 胡息, cards to the right, discards, stock count,
    the 亮张, the current decision with its options and what was chosen (forced ones
    marked), and at the end the winning 门子 with 胡息, 等, 名堂, 番 and the settlement.

    \b
    paohuzi replay my-run 17 --step 12
    paohuzi replay my-run 17 --seat 1 --interactive
    paohuzi replay my-run 17 --step 0 --format json
    paohuzi replay --file docs/examples/honghu-zimo.phz -i
    """
    from engine.errors import PaohuziError
    from replay import store
    from replay.replayer.hand import load_hand, replayer_at

    if seat is not None and all_:
        raise input_error("give either --seat S or --all, not both")
    if interactive and fmt == "json":
        raise input_error("--interactive shows text; leave out --format json")
    try:
        if file_ is not None:
            if run is not None or hand is not None:
                raise input_error("give either RUN HAND or --file FILE, not both")
            from replay.replayer import replay_file  # its checks: numpy, pyarrow, the pool

            rf = replay_file.read_replay_file(file_, max_bytes)
            log = rf.log
        else:
            if run is None or hand is None:
                raise input_error(
                    "missing RUN and HAND (or --file FILE) (see 'paohuzi replay --help')"
                )
            if hand < 0:
                raise input_error(f"bad hand id {hand}")
            log = load_hand(store.open_store(data), run, hand)
        rp = replayer_at(log, step if step is not None else (0 if interactive else None), seat)
    except PaohuziError as e:
        raise input_error(str(e)) from None
    colored = use_color(color) and fmt == "text"
    if interactive:
        try:
            _interactive(rp, seat, colored)
        except PaohuziError as e:
            raise input_error(str(e)) from None
        return
    if fmt == "json":
        from replay.replayer.views import state_view

        click.echo(json.dumps(state_view(rp.state, seat, log=log), ensure_ascii=False, indent=1))
        return
    click.echo(_frame(rp, seat, colored), color=colored)


def _frame(rp: Any, seat: int | None, colored: bool) -> str:
    from replay.replayer.render_text import render_text, to_terminal
    from replay.replayer.views import state_view

    return to_terminal(render_text(state_view(rp.state, seat, log=rp.log)), colored)


def _interactive(rp: Any, seat: int | None, colored: bool) -> None:
    from engine.errors import PaohuziError

    tty = sys.stdin.isatty() and sys.stdout.isatty()
    message = ""
    view_seat = seat
    while True:
        if tty:
            click.clear()
        click.echo(_frame(rp, view_seat, colored), color=colored)
        click.echo(("\n" + message if message else "") + "\n" + KEYS_HELP)
        message = ""
        try:
            key = click.getchar()
        except (EOFError, KeyboardInterrupt):
            return
        except OSError:  # no terminal to read keys from (click opens /dev/tty)
            raise PaohuziError(
                "--interactive needs a terminal to read keys from; use --step N or --all"
            ) from None
        if not tty:
            click.echo(f"> {key!r}")
        if key in ("q", "Q", "\x03", "\x04", "\x1b", ""):
            return
        if key in ("n", " ", "\r", "\n", "\x1b[C", "j"):
            if rp.step >= rp.n_steps:
                message = "at the end of the hand"
            rp.forward()
        elif key in ("p", "b", "\x1b[D", "k"):
            if rp.step == 0:
                message = "at the start of the hand"
            rp.back()
        elif key in ("h", "\x1b[H"):
            rp.seek(0)
        elif key in ("e", "\x1b[F"):
            rp.seek(None)
        elif key == "g":
            try:
                answer = click.prompt(
                    f"go to step (0 … {rp.n_steps}; empty or q: back)",
                    default="",
                    show_default=False,
                )
            except (click.Abort, EOFError):  # Ctrl-C or end of input: end the session
                return
            answer = answer.strip()
            if answer in ("", "q", "Q"):
                continue
            try:
                rp.seek(int(answer))
            except PaohuziError as e:  # a bad step is a message, not the end of the session
                message = str(e)
            except ValueError:
                message = f"not a step: {answer!r}"
        elif key.isdigit():
            s = int(key)
            if s >= rp.log.rules.players:
                message = f"no seat {s}"
                continue
            k = rp.next_decision_of(s)
            if k is None:
                message = f"seat {s} has no more decisions"
            else:
                rp.seek(k)
        elif key == "v":
            order = [None, *range(rp.log.rules.players)]
            view_seat = order[(order.index(view_seat) + 1) % len(order)]
        else:
            message = f"unknown key {key!r}"
