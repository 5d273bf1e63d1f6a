"""A decision judged by its options' values: the best option of each measure, what the
option played gave up against it, its class and its accuracy — what a fresh review
(replay.review.hand) and a stored one (replay.store.reviews) both make of the values
:func:`engine.search.evaluate` gives; and the words the review says them in (one language
for ``paohuzi review``, ``paohuzi play`` and the dashboard: docs/REVIEW.md).

Two measures, each with its own best option and its own loss, the loss always measured
against that measure's best:

* **gains**: each option against the one played, rollout by rollout — the options share
  their determinizations and random streams, so the differences pair up — its score delta
  minus the played option's and its win (0 or 1) minus the played option's, each a mean
  with its 95 % interval (:class:`Gain`);
* **by score** — **best** the option of highest mean score delta (the game's objective),
  ties to the lowest action code (:func:`engine.search.best_option`); **score loss** its
  gain in score delta (≥ 0), with its paired interval;
* **by win chance** — **best_win** the option of highest win chance, ties to the lowest
  action code; **win loss** its gain in win chance, in percentage points (≥ 0), with its
  paired interval;
* either best is the option played when the played option ties it (its loss is 0): a
  review never names another option as better for nothing.

One measure, the win chance (:data:`MEASURE`), gives everything the summary says of how
well a seat played — the class, the accuracy and the costliest decisions:

* **class** by the win loss, Lichess's thresholds: ≥ 15 points a blunder, ≥ 10 a mistake,
  ≥ 5 an inaccuracy (:data:`CLASSES`) — given only when the win loss's paired interval
  excludes zero (its low end above 0, over two rollouts or more). The highest of several
  noisy estimates is biased upwards, so at a small budget a near-tie among many options
  would otherwise read as a mistake; a choice that loses on nearly every rollout (a declined
  winning 胡) keeps its class at any budget;
* **accuracy** of a decision, Lichess's formula on the win loss ``L`` (points):
  ``103.1668 · exp(−0.04354 · L) − 3.1669``, clipped to 0 … 100 (100 when nothing was
  lost); a hand's accuracy is the mean over its reviewed decisions;
* **costliest** decisions: the highest win losses, ties to the earlier step, only those
  that lost some (:func:`costliest`) — so a hand listing one has an accuracy below 100.

The agreement (the share that played the best option) is by score, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.actions import action_str
from engine.search import Estimate, OptionValue, best_option

#: The measure of the class, the accuracy and the costliest decisions: the winning chance
#: given up (``DecisionReview.win_loss``, percentage points). The JSON summary's ``measure``.
MEASURE = "win_loss"
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
    best: int  # by score: what ``score_loss`` is measured against
    options: tuple[OptionValue, ...]
    score_loss: float
    win_loss: float  # percentage points
    kind: str | None  # "inaccuracy", "mistake", "blunder" or None
    #: Each option's gain over the one played, in the order of ``options``.
    gains: tuple[Gain, ...]
    #: The paired 95 % intervals of the two losses (win loss in points).
    score_loss_ci: tuple[float, float]
    win_loss_ci: tuple[float, float]
    #: The best option by win chance: what ``win_loss`` is measured against.
    best_win: int

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
            "best_win": self.best_win,
            "best_win_str": action_str(self.best_win),
            "score_loss": self.score_loss,
            "score_loss_interval": list(self.score_loss_ci),
            "win_loss": self.win_loss,
            "win_loss_interval": list(self.win_loss_ci),
            "class": self.kind,
            "accuracy": self.accuracy,
            "verdict": verdict(self),
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
        """Per reviewed seat and over all, :func:`summary_of` their decisions."""
        return {
            "all": summary_of(self.decisions),
            "seats": {
                s: summary_of([d for d in self.decisions if d.seat == s]) for s in self.seats
            },
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
    if gains[index[best]].delta.mean <= 0:  # the played option ties the best: it is the best
        best = played
    if gains[index[top]].win.mean <= 0:
        top = played
    sl, wl = gains[index[best]].delta, gains[index[top]].win
    win_loss = 100.0 * wl.mean
    kind = classify(win_loss) if excludes_zero(wl) else None
    return DecisionReview(
        step, seat, phase, played, best, values, sl.mean, win_loss, kind, gains,
        (sl.low, sl.high), (100.0 * wl.low, 100.0 * wl.high), top,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The summary, and the words of the review (paohuzi review and play, the dashboard)
# ---------------------------------------------------------------------------------------------


def costliest(decisions: Iterable[DecisionReview], k: int = 3) -> list[DecisionReview]:
    """The ``k`` decisions that gave up the most winning chance (:data:`MEASURE`), ties to
    the earlier step; only those that gave up some."""
    ranked = sorted(decisions, key=lambda d: (-d.win_loss, d.step))
    return [d for d in ranked[:k] if d.win_loss > 0]


def summary_of(ds: Sequence[DecisionReview]) -> dict[str, Any]:
    """Decisions reviewed, agreement with the best option by score, and by win chance
    (:data:`MEASURE`) the accuracy, the class counts and the three costliest steps."""
    n = len(ds)
    return {
        "decisions": n,
        "agreement": sum(d.played == d.best for d in ds) / n if n else None,
        "measure": MEASURE,
        "accuracy": math.fsum(d.accuracy for d in ds) / n if n else None,
        **{name: sum(d.kind == name for d in ds) for name, _ in CLASSES},
        "costliest": [d.step for d in costliest(ds)],
    }


def _loss(mean: float, ci: tuple[float, float], digits: int, intervals: bool) -> str:
    """A loss as the review writes it: ``−19.5``, with ``intervals`` ``−19.5 ±7.2`` (the
    paired interval's half width: it is symmetric about the mean)."""
    out = f"−{mean:.{digits}f}"
    return out + f" ±{(ci[1] - ci[0]) / 2:.{digits}f}" if intervals else out


def verdict(d: DecisionReview, intervals: bool = False) -> str:
    """What a decision was worth, in one line: the option played, the best option and the
    loss against it for each measure — one best named once when both measures agree, both
    when they do not (win-chance points as ``pts``, score as it is)::

        played 打 三 · by win chance best 打 五, −19.5 pts · by score best 打 肆, −0.70
        played 打 三 · best 打 五: −19.5 pts by win chance, −0.70 by score
        played 打 五 · the best by win chance · by score best 打 肆, −0.70
        played 打 五, the best by win chance and by score

    ``intervals``: each loss with its 95 % paired interval (``−19.5 ±7.2 pts``)."""
    played = f"played {action_str(d.played)}"
    win = _loss(d.win_loss, d.win_loss_ci, 1, intervals) + " pts"
    score = _loss(d.score_loss, d.score_loss_ci, 2, intervals)
    if d.best == d.best_win:
        if d.best == d.played:
            return f"{played}, the best by win chance and by score"
        return f"{played} · best {action_str(d.best)}: {win} by win chance, {score} by score"
    parts = [played]
    for name, best, loss in (("win chance", d.best_win, win), ("score", d.best, score)):
        parts.append(
            f"the best by {name}"
            if best == d.played
            else f"by {name} best {action_str(best)}, {loss}"
        )
    return " · ".join(parts)


def option_tags(d: DecisionReview, action: int) -> list[str]:
    """What an option of ``d`` is: ``played``, and ``best`` (by both measures) or ``best by
    win chance`` / ``best by score``."""
    tags = ["played"] if action == d.played else []
    if action == d.best == d.best_win:
        tags.append("best")
    elif action == d.best_win:
        tags.append("best by win chance")
    elif action == d.best:
        tags.append("best by score")
    return tags


def accuracy_text(a: float) -> str:
    """An accuracy to one decimal, 100.0 only when nothing was lost (99.96 is ``99.9``)."""
    return f"{a:.1f}" if a >= 100 or round(a, 1) < 100 else "99.9"


def _count(k: int, one: str, many: str) -> str:
    return f"{k} {one if k == 1 else many}"


def summary_text(ds: Sequence[DecisionReview], costly: bool = True) -> str:
    """The summary of ``ds`` in one line: how many, the agreement by score, then by win
    chance the accuracy, the classes and (``costly``) the costliest steps with their loss::

        27 decisions · 52 % the best by score · by win chance: accuracy 87.4, 1 blunder,
        3 mistakes, 2 inaccuracies, costliest step 4 (−16.4 pts), step 2 (−12.9 pts)
    """
    s = summary_of(ds)
    if not s["decisions"]:
        return "no decision with a choice"
    words = [
        f"accuracy {accuracy_text(s['accuracy'])}",
        _count(s["blunder"], "blunder", "blunders"),
        _count(s["mistake"], "mistake", "mistakes"),
        _count(s["inaccuracy"], "inaccuracy", "inaccuracies"),
    ]
    if costly:
        top = ", ".join(f"step {d.step} (−{d.win_loss:.1f} pts)" for d in costliest(ds))
        words.append(f"costliest {top or 'none'}")
    return (
        f"{_count(s['decisions'], 'decision', 'decisions')} ·"
        f" {100 * s['agreement']:.0f} % the best by score · by win chance: {', '.join(words)}"
    )
