"""Review rates: how often, and how much, a policy loses, per kind of decision.

From reviewed decisions (:class:`engine.judge.HandReview`), grouped by the policy of the
deciding seat and the kind of the option it played (discard, 吃, 碰, 胡, pass; ``all`` for
every kind): the decisions reviewed, the blunder, mistake and inaccuracy rates and the share
that played the best option, and the mean score loss and win-chance loss per decision, with
the statistics layer's 95 % intervals and types (:mod:`replay.analysis.figures.results`), a
hand one cluster: Wilson on the effective size for the rates, cluster-robust for the means.
docs/REVIEW.md defines the classes and losses.

The one place these rates are computed; ``paohuzi review RUN --sample K`` prints them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from engine.actions import ActionKind, kind_of
from engine.judge import CLASSES, DecisionReview, HandReview
from replay.analysis.figures.results import Mean, Rate
from replay.analysis.intervals import ClusterSums

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
    return decision_rows(hand, review.decisions, policies)


def decision_rows(
    hand: int, decisions: Iterable[DecisionReview], policies: Sequence[str | None]
) -> list[DecisionRow]:
    """Reviewed decisions of ``hand`` as rows; ``policies[s]``: the policy of seat s."""
    return [
        DecisionRow(hand, d.step, d.seat, policies[d.seat] or "?",
                    KINDS.get(kind_of(d.played), kind_of(d.played).name.lower()), d.kind,
                    d.score_loss, d.win_loss, d.played == d.best)
        for d in decisions
    ]  # fmt: skip


@dataclass(frozen=True)
class RateRow:
    """The rates of one (policy, kind) group."""

    policy: str
    kind: str
    decisions: int
    hands: int
    blunder: Rate
    mistake: Rate
    inaccuracy: Rate
    best: Rate
    score_loss: Mean
    win_loss: Mean

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        out = asdict(self)
        for name in ("blunder", "mistake", "inaccuracy", "best"):
            out[name]["p"] = getattr(self, name).p
        return out


def _mean(rs: Sequence[DecisionRow], value: str) -> Mean:
    """The cluster-robust mean of ``value`` over ``rs``, a hand one cluster."""
    by_hand: dict[int, list[float]] = {}
    for r in rs:
        by_hand.setdefault(r.hand, []).append(getattr(r, value))
    return Mean.of(ClusterSums.of(by_hand.values()))


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
        n, hands = len(rs), len({r.hand for r in rs})
        counts = {name: sum(r.cls == name for r in rs) for name, _ in CLASSES}

        def rate(k: int, n: int = n, hands: int = hands) -> Rate:
            return Rate.of(k, n, clusters=hands)

        out.append(
            RateRow(
                policy, kind, n, hands, rate(counts["blunder"]), rate(counts["mistake"]),
                rate(counts["inaccuracy"]), rate(sum(r.best for r in rs)),
                _mean(rs, "score_loss"), _mean(rs, "win_loss"),
            )
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class StoredRates:
    """The rates of a run's stored reviews under one key (``paohuzi stats``, the dashboard)."""

    rollouts: int
    rollout_policy: str
    seed: int
    hands: int
    decisions: int
    rates: list[RateRow]


def stored_decisions(
    run_path: Any, manifest: dict[str, Any], warn: Callable[[str], None] | None = None
) -> Iterator[tuple[tuple[int, str, int], int, int, list[DecisionReview], list[str | None]]]:
    """Every stored (hand, seat) of the run, per review key, once (from the first good file
    listing it): ``((rollouts, rollout_policy, seed), hand, seat, its decisions, the seats'
    policies)``; a damaged file named through ``warn`` and left out. The policy of a seat is
    the one the manifest gives its rotation (``?`` for a run of imported hands). Keys in
    order; within one, files in the manifest's order."""
    from replay.store import reviews as S

    entries = S.review_entries(manifest)
    if not entries:
        return
    import pyarrow.parquet as pq

    from replay.store.scan import ChecksumCache, resolve_shard_path

    cache = ChecksumCache(run_path.parent.parent)
    good, bad = S.check_reviews(run_path, entries, cache)
    cache.save()
    for line in bad:
        if warn is not None:
            warn(line)
    params = manifest.get("params") or {}
    seat_policies = params.get("seat_policies") or [params.get("policies") or []]
    for rollouts, policy, seed in sorted({(e["rollouts"], e["rollout_policy"], e["seed"])
                                          for e in good}):  # fmt: skip
        key = S.Key(rollouts, policy, seed)
        taken: dict[int, int] = {}
        for e in good:
            if not key.of(e):
                continue
            table = pq.read_table(resolve_shard_path(run_path, e["path"]), schema=S.SCHEMA)
            by_pair = S.decisions_of(table)
            cov = S.coverage_of(e)
            for h in sorted(cov):
                pols = list(seat_policies[h % len(seat_policies)]) if seat_policies else []
                pols = [*pols, None, None, None, None]
                for seat in range(4):
                    if (cov[h] >> seat) & 1 and not (taken.get(h, 0) >> seat) & 1:
                        yield (rollouts, policy, seed), h, seat, by_pair.get((h, seat), []), pols
                taken[h] = taken.get(h, 0) | cov[h]


def stored_rates(
    run_path: Any, manifest: dict[str, Any], warn: Callable[[str], None] | None = None
) -> list[StoredRates]:
    """Per key of the run's stored reviews (replay.store.reviews), the rates of every
    decision they hold (:func:`stored_decisions`)."""
    out: list[StoredRates] = []
    current: tuple[int, str, int] | None = None
    rows: list[DecisionRow] = []
    hands: set[int] = set()

    def close() -> None:
        if current is not None:
            out.append(StoredRates(*current, len(hands), len(rows), rates(rows)))

    for key, h, _, ds, pols in stored_decisions(run_path, manifest, warn):
        if key != current:
            close()
            current, rows, hands = key, [], set()
        hands.add(h)
        rows.extend(decision_rows(h, ds, pols))
    close()
    return out


def costliest_stored(
    run_path: Any, manifest: dict[str, Any], limit: int = 20
) -> list[dict[str, Any]]:
    """The ``limit`` stored decisions that gave up the most winning chance (the measure of
    the accuracy and the classes: engine.judge.MEASURE), over every key (ties: hand, step),
    only those that gave up some; each with its hand, step, seat, policy, kind, class,
    losses, verdict line (engine.judge.verdict) and review key."""
    from engine.actions import action_str
    from engine.judge import verdict

    found: list[dict[str, Any]] = []
    for (rollouts, policy, seed), h, seat, ds, pols in stored_decisions(run_path, manifest):
        for d, r in zip(ds, decision_rows(h, ds, pols)):
            if d.win_loss > 0:
                found.append(
                    {
                        "hand": h, "step": d.step, "seat": seat, "policy": r.policy,
                        "kind": r.kind, "class": d.kind or "", "played": action_str(d.played),
                        "best": action_str(d.best), "best_win": action_str(d.best_win),
                        "score_loss": d.score_loss, "win_loss": d.win_loss,
                        "verdict": verdict(d), "rollouts": rollouts, "rollout_policy": policy,
                        "seed": seed,
                    }
                )  # fmt: skip
    found.sort(key=lambda x: (-float(x["win_loss"]), int(x["hand"]), int(x["step"])))
    return found[:limit]
