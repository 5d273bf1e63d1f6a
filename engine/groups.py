"""Groups 门子 and their 胡息 (RULES.md §4, §11.1, §14).

A :class:`Group` is a kind of group and its sorted card kinds. Table melds (进牌区) are groups
of the kinds CHI, PENG, WEI, CHOUWEI, PAO and TI; a hand decomposition adds SENTENCE, JIAO,
KAN, PENG_HU (the pair + another player's card triple, C8) and JIANG.

>>> from engine.rules import find_rules
>>> huxi(Group(GroupKind.TI, (19, 19, 19, 19)), find_rules("hunan"))
12
>>> huxi(Group(GroupKind.CHI, (1, 6, 9)), find_rules("luzhou"))
6
>>> str(Group(GroupKind.PENG, (4, 4, 4)))
'碰五'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from engine.cards import card_char, format_cards, is_big, is_red
from engine.rules import RuleSet


class GroupKind(IntEnum):
    """Kinds of 门子. Codes are stable: they are written to logs."""

    CHI = 0  # 吃 / 比 group on the table (一句话 or 绞)
    PENG = 1  # 碰
    WEI = 2  # 偎 (face-down)
    CHOUWEI = 3  # 臭偎 (one card face-up)
    PAO = 4  # 跑
    TI = 5  # 提
    SENTENCE = 6  # 一句话 in hand
    JIAO = 7  # 绞 in hand
    KAN = 8  # 坎 (dealt triple in hand)
    PENG_HU = 9  # pair + another player's hu card, scored as 碰 (C8)
    JIANG = 10  # 将 (pair)


TABLE_KINDS = frozenset(
    {GroupKind.CHI, GroupKind.PENG, GroupKind.WEI, GroupKind.CHOUWEI, GroupKind.PAO, GroupKind.TI}
)
QUAD_KINDS = frozenset({GroupKind.PAO, GroupKind.TI})
SAME_FACE_KINDS = frozenset(
    {
        GroupKind.PENG,
        GroupKind.WEI,
        GroupKind.CHOUWEI,
        GroupKind.PAO,
        GroupKind.TI,
        GroupKind.KAN,
        GroupKind.PENG_HU,
    }
)

GROUP_LABELS = {
    GroupKind.CHI: "吃",
    GroupKind.PENG: "碰",
    GroupKind.WEI: "偎",
    GroupKind.CHOUWEI: "臭偎",
    GroupKind.PAO: "跑",
    GroupKind.TI: "提",
    GroupKind.SENTENCE: "",
    GroupKind.JIAO: "",
    GroupKind.KAN: "坎",
    GroupKind.PENG_HU: "碰胡",
    GroupKind.JIANG: "将",
}


@dataclass(frozen=True, slots=True, order=True)
class Group:
    """One 门子: its kind and its card kinds in ascending order."""

    kind: GroupKind
    cards: tuple[int, ...]

    def __repr__(self) -> str:
        """``Group('吃[一二三]')``: the 门子 in card notation (equality, order and hash stay
        the fields')."""
        return f"Group({str(self)!r})"

    def __str__(self) -> str:
        label = GROUP_LABELS[self.kind]
        if self.kind in SAME_FACE_KINDS:
            return label + card_char(self.cards[0])
        if self.kind == GroupKind.CHI:
            return f"吃[{format_cards(self.cards)}]"
        return label + format_cards(self.cards)

    @property
    def face(self) -> int:
        return self.cards[0]


# Eat-shaped groups (一句话 and 绞), each with a stable id (logs encode 吃 actions with them).
def _eat_shapes() -> tuple[tuple[int, int, int], ...]:
    shapes: list[tuple[int, int, int]] = []
    for base in (0, 10):
        shapes.extend((base + n, base + n + 1, base + n + 2) for n in range(8))
        shapes.append((base + 1, base + 6, base + 9))  # 2-7-10
        shapes.append((base + 0, base + 4, base + 9))  # 1-5-10 (only with the switch)
    for n in range(10):
        shapes.append((n, n, n + 10))
        shapes.append((n, n + 10, n + 10))
    return tuple(shapes)


EAT_SHAPES: tuple[tuple[int, int, int], ...] = _eat_shapes()
EAT_SHAPE_ID: dict[tuple[int, int, int], int] = {s: i for i, s in enumerate(EAT_SHAPES)}


def is_one_five_ten(cards: Sequence[int]) -> bool:
    return (
        len(cards) == 3
        and cards[0] % 10 == 0
        and cards[1] == cards[0] + 4
        and cards[2] == cards[0] + 9
    )


def is_sentence(cards: Sequence[int], rules: RuleSet) -> bool:
    """一句话: 3 consecutive of one case, 2-7-10 of one case (1-5-10 with the switch)."""
    a, b, c = cards
    if a // 10 != c // 10:
        return False
    if b == a + 1 and c == a + 2:
        return True
    if a % 10 == 1 and b == a + 5 and c == a + 8:
        return True
    return rules.one_five_ten and is_one_five_ten(cards)


def is_jiao(cards: Sequence[int]) -> bool:
    """绞: one number, two of one case and one of the other."""
    a, b, c = cards
    return a % 10 == c % 10 and a < 10 <= c and (b in (a, c))


def eat_shapes_for(rules: RuleSet) -> tuple[tuple[int, int, int], ...]:
    """The eat shapes legal under ``rules`` (1-5-10 only with its switch)."""
    return tuple(s for s in EAT_SHAPES if rules.one_five_ten or not is_one_five_ten(s))


def _sentence_huxi(cards: Sequence[int], rules: RuleSet) -> int:
    a, b, c = cards
    if a // 10 != c // 10:
        return 0  # 绞
    big = a >= 10
    n = a % 10
    if n == 0 and b == a + 1 and c == a + 2:  # 1-2-3
        return 6 if big else 3
    if n == 1 and b == a + 5 and c == a + 8:  # 2-7-10
        if rules.luzhou:
            return 9 if big else 6
        return 6 if big else 3
    if rules.one_five_ten and is_one_five_ten(cards):
        return 6 if big else 3
    return 0


# Same-face values: (small black, big black, small red, big red).
_HUNAN_SAME = {
    GroupKind.PENG: (1, 3, 1, 3),
    GroupKind.PENG_HU: (1, 3, 1, 3),
    GroupKind.WEI: (3, 6, 3, 6),
    GroupKind.CHOUWEI: (3, 6, 3, 6),
    GroupKind.KAN: (3, 6, 3, 6),
    GroupKind.PAO: (6, 9, 6, 9),
    GroupKind.TI: (9, 12, 9, 12),
}
_LUZHOU_SAME = {
    GroupKind.PENG: (1, 3, 6, 9),
    GroupKind.PENG_HU: (1, 3, 6, 9),
    GroupKind.WEI: (6, 9, 9, 12),
    GroupKind.CHOUWEI: (6, 9, 9, 12),
    GroupKind.KAN: (6, 9, 9, 12),
    GroupKind.PAO: (9, 12, 12, 15),
    GroupKind.TI: (12, 15, 15, 18),
}


def same_face_huxi(kind: GroupKind, face: int, rules: RuleSet) -> int:
    table = _LUZHOU_SAME if rules.luzhou else _HUNAN_SAME
    return table[kind][int(is_big(face)) + 2 * int(is_red(face))]


def huxi(group: Group, rules: RuleSet) -> int:
    """胡息 of one group (Luzhou: 胡), §11.1 and §14."""
    k = group.kind
    if k in SAME_FACE_KINDS:
        return same_face_huxi(k, group.cards[0], rules)
    if k == GroupKind.JIANG:
        return 0
    return _sentence_huxi(group.cards, rules)


def meld_huxi(melds: Iterable[Group], rules: RuleSet) -> int:
    """meldHuxi: the 胡息 of the table groups (进牌区), used by 臭胡 (§6.4)."""
    return sum(huxi(g, rules) for g in melds)
