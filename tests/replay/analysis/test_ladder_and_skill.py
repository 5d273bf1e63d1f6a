"""The strength ladder's rating (replay.analysis.ladder) and the skill-against-luck
decomposition (replay.analysis.skill) recover what synthetic data was made from."""

from __future__ import annotations

import math

import numpy as np
import pytest

from replay.analysis.intervals import paired_ratio_diff_ci
from replay.analysis.ladder import ANCHOR_ELO, bradley_terry
from replay.analysis.skill import decompose


def test_bradley_terry_recovers_the_ratings() -> None:
    """Matches drawn from known Elo ratings: each estimate within its interval's reach, the
    anchor fixed, the order right."""
    true = {"a": 1700.0, "b": 1500.0, "c": 1350.0, "d": 1000.0}
    rng = np.random.default_rng(3)
    duels = []
    names = sorted(true)
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            p = 1.0 / (1.0 + 10 ** ((true[y] - true[x]) / 400.0))
            n = 4000
            won = int(rng.binomial(n, p))
            duels.append((x, y, won, n - won, 0))
    ratings = {r.policy: r for r in bradley_terry(duels, anchor="b")}
    assert ratings["b"].elo == ANCHOR_ELO == ratings["b"].lo == ratings["b"].hi
    for name, r in ratings.items():
        assert r.lo - 10 <= true[name] <= r.hi + 10, (name, r)
    assert [r.policy for r in bradley_terry(duels, anchor="b")] == ["a", "b", "c", "d"]


def test_a_policy_that_won_every_match_has_a_finite_rating() -> None:
    ratings = bradley_terry([("a", "b", 50, 0, 0), ("b", "c", 30, 20, 5)], anchor="b")
    assert all(math.isfinite(r.elo) and math.isfinite(r.hi) for r in ratings)
    assert ratings[0].policy == "a" and ratings[0].elo > ANCHOR_ELO + 300


def test_an_unknown_anchor_is_refused() -> None:
    with pytest.raises(ValueError, match="anchor"):
        bradley_terry([("a", "b", 1, 1, 0)], anchor="z")


def _rows(deals: int, mus: dict[str, float], cards: float, rest: float, seed: int) -> list:
    rng = np.random.default_rng(seed)
    pols = sorted(mus)
    k = len(pols)
    rows = []
    for d in range(deals):
        c = rng.normal(0.0, cards, size=k)
        for r in range(k):
            for s in range(k):
                p = pols[(r + s) % k]
                rows.append((d, r, s, p, mus[p] + c[s] + rng.normal(0.0, rest)))
    return rows


def test_the_decomposition_recovers_its_components() -> None:
    """y = μ_p + c + e with Var(μ_p) = 2/3, Var(c) = 4, Var(e) = 1: shares 0.118, 0.706,
    0.176, each inside its bootstrap interval (widened by a little for the seed)."""
    d = decompose(_rows(6000, {"a": 1.0, "b": 0.0, "c": -1.0}, 2.0, 1.0, 5))
    total = 2 / 3 + 4 + 1
    for got, want in ((d.policy, 2 / 3 / total), (d.cards, 4 / total), (d.rest, 1 / total)):
        assert got.lo - 0.01 <= want <= got.hi + 0.01, (got, want)
    assert d.deals == 6000 and d.seat_hands == 6000 * 9 and d.policies == ("a", "b", "c")
    eight = dict(d.growth)[8]
    want8 = 8 * (2 / 3) / (8 * (2 / 3) + 5)
    assert eight.lo - 0.02 <= want8 <= eight.hi + 0.02
    assert d.half_at.lo - 0.5 <= 5 / (2 / 3) <= d.half_at.hi + 0.5
    # the same rows, the same numbers (a fixed bootstrap seed)
    assert decompose(_rows(6000, {"a": 1.0, "b": 0.0, "c": -1.0}, 2.0, 1.0, 5)) == d


def test_equal_policies_explain_nothing() -> None:
    d = decompose(_rows(3000, {"a": 0.0, "b": 0.0, "c": 0.0}, 1.0, 1.0, 7))
    assert d.policy.lo <= 0.0 + 1e-3 and d.policy.share < 0.005


def test_paired_ratio_difference_with_unequal_weights() -> None:
    """The paired difference of two ratio means (mean 胡息 of a win in two runs of the same
    deals) against a bootstrap of the same data."""
    from replay.analysis.intervals import ClusterSums, CrossSums

    rng = np.random.default_rng(11)
    n = 4000
    won_a, won_b = rng.random(n) < 0.8, rng.random(n) < 0.7
    base = rng.normal(20, 4, n)
    y_a, y_b = np.where(won_a, base + 1.0, 0.0), np.where(won_b, base, 0.0)
    m_a, m_b = won_a.astype(float), won_b.astype(float)

    def sums(y: np.ndarray, m: np.ndarray) -> ClusterSums:
        return ClusterSums(n, y.sum(), m.sum(), (y * y).sum(), (y * m).sum(), (m * m).sum())

    cross = CrossSums((y_a * y_b).sum(), (y_a * m_b).sum(), (m_a * y_b).sum(), (m_a * m_b).sum())
    diff, lo, hi = paired_ratio_diff_ci(sums(y_a, m_a), sums(y_b, m_b), cross)
    assert math.isclose(diff, y_a.sum() / m_a.sum() - y_b.sum() / m_b.sum())
    idx = rng.integers(0, n, size=(1000, n))
    boot = y_a[idx].sum(1) / m_a[idx].sum(1) - y_b[idx].sum(1) / m_b[idx].sum(1)
    b_lo, b_hi = np.percentile(boot, [2.5, 97.5])
    assert abs((hi - lo) - (b_hi - b_lo)) < 0.15 * (b_hi - b_lo)


def test_a_policy_linked_to_no_other_is_named() -> None:
    with pytest.raises(ValueError, match="no match links c, d to the anchor 'a'"):
        bradley_terry([("a", "b", 3, 1, 0), ("c", "d", 2, 2, 0)], anchor="a")


def test_a_partial_duplicate_run_is_refused() -> None:
    rows = _rows(20, {"a": 0.0, "b": 0.0, "c": 0.0}, 1.0, 1.0, 1)
    with pytest.raises(ValueError, match="not a whole duplicate run"):
        decompose(rows[:-1])  # the last deal's last seat played twice only
