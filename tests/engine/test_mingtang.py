"""Unit tests of engine.mingtang: every 名堂 predicate, positive and negative (RULES.md §11.3, §14)."""

from __future__ import annotations

import pytest

from engine.cards import parse_cards
from engine.groups import Group, GroupKind
from engine.melds import parse_meld
from engine.mingtang import (
    HUNAN_MINGTANG,
    LUZHOU_MINGTANG,
    REGISTRY,
    MingTang,
    MingTangContext,
    hunan_mingtang,
    luzhou_mingtang,
    mingtang_context,
)

M = REGISTRY


def ctx(red: int = 5, big: int = 10, small: int = 11, **kw: object) -> MingTangContext:
    return MingTangContext(red, big, small, **kw)  # type: ignore[arg-type]


DUIDUI_GROUPS = (
    parse_meld("pao:五"),
    parse_meld("wei:肆"),
    parse_meld("peng:叁"),
    Group(GroupKind.KAN, (18, 18, 18)),
    Group(GroupKind.PENG_HU, (5, 5, 5)),
    Group(GroupKind.JIANG, (8, 8)),
    parse_meld("ti:八"),
)
WITH_SENTENCE = DUIDUI_GROUPS[:-1] + (Group(GroupKind.SENTENCE, (0, 1, 2)),)
WITH_CHI = DUIDUI_GROUPS[:-1] + (parse_meld("chi:九,九,玖"),)


def test_registry_metadata() -> None:
    assert len(REGISTRY) == len(HUNAN_MINGTANG) + len(LUZHOU_MINGTANG)
    names = {m.name for m in HUNAN_MINGTANG}
    assert names == {
        "红胡",
        "点胡",
        "红乌",
        "乌胡",
        "对对胡",
        "海底",
        "大字胡",
        "小字胡",
        "地胡",
        "耍猴",
    }
    for m in HUNAN_MINGTANG:
        assert m.level in ("basic", "half", "full")
        assert m.__doc__ and m.name in m.__doc__.splitlines()[0]
    assert {m.pinyin for m in HUNAN_MINGTANG if m.level == "basic"} == {
        "honghu",
        "dianhu",
        "hongwu",
        "wuhu",
    }


@pytest.mark.parametrize(
    ("pinyin", "yes", "no"),
    [
        ("honghu", [ctx(red=10), ctx(red=12)], [ctx(red=9), ctx(red=13)]),
        ("dianhu", [ctx(red=1)], [ctx(red=0), ctx(red=2)]),
        ("hongwu", [ctx(red=13), ctx(red=20)], [ctx(red=12)]),
        ("wuhu", [ctx(red=0)], [ctx(red=1)]),
        ("haidi", [ctx(haidi=True)], [ctx()]),
        ("dazihu", [ctx(big=18), ctx(big=21)], [ctx(big=17)]),
        ("xiaozihu", [ctx(small=16), ctx(small=21)], [ctx(small=15)]),
        ("dihu", [ctx(dihu=True)], [ctx()]),
        (
            "duiduihu",
            [ctx(groups=DUIDUI_GROUPS)],
            [
                ctx(groups=WITH_SENTENCE),
                ctx(groups=WITH_CHI),
                ctx(groups=()),
                ctx(groups=DUIDUI_GROUPS, auto_tianhu=True),  # C7
            ],
        ),
        (
            "shuahou",
            [ctx(groups=DUIDUI_GROUPS, hand_size=1)],
            [ctx(groups=DUIDUI_GROUPS, hand_size=4), ctx(groups=(), hand_size=1)],
        ),
        ("lz_honghu", [ctx(red=10), ctx(red=20)], [ctx(red=9)]),
        ("lz_wu", [ctx(red=0)], [ctx(red=1)]),
        ("lz_tianhu", [ctx(tianhu=True)], [ctx()]),
        ("lz_dihu", [ctx(dihu=True)], [ctx()]),
    ],
)
def test_predicate(pinyin: str, yes: list[MingTangContext], no: list[MingTangContext]) -> None:
    m: type[MingTang] = M[pinyin]
    assert all(m.applies(c) for c in yes)
    assert not any(m.applies(c) for c in no)


def test_variable_fan() -> None:
    # C19: 大字胡 6 + (B − 18), 小字胡 8 + (S − 16).
    assert M["dazihu"].fan_for(ctx(big=18)) == 6
    assert M["dazihu"].fan_for(ctx(big=21)) == 9
    assert M["xiaozihu"].fan_for(ctx(small=21)) == 13


def test_basic_patterns_exclusive() -> None:
    for red in range(25):
        c = ctx(red=red)
        found = hunan_mingtang(c, "basic")
        assert len(found) <= 1


def test_level_filter() -> None:
    c = ctx(red=11, big=19, groups=DUIDUI_GROUPS, haidi=True, dihu=True, hand_size=1)
    assert [m.pinyin for m in hunan_mingtang(c, "basic")] == ["honghu"]
    assert [m.pinyin for m in hunan_mingtang(c, "half")] == ["honghu", "duiduihu", "haidi"]
    assert [m.pinyin for m in hunan_mingtang(c, "full")] == [
        "honghu",
        "duiduihu",
        "haidi",
        "dazihu",
        "dihu",
        "shuahou",
    ]


def test_auto_tianhu_card_count_only() -> None:
    # C7: a 3提/5坎 天胡 keeps only the card-count 名堂.
    c = ctx(red=0, big=18, groups=DUIDUI_GROUPS, haidi=True, auto_tianhu=True, tianhu=True)
    assert [m.pinyin for m in hunan_mingtang(c, "full")] == ["wuhu", "dazihu"]


def test_luzhou_modes() -> None:
    c = ctx(red=0, tianhu=True)
    assert [m.pinyin for m in luzhou_mingtang(c, "b")] == ["lz_wu", "lz_tianhu"]
    assert [m.pinyin for m in luzhou_mingtang(c, "a")] == ["lz_tianhu"]


def test_context_counts_every_card() -> None:
    cards = parse_cards("二七十 贰柒拾 一三 壹叁")
    c = mingtang_context(cards, ())
    assert (c.red, c.big, c.small) == (6, 5, 5)
