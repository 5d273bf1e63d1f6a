"""Exact deal probabilities by counting (RULES.md §1, §3, §9 step 2). No engine, no sampling.

The deck is 20 faces × 4 copies. The dealer holds 21 dealt cards (the 亮张 included), each
other player 20. A player's dealt cards **qualify** for the automatic 3提/5坎 天胡 with ≥3
four-of-a-kinds (提), or 提 + 坎 ≥ 5, a 坎 being exactly three of a kind.

Method: a face's 4 copies split between hand A (i copies), hand B (j copies) and the rest in
C(4, i)·C(4−i, j) ways. Each face falls in exactly one class: 提 of A (i = 4), 坎 of A (i = 3,
j ≤ 1), 提 of B, 坎 of B, or neither (i, j ≤ 2). Choosing how many faces fall in each special
class (a multinomial over the 20 faces) and filling the remaining card counts from the
polynomial of the "neither" class counts every deal exactly once, in integers. The result is
a :class:`fractions.Fraction`.

>>> p = auto_tianhu_probability(21)
>>> float(p)  # doctest: +ELLIPSIS
9.3085...e-05
>>> sum(ti_kan_distribution(20).values())
Fraction(1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb, factorial

FACES = 20
COPIES = 4
DECK_SIZE = FACES * COPIES
DEALER_CARDS = 21
OTHER_CARDS = 20


def qualifies(ti: int, kan: int) -> bool:
    """3提/5坎: ≥3 提, or 提 + 坎 ≥ 5 (a 提 may stand in for a 坎, not the reverse).

    >>> qualifies(3, 0), qualifies(2, 3), qualifies(2, 2), qualifies(0, 5)
    (True, True, False, True)
    """
    return ti >= 3 or ti + kan >= 5


def _ways(i: int, j: int) -> int:
    """Ways to send i of a face's 4 copies to hand A and j to hand B."""
    return comb(COPIES, i) * comb(COPIES - i, j)


@cache
def _plain_powers(max_a: int, max_b: int) -> tuple[dict[tuple[int, int], int], ...]:
    """Coefficients of P(x, y)^r, r = 0..FACES, P = Σ_{i,j ≤ 2} ways(i, j)·xⁱ·yʲ: faces that
    are neither 提 nor 坎 in A or B. Truncated at degrees (max_a, max_b)."""
    base = {(i, j): _ways(i, j) for i in range(3) for j in range(3)}
    powers = [{(0, 0): 1}]
    for _ in range(FACES):
        nxt: dict[tuple[int, int], int] = {}
        for (a, b), c in powers[-1].items():
            for (i, j), w in base.items():
                if a + i <= max_a and b + j <= max_b:
                    nxt[(a + i, b + j)] = nxt.get((a + i, b + j), 0) + c * w
        powers.append(nxt)
    return tuple(powers)


@cache
def _joint_counts(n_a: int, n_b: int) -> dict[tuple[int, int, int, int], int]:
    """The number of deals of n_a cards to A and n_b to B, by (提 A, 坎 A, 提 B, 坎 B)."""
    if n_a < 0 or n_b < 0 or n_a + n_b > DECK_SIZE:
        raise ValueError(f"cannot deal {n_a} and {n_b} cards from {DECK_SIZE}")
    # one table for every deal of the game (truncating a larger one drops no needed term)
    powers = _plain_powers(max(n_a, n_b, DEALER_CARDS), max(n_a, n_b, DEALER_CARDS))
    out: dict[tuple[int, int, int, int], int] = {}
    for ta in range(n_a // 4 + 1):
        for ka in range((n_a - 4 * ta) // 3 + 1):
            for tb in range(n_b // 4 + 1):
                for kb in range((n_b - 4 * tb) // 3 + 1):
                    rest = FACES - ta - ka - tb - kb
                    if rest < 0:
                        continue
                    left_a = n_a - 4 * ta - 3 * ka
                    left_b = n_b - 4 * tb - 3 * kb
                    # A's 坎 faces send their 4th copy to B or not: (4 + 4y)^ka; B's likewise.
                    fill = 0
                    for q in range(min(ka, left_b) + 1):
                        for p in range(min(kb, left_a) + 1):
                            c = powers[rest].get((left_a - p, left_b - q))
                            if c:
                                fill += comb(ka, q) * comb(kb, p) * c
                    if fill:
                        faces = factorial(FACES) // (
                            factorial(ta)
                            * factorial(ka)
                            * factorial(tb)
                            * factorial(kb)
                            * factorial(rest)
                        )
                        out[(ta, ka, tb, kb)] = faces * 4 ** (ka + kb) * fill
    return out


def _deals(n_a: int, n_b: int) -> int:
    return comb(DECK_SIZE, n_a) * comb(DECK_SIZE - n_a, n_b)


def ti_kan_distribution(cards: int) -> dict[tuple[int, int], Fraction]:
    """P(提 = t, 坎 = k) for a hand of ``cards`` cards dealt from the full deck.

    >>> d = ti_kan_distribution(21)
    >>> round(float(d[(0, 0)]), 4), round(float(d[(1, 1)]), 4)
    (0.2686, 0.0293)
    """
    total = _deals(cards, 0)
    out: dict[tuple[int, int], Fraction] = {}
    for (ta, ka, _, _), c in sorted(_joint_counts(cards, 0).items()):
        out[(ta, ka)] = Fraction(c, total)
    return out


def auto_tianhu_probability(cards: int) -> Fraction:
    """P(one player's ``cards`` dealt cards qualify for the 3提/5坎 天胡)."""
    return sum(
        (p for (t, k), p in ti_kan_distribution(cards).items() if qualifies(t, k)), Fraction(0)
    )


def auto_tianhu_joint_probability(cards_a: int, cards_b: int) -> Fraction:
    """P(two given players, dealt ``cards_a`` and ``cards_b`` cards, both qualify)."""
    hits = sum(
        c
        for (ta, ka, tb, kb), c in _joint_counts(cards_a, cards_b).items()
        if qualifies(ta, ka) and qualifies(tb, kb)
    )
    return Fraction(hits, _deals(cards_a, cards_b))


@dataclass(frozen=True)
class AutoTianhuOdds:
    """How often a 3-player hand ends at once in the automatic 3提/5坎 天胡 (§9 step 2).

    The check runs dealer, 下家, 上家 and the first qualifying player wins, so a seat's share is
    the probability that it qualifies and no earlier seat does. ``dealer`` is exact; the
    上家's share and ``per_hand`` need P(all three qualify), which is not computed: it lies in
    ``[0, triple_bound]`` and the fields take it as 0, so ``per_hand`` is a lower bound within
    ``triple_bound`` of the exact value.
    """

    dealer: float  # P(the dealer qualifies)
    xiajia: float  # P(下家 qualifies, the dealer does not)
    shangjia: float  # P(上家 qualifies, neither earlier seat does), up to the triple term
    per_hand: float  # P(the hand ends in a 3提/5坎 天胡), up to the triple term
    triple_bound: float  # an upper bound on P(all three qualify)
    dealer_alone: float  # P(the dealer's 21 cards qualify) == dealer
    other_alone: float  # P(a non-dealer's 20 cards qualify), ignoring the others

    @property
    def non_dealer(self) -> float:
        """P(the hand is won by a non-dealer's 3提/5坎 天胡)."""
        return self.xiajia + self.shangjia


@cache
def auto_tianhu_odds() -> AutoTianhuOdds:
    """The per-hand odds of the automatic 天胡 in the 3-player deal (21/20/20 cards).

    >>> o = auto_tianhu_odds()
    >>> f"{o.dealer:.4e} {o.other_alone:.4e} {o.per_hand:.4e}"
    '9.3086e-05 2.9376e-05 1.5181e-04'
    >>> o.triple_bound < 1e-4 * o.per_hand
    True
    """
    p_d = auto_tianhu_probability(DEALER_CARDS)
    p_o = auto_tianhu_probability(OTHER_CARDS)
    j_do = auto_tianhu_joint_probability(DEALER_CARDS, OTHER_CARDS)
    j_oo = auto_tianhu_joint_probability(OTHER_CARDS, OTHER_CARDS)
    xiajia = p_o - j_do
    shangjia = p_o - j_do - j_oo  # + P(all three), in [0, min(j_do, j_oo)]
    return AutoTianhuOdds(
        dealer=float(p_d),
        xiajia=float(xiajia),
        shangjia=float(shangjia),
        per_hand=float(p_d + xiajia + shangjia),
        triple_bound=float(min(j_do, j_oo)),
        dealer_alone=float(p_d),
        other_alone=float(p_o),
    )
