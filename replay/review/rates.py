"""Review rates: how often, and how much, a policy loses, per kind of decision.

From reviewed decisions (:class:`replay.review.hand.HandReview`), grouped by the policy of the
deciding seat and the kind of the option it played (discard, 吃, 碰, 胡, pass; ``all`` for
every kind): the decisions reviewed, the blunder, mistake and inaccuracy rates and the share
that played the best option (Wilson 95 % intervals), and the mean score loss and win-chance
loss per decision (normal 95 % intervals). docs/REVIEW.md defines the classes and losses.

The one place these rates are computed; ``paohuzi review RUN --sample K`` prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from engine.actions import ActionKind, kind_of
from replay.analysis.intervals import mean_ci, wilson
from replay.review.hand import CLASSES, HandReview

#: The decision kinds, in the order tables show them (the played option's kind).
KINDS = {
    ActionKind.DISCARD: "discard",
    ActionKind.CHI: "吃",
    ActionKind.PENG: "碰",
    ActionKind.HU: "胡",
    ActionKind.PASS: "pass",
}
ALL = "all"


class DecisionRow(NamedTuple):
    """One reviewed decision, flat."""

    hand: int
    step: int
    seat: int
    policy: str
    kind: str
    cls: str | None
    score_loss: float
    win_loss: float
    best: bool


def rows_of(hand: int, review: HandReview, policies: Sequence[str | None]) -> list[DecisionRow]:
    """The decisions of one hand's review; ``policies[s]``: the policy of seat s."""
    return [
        DecisionRow(hand, d.step, d.seat, policies[d.seat] or "?",
                    KINDS.get(kind_of(d.played), kind_of(d.played).name.lower()), d.kind,
                    d.score_loss, d.win_loss, d.played == d.best)
        for d in review.decisions
    ]  # fmt: skip


@dataclass(frozen=True)
class Share:
    k: int
    n: int
    p: float
    lo: float
    hi: float


@dataclass(frozen=True)
class Mean:
    mean: float
    lo: float
    hi: float


@dataclass(frozen=True)
class RateRow:
    """The rates of one (policy, kind) group."""

    policy: str
    kind: str
    decisions: int
    hands: int
    blunder: Share
    mistake: Share
    inaccuracy: Share
    best: Share
    score_loss: Mean
    win_loss: Mean

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def _share(k: int, n: int) -> Share:
    lo, hi = wilson(k, n)
    return Share(k, n, k / n, lo, hi)


def _mean(xs: Sequence[float]) -> Mean:
    m, lo, hi = mean_ci(xs)
    return Mean(m, lo, hi)


def rates(rows: Iterable[DecisionRow]) -> list[RateRow]:
    """One :class:`RateRow` per policy and kind (the kinds in :data:`KINDS` order, then
    ``all``), policies by name. Groups without a decision are left out."""
    groups: dict[tuple[str, str], list[DecisionRow]] = {}
    for r in rows:
        groups.setdefault((r.policy, r.kind), []).append(r)
        groups.setdefault((r.policy, ALL), []).append(r)
    order = {k: i for i, k in enumerate([*KINDS.values(), ALL])}
    out = []
    for (policy, kind), rs in sorted(
        groups.items(), key=lambda g: (g[0][0], order.get(g[0][1], 99))
    ):
        n = len(rs)
        counts = {name: sum(r.cls == name for r in rs) for name, _ in CLASSES}
        out.append(
            RateRow(
                policy, kind, n, len({r.hand for r in rs}),
                _share(counts["blunder"], n), _share(counts["mistake"], n),
                _share(counts["inaccuracy"], n), _share(sum(r.best for r in rs), n),
                _mean([r.score_loss for r in rs]), _mean([r.win_loss for r in rs]),
            )
        )  # fmt: skip
    return out
