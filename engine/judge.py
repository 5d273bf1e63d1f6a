"""A decision judged by its options' values: the best option, what the option played gave
up, its class and its accuracy — what a fresh review (replay.review.hand) and a stored one
(replay.store.reviews) both make of the values :func:`engine.search.evaluate` gives.

* **best**: the option of highest mean score delta (the game's objective), ties to the
  lowest action code (:func:`engine.search.best_option`);
* **gains**: each option against the one played, rollout by rollout — the options share
  their determinizations and random streams, so the differences pair up — its score delta
  minus the played option's and its win (0 or 1) minus the played option's, each a mean
  with its 95 % interval (:class:`Gain`);
* **score loss**: best's gain in score delta (≥ 0), with its paired interval;
* **win loss**: the gain in win chance of the option of highest win chance, in percentage
  points (≥ 0), with its paired interval;
* **class** by the win loss, Lichess's thresholds: ≥ 15 points a blunder, ≥ 10 a mistake,
  ≥ 5 an inaccuracy (:data:`CLASSES`) — given only when the win loss's paired interval
  excludes zero (its low end above 0, over two rollouts or more). The highest of several
  noisy estimates is biased upwards, so at a small budget a near-tie among many options
  would otherwise read as a mistake; a choice that loses on nearly every rollout (a declined
  winning 胡) keeps its class at any budget;
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
from engine.search import Estimate, OptionValue, best_option

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
class Gain:
    """An option's value minus the played option's, rollout by rollout over the same
    determinizations: score delta, and win chance as a fraction (each with its 95 % interval).
    """

    delta: Estimate
    win: Estimate


def gains_of(values: Sequence[OptionValue], played: int) -> tuple[Gain, ...]:
    """Each option's :class:`Gain` over ``played``, in the order of ``values``, from their
    rollouts' samples (one evaluation's: paired rollout by rollout)."""
    by = {v.action: v for v in values}
    base = by[played].samples
    if base is None or any(v.samples is None for v in values):
        raise ValueError("a paired comparison needs the options' rollout samples")
    out = []
    for v in values:
        assert v.samples is not None
        d = [x - y for x, y in zip(v.samples[0], base[0], strict=True)]
        w = [x - y for x, y in zip(v.samples[1], base[1], strict=True)]
        out.append(Gain(Estimate.of(d), Estimate.of(w)))
    return tuple(out)


def excludes_zero(e: Estimate) -> bool:
    """Whether a paired difference is shown to be above 0: its interval's low end is, over
    two rollouts or more (one rollout has no interval)."""
    return e.n >= 2 and e.low > 0


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
    #: Each option's gain over the one played, in the order of ``options``.
    gains: tuple[Gain, ...]
    #: The paired 95 % intervals of the two losses (win loss in points).
    score_loss_ci: tuple[float, float]
    win_loss_ci: tuple[float, float]

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
            "score_loss_interval": list(self.score_loss_ci),
            "win_loss": self.win_loss,
            "win_loss_interval": list(self.win_loss_ci),
            "class": self.kind,
            "accuracy": self.accuracy,
            "options": [
                {
                    "action": v.action,
                    "action_str": action_str(v.action),
                    "win_pct": est(v.win, 100.0),
                    "score": est(v.delta),
                    "rollouts": v.delta.n,
                    "gain": {"score": est(g.delta), "win_pct": est(g.win, 100.0)},
                }
                for v, g in zip(self.options, self.gains, strict=True)
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
    step: int,
    seat: int,
    phase: str,
    played: int,
    values: Sequence[OptionValue],
    gains: Sequence[Gain] | None = None,
) -> DecisionReview:
    """The review of one decision from its options' values (the module's definitions of best,
    the losses and the class): what a fresh review and a stored one (replay.store.reviews)
    both make of the values. ``gains``: the options' :class:`Gain` as stored, else computed
    from the values' samples (:func:`gains_of`)."""
    values = tuple(values)
    gains = gains_of(values, played) if gains is None else tuple(gains)
    index = {v.action: i for i, v in enumerate(values)}
    best = best_option(values)
    top = min(values, key=lambda v: (-v.win.mean, v.action)).action  # highest win chance
    sl, wl = gains[index[best]].delta, gains[index[top]].win
    win_loss = 100.0 * wl.mean
    kind = classify(win_loss) if excludes_zero(wl) else None
    return DecisionReview(
        step, seat, phase, played, best, values, sl.mean, win_loss, kind, gains,
        (sl.low, sl.high), (100.0 * wl.low, 100.0 * wl.high),
    )  # fmt: skip
