"""The decision review on the dashboard (the Replay page's graph and option bars, the Review
page): from stored reviews (replay.store.reviews) when they hold the hand, else computed on
request (replay.review.hand) and kept for the session — the dashboard never writes to the
store. No streamlit.

>>> classes_legend()
['inaccuracy', 'mistake', 'blunder']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from engine.judge import CLASSES, HandReview
from replay.review.hand import review_hand
from replay.store.reviews import Key, StoredReviews

#: The largest budget the page computes (rollouts per option of every decision); a bigger
#: review is ``paohuzi review`` on the command line, whose stored result the page then reads.
MAX_PAGE_ROLLOUTS = 256
ROLLOUT_POLICIES = ("heuristic", "greedy", "random")


def classes_legend() -> list[str]:
    """The classes, mildest first (the graph's legend order)."""
    return [name for name, _ in reversed(CLASSES)]


def check_budget(rollouts: int) -> str | None:
    """Why the page refuses ``rollouts``, or None."""
    if not 1 <= rollouts <= MAX_PAGE_ROLLOUTS:
        return (
            f"{rollouts} rollouts per option is above the page's limit of {MAX_PAGE_ROLLOUTS}:"
            f" run `paohuzi review RUN HAND --rollouts {rollouts}` and the page reads what it"
            " stores"
        )
    return None


def stored_review(
    run_path: Path, manifest: dict[str, Any], log: Any, seats: Sequence[int], key: Key,
    warn: Callable[[str], None] | None = None,
) -> HandReview | None:  # fmt: skip
    """The review of ``seats`` of the hand ``log`` read from the run's stored reviews, or
    None when they do not hold every one of those seats."""
    hand = int(log.hand_id)
    sr = StoredReviews(run_path, manifest, key, warn)
    have = sr.mask(hand)
    if any(not (have >> s) & 1 for s in seats):
        return None
    decisions = tuple(sr.decisions(hand, seats))
    return HandReview(log.where, tuple(seats), key.rollouts, key.rollout_policy, key.seed,
                      "stored", decisions, len(decisions))  # fmt: skip


def compute_review(
    log: Any, seats: Sequence[int], key: Key, progress: Callable[[int, int], None] | None = None
) -> HandReview:
    """A fresh review (compiled rollouts), within the page's budget."""
    why = check_budget(key.rollouts)
    if why:
        raise ValueError(why)
    return review_hand(log, seats, key.rollouts, key.rollout_policy, key.seed, "auto", progress)


def curve_frame(review: HandReview) -> pd.DataFrame:
    """The win-probability graph's points: per reviewed decision, the deciding seat's win
    chance after the option it played (%, with its interval), the class (``none`` below an
    inaccuracy), what was played, the best option by win chance with the points lost
    against it, and the best by score with the score lost against it."""
    from engine.actions import action_str

    rows = []
    for d in review.decisions:
        v = next(o for o in d.options if o.action == d.played)
        rows.append(
            {
                "step": d.step,
                "seat": f"seat {d.seat}",
                "win": 100 * v.win.mean,
                "lo": 100 * v.win.low,
                "hi": 100 * v.win.high,
                "class": d.kind or "none",
                "played": action_str(d.played),
                "best_win": action_str(d.best_win),
                "lost": round(d.win_loss, 1),
                "best": action_str(d.best),
                "score_loss": round(d.score_loss, 2),
            }
        )
    cols = ["step", "seat", "win", "lo", "hi", "class", "played", "best_win", "lost", "best",
            "score_loss"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def _mark(played: bool, best: bool) -> str:
    return " · ".join(t for t, on in (("played", played), ("best", best)) if on) or "other"


def options_frame(review: HandReview, step: int) -> pd.DataFrame | None:
    """The option bars at ``step``: every legal option's win chance and mean score delta with
    their intervals; ``mark_win`` and ``mark_score`` mark the played option and the best one
    by that measure (``played``, ``best``, ``played · best``, ``other``: each chart its own
    best), ``mark`` names both (engine.judge.option_tags). None when ``step`` is no reviewed
    decision."""
    from engine.actions import action_str
    from engine.judge import option_tags

    d = next((d for d in review.decisions if d.step == step), None)
    if d is None:
        return None
    rows = []
    for v in sorted(d.options, key=lambda v: (-v.delta.mean, v.action)):
        played = v.action == d.played
        rows.append(
            {
                "option": action_str(v.action),
                "win": 100 * v.win.mean,
                "win_lo": 100 * v.win.low,
                "win_hi": 100 * v.win.high,
                "score": v.delta.mean,
                "score_lo": v.delta.low,
                "score_hi": v.delta.high,
                "mark": " · ".join(option_tags(d, v.action)) or "other",
                "mark_win": _mark(played, v.action == d.best_win),
                "mark_score": _mark(played, v.action == d.best),
                "seat": d.seat,
            }
        )
    return pd.DataFrame(rows)


def costliest(review: HandReview, k: int = 3) -> list[dict[str, Any]]:
    """The ``k`` decisions that gave up the most winning chance, with some lost
    (engine.judge.costliest, the measure of the accuracy and the classes), each with its
    verdict line (engine.judge.verdict)."""
    from engine.actions import action_str
    from engine.judge import costliest as top
    from engine.judge import verdict

    return [
        {
            "step": d.step,
            "seat": d.seat,
            "played": action_str(d.played),
            "best": action_str(d.best),
            "best_win": action_str(d.best_win),
            "score_loss": d.score_loss,
            "win_loss": d.win_loss,
            "win_loss_interval": d.win_loss_ci,
            "class": d.kind,
            "verdict": verdict(d),
        }
        for d in top(review.decisions, k)
    ]


#: The heading of a costliest-decisions list: the measure it ranks by.
COSTLIEST_HEADING = "**Costliest decisions** (by win chance given up)"


def summary_line(review: HandReview, source: str | None = None) -> str:
    """The summary of the reviewed seats (engine.judge.summary_text, without the costliest
    steps: the page lists them), the budget, and where the review comes from (``source``;
    default: stored, or computed and not stored)."""
    from engine.judge import summary_text

    if not review.decisions:
        return "no decision with a choice for these seats"
    src = source or (
        "stored review"
        if review.stored == len(review.decisions)
        else "computed now (not stored: the dashboard is read-only)"
    )
    return (
        f"{summary_text(review.decisions, costly=False)} · {review.rollouts} rollouts per"
        f" option by {review.rollout_policy}, seed {review.seed} · {src}"
    )
