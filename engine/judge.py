"""A decision judged by its options' values: the best option, what the option played gave
up, its class and its accuracy — what a fresh review (replay.review.hand) and a stored one
(replay.store.reviews) both make of the values :func:`engine.search.evaluate` gives.

* **best**: the option of highest mean score delta (the game's objective), ties to the
  lowest action code (:func:`engine.search.best_option`);
* **score loss**: best's mean score delta minus the played option's (≥ 0);
* **win loss**: the highest win chance of any option minus the played option's, in
  percentage points (≥ 0);
* **class** by the win loss, Lichess's thresholds: ≥ 15 points a blunder, ≥ 10 a mistake,
  ≥ 5 an inaccuracy (:data:`CLASSES`);
* **accuracy** of a decision, Lichess's formula on the win loss ``L`` (points):
  ``103.1668 · exp(−0.04354 · L) − 3.1669``, clipped to 0 … 100 (100 when nothing was
  lost); a hand's accuracy is the mean over its reviewed decisions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.actions import action_str
from engine.search import OptionValue, best_option

#: (class, the least win-chance loss in points it takes), worst first.
CLASSES: tuple[tuple[str, float], ...] = (("blunder", 15.0), ("mistake", 10.0), ("inaccuracy", 5.0))


def classify(win_loss_points: float) -> str | None:
    """The class of a decision that gave up ``win_loss_points`` of winning chance, or None."""
    for name, least in CLASSES:
        if win_loss_points >= least:
            return name
    return None


def accuracy(win_loss_points: float) -> float:
    """Lichess's accuracy of a move from the winning chance it lost (points), 0 … 100 (100
    for no loss, where the formula gives 99.9999)."""
    if win_loss_points <= 0:
        return 100.0
    a = 103.1668 * math.exp(-0.04354 * win_loss_points) - 3.1669
    return min(100.0, max(0.0, a))


@dataclass(frozen=True)
class DecisionReview:
    """One reviewed decision."""

    step: int
    seat: int
    phase: str
    played: int
    best: int
    options: tuple[OptionValue, ...]
    score_loss: float
    win_loss: float  # percentage points
    kind: str | None  # "inaccuracy", "mistake", "blunder" or None

    @property
    def accuracy(self) -> float:
        return accuracy(self.win_loss)

    def to_dict(self) -> dict[str, Any]:
        def est(e: Any, scale: float = 1.0) -> dict[str, float]:
            return {"mean": e.mean * scale, "low": e.low * scale, "high": e.high * scale}

        return {
            "step": self.step,
            "seat": self.seat,
            "phase": self.phase,
            "played": self.played,
            "played_str": action_str(self.played),
            "best": self.best,
            "best_str": action_str(self.best),
            "score_loss": self.score_loss,
            "win_loss": self.win_loss,
            "class": self.kind,
            "accuracy": self.accuracy,
            "options": [
                {
                    "action": v.action,
                    "action_str": action_str(v.action),
                    "win_pct": est(v.win, 100.0),
                    "score": est(v.delta),
                    "rollouts": v.delta.n,
                }
                for v in self.options
            ],
        }


@dataclass(frozen=True)
class HandReview:
    """The review of a hand: its decisions and the parameters that made them."""

    where: str
    seats: tuple[int, ...]
    rollouts: int
    rollout_policy: str
    seed: int
    engine: str
    decisions: tuple[DecisionReview, ...]
    #: How many of the decisions were read from a stored review (replay.store.reviews).
    stored: int = 0

    def summary(self) -> dict[str, Any]:
        """Decisions reviewed, agreement with the best option, accuracy, the class counts and
        the three costliest decisions (by score loss), per reviewed seat and over all."""

        def of(ds: Sequence[DecisionReview]) -> dict[str, Any]:
            n = len(ds)
            costly = sorted(ds, key=lambda d: (-d.score_loss, d.step))[:3]
            return {
                "decisions": n,
                "agreement": sum(d.played == d.best for d in ds) / n if n else None,
                "accuracy": math.fsum(d.accuracy for d in ds) / n if n else None,
                **{name: sum(d.kind == name for d in ds) for name, _ in CLASSES},
                "costliest": [d.step for d in costly if d.score_loss > 0],
            }

        return {
            "all": of(self.decisions),
            "seats": {s: of([d for d in self.decisions if d.seat == s]) for s in self.seats},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "hand": self.where,
            "seats": list(self.seats),
            "rollouts": self.rollouts,
            "rollout_policy": self.rollout_policy,
            "seed": self.seed,
            "engine": self.engine,
            "stored_decisions": self.stored,
            "summary": self.summary(),
            "decisions": [d.to_dict() for d in self.decisions],
        }


def judge(
    step: int, seat: int, phase: str, played: int, values: Sequence[OptionValue]
) -> DecisionReview:
    """The review of one decision from its options' values (the module's definitions of best,
    the losses and the class): what a fresh review and a stored one (replay.store.reviews)
    both make of the values."""
    values = tuple(values)
    by = {v.action: v for v in values}
    best = best_option(values)
    score_loss = by[best].delta.mean - by[played].delta.mean
    win_loss = 100.0 * (max(v.win.mean for v in values) - by[played].win.mean)
    return DecisionReview(
        step, seat, phase, played, best, values, score_loss, win_loss, classify(win_loss)
    )
