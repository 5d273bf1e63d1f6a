"""The Replay page's URL parameters (a drill-down link, a bookmark, a shared link), checked
against the store: a link that names no hand of the store is a message, never another hand
shown in its place. No streamlit.

``run`` (a run of the store), ``hand`` (a hand id of that run, 0 … hands − 1), ``step``
(a decision count, checked against the hand once it is loaded: :func:`check_step`) or
``at=decisive`` (or ``at=chouhu|renpeng|bakuai``: the step where that happened), ``seat`` (``all`` or a seat of the run's table).

>>> runs = {"base": (240, 3, None)}
>>> parse_link({"run": "base", "hand": "7", "at": "decisive"}, runs, "base")
ReplayLink(run='base', hand=7, step=None, decisive=True, seat='all', event=None)
>>> parse_link({"run": "base", "hand": "999999"}, runs, "base")
Traceback (most recent call last):
...
dashboard.services.links.BadLink: Run base has no hand 999999: its hands are 0 – 239.
>>> parse_link({"hand": "-1"}, runs, "base")
Traceback (most recent call last):
...
dashboard.services.links.BadLink: The link's hand '-1' is not a hand id: hand ids are whole numbers 0 – 239 in run base.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from replay.analysis.figures.drill import EVENT_CONDITIONS as EVENT_AT

#: The replay's URL parameters.
PARAMS = ("run", "hand", "step", "at", "seat")

_WHOLE = re.compile(r"[0-9]{1,18}")


class BadLink(ValueError):
    """URL parameters that name nothing in the store; the message says what and why."""


@dataclass(frozen=True)
class ReplayLink:
    run: str
    hand: int
    step: int | None  # None: the start, unless ``decisive``
    decisive: bool
    seat: int | str  # a seat number or "all"
    event: str | None = None  # at=chouhu|renpeng|bakuai: the step where it happened


def _whole(raw: str) -> int | None:
    raw = raw.strip()
    return int(raw) if _WHOLE.fullmatch(raw) else None


def _show(raw: str, width: int = 40) -> str:
    return repr(raw if len(raw) <= width else raw[:width] + "…")


def parse_link(
    qp: Mapping[str, str], runs: Mapping[str, tuple[int, int, str | None]], default_run: str
) -> ReplayLink:
    """The link in ``qp``, or :class:`BadLink`. ``runs``: name → (hands, players, problem)
    for every run of the store (``problem``: why it cannot be shown, or ``None``);
    ``default_run``: the run a link without ``run`` refers to (the one on screen)."""
    run = qp.get("run", default_run)
    if run not in runs:
        known = ", ".join(sorted(runs)) or "none"
        raise BadLink(f"No run {_show(run)} in the store (its runs: {known}).")
    hands, players, problem = runs[run]
    if problem is not None:
        raise BadLink(f"Run {run} cannot be replayed: {problem}")
    if hands <= 0:
        raise BadLink(f"Run {run} has no recorded hand yet.")
    span = f"0 – {hands - 1}"
    raw_hand = qp.get("hand", "0")
    hand = _whole(raw_hand)
    if hand is None:
        raise BadLink(
            f"The link's hand {_show(raw_hand)} is not a hand id: hand ids are whole numbers"
            f" {span} in run {run}."
        )
    if hand >= hands:
        raise BadLink(f"Run {run} has no hand {hand}: its hands are {span}.")
    at = qp.get("at")
    if at is not None and at != "decisive" and at not in EVENT_AT:
        known = ", ".join(("decisive", *EVENT_AT))
        raise BadLink(f"The link's at={_show(at)} is not known (at= one of {known}).")
    step = None
    if "step" in qp and at is None:
        step = _whole(qp["step"])
        if step is None:
            raise BadLink(
                f"The link's step {_show(qp['step'])} is not a step: steps are whole numbers"
                " from 0."
            )
    raw_seat = qp.get("seat", "all")
    seat: int | str = "all"
    if raw_seat != "all":
        s = _whole(raw_seat)
        if s is None or s >= players:
            raise BadLink(
                f"The link's seat {_show(raw_seat)} is not a seat of run {run}: seats are"
                f" 0 – {players - 1}, or all."
            )
        seat = s
    return ReplayLink(run, hand, step, at == "decisive", seat, at if at in EVENT_AT else None)


def check_step(link: ReplayLink, n_steps: int) -> None:
    """:class:`BadLink` if the link's ``step`` is beyond the hand's ``n_steps`` decisions.

    >>> check_step(ReplayLink("base", 7, 40, False, "all"), 35)
    Traceback (most recent call last):
    ...
    dashboard.services.links.BadLink: Hand 7 of run base has 35 steps: the link's step 40 is beyond them (steps are 0 – 35).
    """
    if link.step is not None and link.step > n_steps:
        raise BadLink(
            f"Hand {link.hand} of run {link.run} has {n_steps} steps: the link's step"
            f" {link.step} is beyond them (steps are 0 – {n_steps})."
        )
