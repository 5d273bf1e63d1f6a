"""提 and 坎 dealt to the dealer (21 cards) and to a non-dealer (20) follow their exact law.

The exact law is computed here, independently of ``replay.analysis.exact`` (which counts by a
different decomposition): a hand of n cards is a choice of how many of the 20 faces it holds
4, 3, 2, 1 or 0 copies of, a multinomial over faces times C(4, c) copies for each face held c
times, over C(80, n) (the multivariate hypergeometric law of the face counts).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, factorial

import pytest

from engine.deck import derive_seed, shuffle_deck
from engine.state import Game, OutcomeKind
from replay.analysis import exact
from replay.analysis.intervals import chi_square_gof

SEED = 77_2024
N_DEALS = 30_000
LEVEL = 0.001


def exact_ti_kan(n: int) -> dict[tuple[int, int], Fraction]:
    """P(提 = t, 坎 = k) for n cards from 20 faces × 4 copies."""
    counts: dict[tuple[int, int], int] = {}
    for t in range(n // 4 + 1):
        for k in range((n - 4 * t) // 3 + 1):
            for pairs in range((n - 4 * t - 3 * k) // 2 + 1):
                singles = n - 4 * t - 3 * k - 2 * pairs
                empty = 20 - t - k - pairs - singles
                if empty < 0:
                    continue
                faces = factorial(20) // (
                    factorial(t)
                    * factorial(k)
                    * factorial(pairs)
                    * factorial(singles)
                    * factorial(empty)
                )
                ways = faces * comb(4, 3) ** k * comb(4, 2) ** pairs * comb(4, 1) ** singles
                counts[(t, k)] = counts.get((t, k), 0) + ways
    total = comb(80, n)
    assert sum(counts.values()) == total
    return {tk: Fraction(c, total) for tk, c in counts.items()}


@pytest.fixture(scope="module")
def deals() -> list[tuple[tuple[int, int], tuple[int, int], tuple[int, int], int | None]]:
    """Per deal: (提, 坎) of dealer, 下家, 上家, and who (0 dealer, 1 下家, 2 上家) won the
    automatic 天胡 when the engine ended the hand with one."""
    game = Game()
    out = []
    for i in range(N_DEALS):
        dealer = i % 3
        state = game.new_initial_state(shuffle_deck(derive_seed(SEED, "deal", i)), dealer)
        tk = []
        for seat in state.active:
            h = state.hands[seat]
            tk.append((h.count(4), h.count(3)))
        assert sum(state.hands[state.active[0]]) == 21
        assert sum(state.hands[state.active[1]]) == sum(state.hands[state.active[2]]) == 20
        auto = None
        if state.outcome is not None and state.outcome.kind == OutcomeKind.TIANHU_AUTO:
            auto = state.active.index(state.outcome.winner)
        out.append((tk[0], tk[1], tk[2], auto))
    return out


def _gof(sample: list[tuple[int, int]], law: dict[tuple[int, int], Fraction]):
    cells = sorted(law)
    observed = [sum(1 for s in sample if s == c) for c in cells]
    assert sum(observed) == len(sample), "a (提, 坎) outside the support of the exact law"
    return chi_square_gof(observed, [float(law[c]) for c in cells])


def test_exact_law_matches_replay_exact() -> None:
    for n in (20, 21):
        assert exact.ti_kan_distribution(n) == exact_ti_kan(n)


def test_dealer_auto_tianhu_probability() -> None:
    law = exact_ti_kan(21)
    p = sum(v for (t, k), v in law.items() if t >= 3 or t + k >= 5)
    assert p == exact.auto_tianhu_probability(21)
    assert float(p) == pytest.approx(9.3086e-5, rel=1e-4)


def test_auto_tianhu_odds_are_consistent() -> None:
    o = exact.auto_tianhu_odds()
    p20 = float(sum(v for (t, k), v in exact_ti_kan(20).items() if t >= 3 or t + k >= 5))
    assert o.dealer_alone == o.dealer
    assert o.other_alone == pytest.approx(p20, rel=1e-12)
    # Seats later in the order lose only the rare deals where an earlier seat also qualifies.
    assert o.shangjia < o.xiajia < o.other_alone < o.dealer
    assert o.other_alone - o.xiajia < 1e-7
    assert o.per_hand == pytest.approx(o.dealer + o.xiajia + o.shangjia)
    assert o.per_hand <= o.dealer + 2 * o.other_alone
    assert 0 < o.triple_bound < 1e-4 * o.per_hand


def test_joint_counts_marginalise_to_one_hand() -> None:
    # Summing the two-hand table over B's (提, 坎) must give A's own law.
    joint = exact._joint_counts(21, 20)
    marg: dict[tuple[int, int], int] = {}
    for (ta, ka, _, _), c in joint.items():
        marg[(ta, ka)] = marg.get((ta, ka), 0) + c
    law = exact_ti_kan(21)
    total = comb(80, 21) * comb(59, 20)
    assert {tk: Fraction(c, total) for tk, c in marg.items() if c} == law


def test_dealer_ti_kan_distribution(deals) -> None:
    r = _gof([d[0] for d in deals], exact_ti_kan(21))
    assert r.p_value > LEVEL, f"dealer: X²={r.statistic:.1f}, df={r.df}, p={r.p_value:.2e}"


@pytest.mark.parametrize("seat", [1, 2], ids=["xiajia", "shangjia"])
def test_non_dealer_ti_kan_distribution(deals, seat: int) -> None:
    r = _gof([d[seat] for d in deals], exact_ti_kan(20))
    assert r.p_value > LEVEL, f"seat {seat}: X²={r.statistic:.1f}, df={r.df}, p={r.p_value:.2e}"


def test_engine_declares_auto_tianhu_exactly_when_counts_qualify(deals) -> None:
    # Dealer first, then 下家, then 上家 (§9 step 2).
    seen = 0
    for dealer_tk, xia_tk, shang_tk, auto in deals:
        first = next(
            (i for i, (t, k) in enumerate((dealer_tk, xia_tk, shang_tk)) if exact.qualifies(t, k)),
            None,
        )
        assert auto == first
        seen += auto is not None
    assert seen > 0  # the sample holds a few (≈ 1.5e-4 × N_DEALS)
