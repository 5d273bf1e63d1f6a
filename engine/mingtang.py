"""名堂 (ming tang, fan patterns): one small class per pattern and a registry (RULES.md §11.3, §14).

Each pattern carries its metadata as class attributes (Chinese name, pinyin id, 花样 level,
番) and one predicate over a :class:`MingTangContext`. The calculator loops over the registry
filtered by level; it never names a pattern (STYLE §8).

>>> from engine.cards import parse_cards
>>> ctx = mingtang_context(parse_cards("二七十贰柒拾二七十贰二 一三四五六八九壹"), ())
>>> ctx.red
11
>>> [m.pinyin for m in hunan_mingtang(ctx, "half")]
['honghu']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from engine.cards import is_big, is_red
from engine.groups import SAME_FACE_KINDS, Group, GroupKind

LEVELS = {"basic": 0, "half": 1, "full": 2}

# Groups that keep a hand 对对胡: same-face groups and the 将 (no 一句话, no 绞).
_DUIDUI_KINDS = SAME_FACE_KINDS | {GroupKind.JIANG}


@dataclass(frozen=True, slots=True)
class MingTangContext:
    """What a 名堂 predicate may look at.

    * ``red`` / ``big`` / ``small``: counts over **every** card of the winner (table melds
      including face-down ones, hand, hu card; §11.3).
    * ``groups``: the winning 门子 (table and hand); empty for a hand scored without groups.
    * ``hand_size``: hand cards before the hu card (耍猴 needs exactly 1).
    """

    red: int
    big: int
    small: int
    groups: tuple[Group, ...] = ()
    hand_size: int = -1
    haidi: bool = False
    dihu: bool = False
    zimo: bool = False
    tianhu: bool = False
    auto_tianhu: bool = False


def mingtang_context(
    cards: Iterable[int],
    groups: Sequence[Group],
    *,
    hand_size: int = -1,
    haidi: bool = False,
    dihu: bool = False,
    zimo: bool = False,
    tianhu: bool = False,
    auto_tianhu: bool = False,
) -> MingTangContext:
    """Build the context from all the winner's card kinds and his groups."""
    red = big = n = 0
    for k in cards:
        n += 1
        if is_big(k):
            big += 1
        if is_red(k):
            red += 1
    return MingTangContext(
        red, big, n - big, tuple(groups), hand_size, haidi, dihu, zimo, tianhu, auto_tianhu
    )


class MingTang:
    """Base of every 名堂. Subclasses set the class attributes and :meth:`applies`.

    * ``level``: the lowest 花样 level that knows the pattern (Hunan: basic/half/full;
      Luzhou: ``b`` = mode (b) only, ``a`` = both modes).
    * ``fan``: Hunan 番 (added); Luzhou: multiplier (multiplied).
    * ``card_count``: depends on the card counts only, so it is kept on a 3提/5坎 天胡 (C7).
    * ``needs_other``: counts only next to another counting 名堂 (海底, §11.3).
    * ``combo``: extra 番 when present together with the named patterns (C20).
    * ``bit``: the pattern's bit in the logs' 名堂 bitmask (``hands.mingtang``); stable: a new
      pattern takes a new bit, none is ever renumbered.
    """

    name: ClassVar[str]
    pinyin: ClassVar[str]
    level: ClassVar[str]
    fan: ClassVar[int] = 0
    card_count: ClassVar[bool] = False
    needs_other: ClassVar[bool] = False
    combo: ClassVar[dict[str, int]] = {}
    bit: ClassVar[int]

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        raise NotImplementedError

    @classmethod
    def fan_for(cls, ctx: MingTangContext) -> int:
        return cls.fan


class HongHu(MingTang):
    """红胡 (hong hu): 10 to 12 red cards."""

    name, pinyin, level, fan, card_count = "红胡", "honghu", "basic", 2, True
    bit = 0

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return 10 <= ctx.red <= 12


class DianHu(MingTang):
    """点胡 (dian hu): exactly one red card."""

    name, pinyin, level, fan, card_count = "点胡", "dianhu", "basic", 3, True
    bit = 1

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.red == 1


class HongWu(MingTang):
    """红乌 (hong wu): 13 or more red cards."""

    name, pinyin, level, fan, card_count = "红乌", "hongwu", "basic", 4, True
    bit = 2

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.red >= 13


class WuHu(MingTang):
    """乌胡 (wu hu): no red card."""

    name, pinyin, level, fan, card_count = "乌胡", "wuhu", "basic", 5, True
    bit = 3

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.red == 0


class DuiDuiHu(MingTang):
    """对对胡 (dui dui hu): every 门子 is same-face or the 将; never on a 3提/5坎 天胡 (C7).

    With 乌胡 the pair is worth 10, not 9 (C20): the extra 番 is booked on this pattern.
    """

    name, pinyin, level, fan = "对对胡", "duiduihu", "half", 4
    bit = 4
    combo = {"wuhu": 1}

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return (
            not ctx.auto_tianhu
            and bool(ctx.groups)
            and all(g.kind in _DUIDUI_KINDS for g in ctx.groups)
        )


class HaiDi(MingTang):
    """海底 (hai di): the hu card is the last stock card; alone it is 平胡 (平胡海底 = 1)."""

    name, pinyin, level, fan = "海底", "haidi", "half", 2
    bit = 5
    needs_other = True

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.haidi


class DaZiHu(MingTang):
    """大字胡 (da zi hu): 18 or more big cards, 6 番 plus 1 per card above 18 (C19)."""

    name, pinyin, level, card_count = "大字胡", "dazihu", "full", True
    bit = 6

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.big >= 18

    @classmethod
    def fan_for(cls, ctx: MingTangContext) -> int:
        return 6 + ctx.big - 18


class XiaoZiHu(MingTang):
    """小字胡 (xiao zi hu): 16 or more small cards, 8 番 plus 1 per card above 16 (C19)."""

    name, pinyin, level, card_count = "小字胡", "xiaozihu", "full", True
    bit = 7

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.small >= 16

    @classmethod
    def fan_for(cls, ctx: MingTangContext) -> int:
        return 8 + ctx.small - 16


class DiHu(MingTang):
    """地胡 (di hu): a non-dealer wins on the first stock card (C17)."""

    name, pinyin, level, fan = "地胡", "dihu", "full", 4
    bit = 8

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.dihu


class ShuaHou(MingTang):
    """耍猴 (shua hou): one hand card before the hu card, which makes the 将 (单钓)."""

    name, pinyin, level, fan = "耍猴", "shuahou", "full", 6
    bit = 9

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.hand_size == 1 and any(g.kind == GroupKind.JIANG for g in ctx.groups)


HUNAN_MINGTANG: tuple[type[MingTang], ...] = (
    HongHu,
    DianHu,
    HongWu,
    WuHu,
    DuiDuiHu,
    HaiDi,
    DaZiHu,
    XiaoZiHu,
    DiHu,
    ShuaHou,
)


# Luzhou (§14, C36): multipliers, not added 番.
class LuzhouHongHu(MingTang):
    """红胡 (hong hu), Luzhou mode (b): 10 or more red cards, ×2."""

    name, pinyin, level, fan, card_count = "红胡", "lz_honghu", "b", 2, True
    bit = 10

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.red >= 10


class LuzhouWu(MingTang):
    """乌 (wu), Luzhou mode (b): no red card, ×4."""

    name, pinyin, level, fan, card_count = "乌", "lz_wu", "b", 4, True
    bit = 11

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.red == 0


class LuzhouTianHu(MingTang):
    """天胡 (tian hu), Luzhou: the dealer's 七列 before his first discard, ×2."""

    name, pinyin, level, fan, card_count = "天胡", "lz_tianhu", "a", 2, True
    bit = 12

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.tianhu


class LuzhouDiHu(MingTang):
    """地胡 (di hu), Luzhou: the 下家 wins on the dealer's first discard, ×2."""

    name, pinyin, level, fan = "地胡", "lz_dihu", "a", 2
    bit = 13

    @classmethod
    def applies(cls, ctx: MingTangContext) -> bool:
        return ctx.dihu


LUZHOU_MINGTANG: tuple[type[MingTang], ...] = (LuzhouHongHu, LuzhouWu, LuzhouTianHu, LuzhouDiHu)

REGISTRY: dict[str, type[MingTang]] = {m.pinyin: m for m in HUNAN_MINGTANG + LUZHOU_MINGTANG}

#: The 名堂 bitmask's bit of each pattern, by pinyin id (the ``bit`` attributes).
MINGTANG_BITS: dict[str, int] = {p: m.bit for p, m in REGISTRY.items()}


_HUNAN_BY_LEVEL = {
    level: tuple(m for m in HUNAN_MINGTANG if LEVELS[m.level] <= cap)
    for level, cap in LEVELS.items()
}


def hunan_mingtang(ctx: MingTangContext, level: str) -> list[type[MingTang]]:
    """The Hunan 名堂 present at 花样 ``level`` (registry order)."""
    if ctx.auto_tianhu:
        return [m for m in _HUNAN_BY_LEVEL[level] if m.card_count and m.applies(ctx)]
    return [m for m in _HUNAN_BY_LEVEL[level] if m.applies(ctx)]


def luzhou_mingtang(ctx: MingTangContext, mode: str) -> list[type[MingTang]]:
    """The Luzhou multipliers present in 底 mode ``a`` or ``b`` (registry order)."""
    return [m for m in LUZHOU_MINGTANG if (mode == "b" or m.level == "a") and m.applies(ctx)]
