"""Per-hand means of a run, and their differences between two runs of the same deals (a rule
switched, or another policy at the table), paired by deal: the 荒庄 rate, the dealer's win
rate, the dealer's advantage, the mean score and the mean 胡息 of a win.

Each figure is a ratio Σy/Σm over the hands (m = 1 for a rate or a per-hand mean, m = 1 for
a win for a mean over wins), with the deal as the cluster: the cluster sums of one run come
from :func:`run_moments`, and those of both runs with their cross sums from
:func:`paired_moments` (the deals present in both), for
:func:`replay.analysis.intervals.cluster_mean_ci` and
:func:`replay.analysis.intervals.paired_ratio_diff_ci`. Both read the hands.
:func:`summary_moments` gives :func:`run_moments`'s row from the summaries' ``hands`` rows
for runs played here without ``--duplicate`` (:func:`moments_plan`; each hand then is its
own deal, so every cluster sum is a sum of per-hand counts and sums): what the dashboard
reads at any size; ``make test`` holds the two equal.

The dealer's advantage of a hand is the dealer's win (1 or 0) minus a non-dealer's share of
the other wins (the non-dealers' wins over ``active − 1``, ``active`` the seats dealt cards,
:attr:`engine.rules.RuleSet.active_players`: the 4-player table's sitter never wins): its
mean is the dealer's win
rate minus a non-dealer's, each hand counted once, so its interval is that of one sample.

>>> sql, params = run_moments("a", 3)
>>> sorted(params.items())
[('active', 3), ('run', 'a')]
>>> [m for m, _ in METRICS]
['huang', 'dealer_win', 'dealer_adv', 'score', 'huxi']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import (
    HAND_BIT,
    HUANG,
    Plan,
    Selection,
    plan,
    sel_cte,
    summaries_enabled,
)

_WON = f"(outcome <> {HUANG})::INTEGER"
_DEALER = f"(outcome <> {HUANG} AND winner = dealer)::INTEGER"
_OTHER = f"(outcome <> {HUANG} AND winner <> dealer)::INTEGER"

#: (name, (y, m)) of each figure, per hand: the SQL of its numerator and its weight.
METRICS: tuple[tuple[str, tuple[str, str]], ...] = (
    ("huang", (f"(outcome = {HUANG})::INTEGER", "1")),
    ("dealer_win", (_DEALER, "1")),
    ("dealer_adv", (f"{_DEALER} - {_OTHER} / ($active - 1.0)", "1")),
    ("score", (f"CASE WHEN outcome <> {HUANG} THEN coalesce(score, 0) ELSE 0 END", _WON)),
    ("huxi", (f"CASE WHEN outcome <> {HUANG} THEN coalesce(huxi, 0) ELSE 0 END", _WON)),
)


def _per_deal(p: Params, runs: str | tuple[str, ...], side: str) -> str:
    """The deal's sums of every figure in ``runs`` (one run, or several: a deal of each run
    its own cluster): columns ``deal_id``, ``{side}_{name}_y`` and ``{side}_{name}_m``."""
    cols = ", ".join(
        f"sum({y})::DOUBLE AS {side}_{name}_y, sum({m})::DOUBLE AS {side}_{name}_m"
        for name, (y, m) in METRICS
    )
    if isinstance(runs, str):
        where = f"run = {p.bind(runs, 'run' if side == 'a' else 'run_b')}"
        return f"SELECT deal_id, {cols} FROM hands WHERE {where} GROUP BY deal_id"
    where = p.in_("run", list(runs), "run")
    return f"SELECT run, deal_id, {cols} FROM hands WHERE {where} GROUP BY run, deal_id"


def _sums(side: str, name: str) -> str:
    y, m = f"{side}_{name}_y", f"{side}_{name}_m"
    return (
        f"sum({y}) AS {side}_{name}_sy, sum({m}) AS {side}_{name}_sm,"
        f" sum({y} * {y}) AS {side}_{name}_syy, sum({y} * {m}) AS {side}_{name}_sym,"
        f" sum({m} * {m}) AS {side}_{name}_smm"
    )


def run_moments(run: str | tuple[str, ...], active: int) -> Statement:
    """One row: ``clusters`` (deals) and for every figure of :data:`METRICS` the cluster sums
    ``a_{name}_sy, _sm, _syy, _sym, _smm`` over the hands of ``run`` (or of several runs of
    one rule set, ``active`` seats dealt cards)."""
    p = Params()
    p.bind(active, "active")
    sums = ", ".join(_sums("a", name) for name, _ in METRICS)
    return p.statement(
        f"WITH a AS ({_per_deal(p, run, 'a')}) SELECT count(*) AS clusters, {sums} FROM a"
    )


def moments_plan(state: Any, runs: Sequence[str]) -> Plan | None:
    """The summary plan of :func:`summary_moments` over ``runs`` (every seat), or None when
    their hands must be read: a run not found, a ``--duplicate`` run (a deal spans its
    rotations), a run of imported hands (they keep the deal ids of the runs they were played
    in, while the summaries count each hand apart), a run without usable summaries, or
    ``$PAOHUZI_SUMMARY=0``."""
    if not summaries_enabled():
        return None
    for name in runs:
        info = state.run(name)
        if info is None or info.duplicate or info.policy_classes:
            return None
    return plan(state, Selection(runs=tuple(runs)))


def moments(state: Any, runs: tuple[str, ...], active: int) -> Statement:
    """:func:`run_moments`'s row over ``runs``: from the summaries (:func:`summary_moments`)
    where :func:`moments_plan` allows it, else from the hands."""
    pl = moments_plan(state, runs)
    return run_moments(runs, active) if pl is None else summary_moments(pl, active)


def summary_moments(pl: Plan, active: int) -> Statement:
    """:func:`run_moments`'s row (``clusters`` and every figure's cluster sums) over the runs
    of ``pl``, from the summaries' ``hands`` rows. Only for a plan of :func:`moments_plan`
    (each hand is its own deal there): a figure's ``y`` and ``m`` per
    hand are then 0/1 counts or a win's value, so ``Σy²`` is ``Σy`` for a count, the sum of
    squares the summaries keep for a value, and ``Σym`` is ``Σy``. The dealer's advantage,
    ``1`` for a dealer's win and ``−1/(active − 1)`` for another seat's, squares to ``1``
    and ``1/(active − 1)²``."""
    p = Params()
    k = p.bind(1.0 / (active - 1.0), "share")
    won = f"outcome <> {HUANG}"
    n = "coalesce(sum(n), 0)::DOUBLE"
    huang = f"coalesce(sum(n) FILTER (WHERE outcome = {HUANG}), 0)::DOUBLE"
    dealer = f"coalesce(sum(n) FILTER (WHERE {won} AND winner = dealer), 0)::DOUBLE"
    other = f"coalesce(sum(n) FILTER (WHERE {won} AND winner <> dealer), 0)::DOUBLE"
    wins = f"coalesce(sum(n) FILTER (WHERE {won}), 0)::DOUBLE"

    def of_win(col: str) -> str:
        return f"coalesce(sum({col}) FILTER (WHERE {won}), 0)::DOUBLE"

    # (Σy, Σy², Σm) per figure; Σym is Σy and Σm² is Σm (m is 0 or 1)
    sums = {
        "huang": (huang, huang, n),
        "dealer_win": (dealer, dealer, n),
        "dealer_adv": (f"{dealer} - {other} * {k}", f"{dealer} + {other} * {k} * {k}", n),
        "score": (of_win("score_s"), of_win("score_ss"), wins),
        "huxi": (of_win("huxi_s"), of_win("huxi_ss"), wins),
    }
    assert tuple(sums) == tuple(name for name, _ in METRICS)
    cols = ", ".join(
        f"{y} AS a_{name}_sy, {m} AS a_{name}_sm, {yy} AS a_{name}_syy, {y} AS a_{name}_sym,"
        f" {m} AS a_{name}_smm"
        for name, (y, yy, m) in sums.items()
    )
    return p.statement(
        f"WITH {sel_cte(pl, p)}, h AS (SELECT x.* FROM summary_hands x JOIN sel USING (run)"
        f" WHERE {HAND_BIT}) SELECT coalesce(sum(n), 0) AS clusters, {cols} FROM h"
    )


def paired_moments(run_a: str, run_b: str, active: int) -> Statement:
    """One row over the deals both runs played: ``clusters``, the cluster sums of each run
    (``a_…`` and ``b_…`` as in :func:`run_moments`) and for every figure the cross sums
    ``x_{name}_yu, _yn, _mu, _mn`` (:class:`~replay.analysis.intervals.CrossSums`)."""
    p = Params()
    p.bind(active, "active")
    sums = ", ".join(_sums(side, name) for side in "ab" for name, _ in METRICS)
    cross = ", ".join(
        f"sum(a_{n}_y * b_{n}_y) AS x_{n}_yu, sum(a_{n}_y * b_{n}_m) AS x_{n}_yn,"
        f" sum(a_{n}_m * b_{n}_y) AS x_{n}_mu, sum(a_{n}_m * b_{n}_m) AS x_{n}_mn"
        for n, _ in METRICS
    )
    return p.statement(
        f"WITH a AS ({_per_deal(p, run_a, 'a')}), b AS ({_per_deal(p, run_b, 'b')})"
        f" SELECT count(*) AS clusters, {sums}, {cross} FROM a JOIN b USING (deal_id)"
    )
