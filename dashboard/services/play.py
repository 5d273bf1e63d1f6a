"""The Play page's logic, apart from Streamlit: whether the page may write, the deal from its
form, the hand played as far as it goes without the person, the person's choice journalled,
and what comes after the hand (recorded, compared on the same deal, reviewed). The play itself
is :mod:`replay.play.table`, the same as ``paohuzi play``'s."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.play.table import PLAY_ENV, BotMemo, Journal, Turn, advance, move_line


def enabled() -> bool:
    """Whether the dashboard was started to let people play (``paohuzi dashboard --play``)."""
    return os.environ.get(PLAY_ENV, "") == "1"


def option_labels(legal: Sequence[int]) -> list[str]:
    """The person's options as the terminal numbers them: ``1. 打 一``, ``2. 吃 [一二三]``…"""
    from engine.actions import action_str

    return [f"{i}. {action_str(a)}" for i, a in enumerate(legal, 1)]


def move_lines(
    since: Sequence[tuple[int, dict[str, Any], bool]], seats: Sequence[str], human: int
) -> list[str]:
    """The moves since the person's last decision as the person sees them, one line each,
    as the terminal shows them (:func:`replay.play.table.move_line`)."""
    return [move_line(seat, seen, forced, seats, human) for seat, seen, forced in since]


def choose(path: Path, seen: int, action: int, memo: BotMemo | None = None) -> str | None:
    """Journal the person's ``action`` at the table ``path``, if the table still holds the
    ``seen`` decisions the page showed the options after: None when it is taken, else why
    not, in one line (a second click on a stale page; the table played on or finished in
    another tab or terminal; a table that cannot be read or written)."""
    from engine.errors import PaohuziError

    try:
        journal = Journal.open(path)
        if len(journal.decisions) != seen:
            return "That choice came from an older view of the table: ignored."
        now = advance(journal, memo)
        if now.over or action not in now.legal:
            return "That choice is no longer one of your options: ignored."
        journal.append(len(now.state.history), action)  # refused if the table moved on
    except (PaohuziError, OSError) as e:
        return str(e)
    return None


@dataclass(frozen=True)
class Finished:
    """A played hand after it is stored: where, the person's seat and score, the comparison
    (None when no bot was asked or it failed), the review of the person's decisions (None
    when it failed), what went wrong after the hand was stored, if anything, and the deal's
    seed as shown once the hand is over (a deal of the day's with how to check it)."""

    run: str
    hand: int
    seat: int
    score: int
    comparison: Any
    review: Any
    problem: str | None = None
    revealed: str = ""


def finish(root: Path, journal: Journal, final: Turn, bots: Sequence[str]) -> Finished:
    """Record the finished hand (verified, into its run under the run's lock; a
    :class:`~replay.play.table.TableError` if it was not stored, or was recorded meanwhile
    from another tab), then compare it on the same deal with ``bots`` and review the person's
    decisions, both kept in the run; a failure after the hand is stored is the result's
    ``problem``, not an error: the hand is stored."""
    from engine.errors import PaohuziError
    from replay.play.table import compare, record, review_played

    deal = journal.deal
    result = record(root, journal, final.state)
    run, hand = str(result.run), int(result.hand_ids[0])
    assert final.state.outcome is not None
    score = int(final.state.outcome.deltas[deal.human])
    compared = review = problem = None
    try:
        compared = compare(root, run, hand, deal, bots) if bots else None
        review = review_played(root, run, hand, deal.human)
    except (PaohuziError, OSError) as e:
        problem = f"the hand is stored, but after it: {e}"
    return Finished(run, hand, deal.human, score, compared, review, problem, deal.revealed())
