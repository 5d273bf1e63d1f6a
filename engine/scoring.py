"""Scoring 计分: 等, 番, score and settlement (RULES.md §11.2–§11.5, §14).

>>> hunan_deng(18)
2
>>> hunan_deng(18, zimo=True)
3
>>> hunan_deng(39, tianhu=True)
23
>>> luzhou_deng(12)
3
>>> settle(2, 0, (0, 1, 2), 3)
(4, -2, -2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.mingtang import (
    MingTang,
    MingTangContext,
    hunan_mingtang,
    luzhou_mingtang,
)
from engine.rules import RuleSet


def hunan_deng(huxi: int, zimo: bool = False, tianhu: bool = False, formula: str = "double") -> int:
    """等 (deng): ⌊(胡息−12)/3⌋, +1 for 自摸 (before the 番, C18).

    A 天胡 counts as 自摸 (C5). ``formula='double'``: ⌊(2·胡息−12)/3⌋ + 1, where the +1 is
    that 自摸 (§11.2); ``'plain'``: the ordinary 等 + 1.

    The table is defined from 15 胡息 (1 等). Under a lower threshold (``--set min_huxi=10``)
    a win below 15 still scores the 1 等 of the lowest row, never 0 or less: a win never
    costs the winner.

    >>> [hunan_deng(h) for h in (15, 17, 18, 21)], hunan_deng(18, zimo=True)
    ([1, 1, 2, 3], 3)
    >>> [hunan_deng(h) for h in (10, 11, 12, 14)]
    [1, 1, 1, 1]
    """
    if tianhu:
        if formula == "double":
            return max(1, (2 * huxi - 12) // 3) + 1
        return max(1, (huxi - 12) // 3) + 1
    return max(1, (huxi - 12) // 3) + (1 if zimo else 0)


def luzhou_deng(hu: int, zimo: bool = False, formula: str = "minus9") -> int:
    """等 (deng), Luzhou (C23): 胡 − 9; alternative ``'thirds'``: 1 + ⌊(胡 − 10)/3⌋.

    自摸 (天胡 included) adds 1 before the multiplier (C36, C18).
    """
    base = hu - 9 if formula == "minus9" else 1 + (hu - 10) // 3
    return max(1, base) + (1 if zimo else 0)  # as Hunan: a win below the table scores 1


def combine_fan(
    found: Sequence[type[MingTang]], ctx: MingTangContext
) -> tuple[int, tuple[tuple[str, int], ...]]:
    """番 (fan) of the Hunan 名堂 found: their sum, 平胡 = 1 (§11.3).

    A ``needs_other`` pattern (海底) counts only beside another counting 名堂; a ``combo``
    bonus (乌胡 + 对对胡 = 10, C20) is booked on the pattern that declares it. Returns the
    番 and the (name, 番) items that counted, whose 番 add up to it (平胡: no items).
    """
    present = {m.pinyin for m in found}
    counting = list(found) if any(not m.needs_other for m in found) else []
    items: list[tuple[str, int]] = []
    for m in counting:
        f = m.fan_for(ctx) + sum(v for p, v in m.combo.items() if p in present)
        items.append((m.name, f))
    total = sum(f for _, f in items)
    return (total if items else 1), tuple(items)


def luzhou_multiplier(found: Sequence[type[MingTang]]) -> tuple[int, tuple[tuple[str, int], ...]]:
    """Luzhou multiplier (C36): the product of the multipliers found (1 if none)."""
    mult = 1
    for m in found:
        mult *= m.fan
    return mult, tuple((m.name, m.fan) for m in found)


@dataclass(frozen=True, slots=True)
class Score:
    """A win's 等, 名堂 items, 番 (Luzhou: multiplier) and score S = 等 × 番."""

    deng: int
    mingtang: tuple[tuple[str, int], ...]
    fan: int
    score: int


def score_hu(rules: RuleSet, huxi: int, ctx: MingTangContext) -> Score:
    """Score a win of ``huxi`` 胡息 (Luzhou: 胡) in context ``ctx`` under ``rules``."""
    zimo = ctx.zimo or ctx.tianhu
    if rules.luzhou:
        deng = luzhou_deng(huxi, zimo)
        fan, items = luzhou_multiplier(luzhou_mingtang(ctx, rules.luzhou_di_mode))
    else:
        deng = hunan_deng(huxi, zimo, ctx.tianhu, rules.tianhu_formula)
        fan, items = combine_fan(hunan_mingtang(ctx, rules.huayang), ctx)
    return Score(deng, items, fan, deng * fan)


def settle(score: int, winner: int, active_seats: Sequence[int], n_seats: int) -> tuple[int, ...]:
    """Zero-sum settlement (§11.4, C24): each active loser pays S; a sitter pays nothing.

    >>> settle(3, 1, (0, 1, 3), 4)
    (-3, 6, 0, -3)
    """
    deltas = [0] * n_seats
    losers = [s for s in active_seats if s != winner]
    for s in losers:
        deltas[s] = -score
    deltas[winner] = score * len(losers)
    return tuple(deltas)
