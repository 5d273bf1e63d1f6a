"""Unit tests of engine.scoring: 等, 番, score, settlement (RULES.md §11.2–§11.4, §14)."""

from __future__ import annotations

import itertools

import pytest

from engine.groups import Group, GroupKind
from engine.mingtang import REGISTRY, MingTangContext, mingtang_context
from engine.rules import find_rules
from engine.scoring import combine_fan, hunan_deng, luzhou_deng, score_hu, settle

M = REGISTRY


@pytest.mark.parametrize(
    ("huxi", "deng"),
    [(15, 1), (16, 1), (17, 1), (18, 2), (20, 2), (21, 3), (23, 3), (24, 4), (39, 9)],
)
def test_deng_table(huxi: int, deng: int) -> None:
    # §11.2: "15胡息為1等…18胡息為2等，20胡息也為2等，21胡息3等".
    assert hunan_deng(huxi) == deng
    assert hunan_deng(huxi, zimo=True) == deng + 1  # C18: +1 before the 番


def test_tianhu_double_formula() -> None:
    # §11.2 and Examples 13, 14, 15: ⌊(2h−12)/3⌋ + 1, the +1 being the 自摸 (not added twice).
    assert hunan_deng(39, tianhu=True) == 23
    assert hunan_deng(30, tianhu=True) == 17
    assert hunan_deng(18, tianhu=True) == 9
    assert hunan_deng(18, zimo=True, tianhu=True) == 9


def test_tianhu_plain_formula() -> None:
    # Appendix B switch tianhu_formula=plain: the ordinary 等 + the 自摸 1.
    assert hunan_deng(18, tianhu=True, formula="plain") == 3
    assert hunan_deng(39, tianhu=True, formula="plain") == 10


def test_luzhou_deng() -> None:
    # C23: 胡 − 9; alternative 1 + ⌊(胡 − 10)/3⌋; 自摸 +1 (C36).
    assert [luzhou_deng(h) for h in (10, 11, 12, 33)] == [1, 2, 3, 24]
    assert luzhou_deng(33, zimo=True) == 25
    assert [luzhou_deng(h, formula="thirds") for h in (10, 12, 13, 33)] == [1, 1, 2, 8]


def _ctx(red: int = 5, big: int = 10, small: int = 11, **flags: bool) -> MingTangContext:
    return MingTangContext(red, big, small, (), **flags)


def test_fan_pinghu_is_one() -> None:
    assert combine_fan([], _ctx()) == (1, ())


def test_fan_haidi_alone_is_pinghu() -> None:
    # §11.3: 平胡海底 = 1; 海底 counts only beside another 名堂.
    assert combine_fan([M["haidi"]], _ctx(haidi=True)) == (1, ())


def test_fan_haidi_with_red_hu() -> None:
    fan, items = combine_fan([M["honghu"], M["haidi"]], _ctx(red=11, haidi=True))
    assert fan == 4 and items == (("红胡", 2), ("海底", 2))


def test_fan_wu_duidui_is_ten() -> None:
    # C20: 乌胡 + 对对胡 contribute 10, other 名堂 add on.
    fan, items = combine_fan([M["wuhu"], M["duiduihu"]], _ctx(red=0))
    assert fan == 10 and sum(f for _, f in items) == 10
    fan, _ = combine_fan([M["wuhu"], M["duiduihu"], M["haidi"]], _ctx(red=0, haidi=True))
    assert fan == 12
    fan, _ = combine_fan([M["wuhu"], M["duiduihu"], M["dihu"]], _ctx(red=0, dihu=True))
    assert fan == 14


def test_fan_sums_and_variable_fan() -> None:
    ctx = _ctx(red=11, big=20, small=3)
    fan, items = combine_fan([M["honghu"], M["dazihu"], M["duiduihu"]], ctx)
    assert items == (("红胡", 2), ("大字胡", 8), ("对对胡", 4))
    assert fan == 14


def test_score_hu_hunan_levels() -> None:
    g = (Group(GroupKind.PENG, (1, 1, 1)),)
    ctx = mingtang_context([1] * 11 + [0] * 10, g, haidi=True)
    half = score_hu(find_rules("hunan"), 21, ctx)
    # Only same-face groups: 红胡 2 + 对对胡 4 + 海底 2 (海底 counts beside other 名堂).
    assert half.mingtang == (("红胡", 2), ("对对胡", 4), ("海底", 2))
    assert (half.deng, half.fan, half.score) == (3, 8, 24)
    basic = score_hu(find_rules("hunan-basic"), 21, ctx)
    assert (basic.deng, basic.mingtang, basic.score) == (3, (("红胡", 2),), 6)


def test_score_hu_luzhou_multipliers() -> None:
    lz = find_rules("luzhou")
    # 乌 ×4 and 天胡 ×2 multiply (C36); 天胡 is 自摸: +1 等 on 胡 − 9.
    ctx = mingtang_context([0] * 21, (), tianhu=True)
    s = score_hu(lz, 12, ctx)
    assert (s.deng, s.fan, s.score) == (4, 8, 32)
    assert s.mingtang == (("乌", 4), ("天胡", 2))
    a = score_hu(lz.with_overrides(["luzhou_di_mode=a"]), 12, ctx)
    assert (a.deng, a.fan, a.score) == (4, 2, 8)
    red = mingtang_context([1] * 15 + [0] * 6, (), dihu=True)
    s = score_hu(lz, 10, red)
    assert (s.deng, s.fan, s.score) == (1, 4, 4)


@pytest.mark.parametrize("n_seats", [3, 4])
def test_settle_zero_sum(n_seats: int) -> None:
    for winner, score in itertools.product(range(3), (1, 7, 48)):
        active = (0, 1, 2)
        d = settle(score, winner, active, n_seats)
        assert sum(d) == 0
        assert d[winner] == 2 * score
        assert all(d[s] == -score for s in active if s != winner)
        if n_seats == 4:
            assert d[3] == 0


def test_settle_sitter_in_the_middle() -> None:
    assert settle(5, 3, (0, 1, 3), 4) == (-5, -5, 0, 10)


def test_deng_never_below_one_under_a_lower_threshold_bug() -> None:
    # With `--set min_huxi=10` a Hunan win of 10–14 胡息 had 等 ≤ 0 and the winner lost points.
    for h in range(10, 15):
        assert hunan_deng(h) == 1
        assert hunan_deng(h, zimo=True) == 2
    assert luzhou_deng(8) == 1
