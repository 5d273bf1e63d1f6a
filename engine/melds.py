"""Meld notation for table groups: ``chi:A,B,C``, ``peng:X``, ``wei:X``, ``chouwei:X``,
``pao:X``, ``ti:X`` (also the Chinese labels 吃 碰 偎 臭偎 跑 提).

>>> str(parse_meld("pao:伍"))
'跑伍'
>>> parse_meld("chi:二,七,十").cards
(1, 6, 9)
>>> format_meld(parse_meld("peng:三"))
'peng:三'
"""

from __future__ import annotations

from engine.cards import format_cards, parse_cards
from engine.errors import InvalidNotation, quote
from engine.groups import Group, GroupKind, is_jiao, is_one_five_ten

MELD_NAMES: dict[str, GroupKind] = {
    "chi": GroupKind.CHI,
    "peng": GroupKind.PENG,
    "wei": GroupKind.WEI,
    "chouwei": GroupKind.CHOUWEI,
    "pao": GroupKind.PAO,
    "ti": GroupKind.TI,
    "吃": GroupKind.CHI,
    "碰": GroupKind.PENG,
    "偎": GroupKind.WEI,
    "臭偎": GroupKind.CHOUWEI,
    "跑": GroupKind.PAO,
    "提": GroupKind.TI,
}
_SIZES = {
    GroupKind.PENG: 3,
    GroupKind.WEI: 3,
    GroupKind.CHOUWEI: 3,
    GroupKind.PAO: 4,
    GroupKind.TI: 4,
}
_ASCII_NAMES = {v: k for k, v in MELD_NAMES.items() if k.isascii()}


def _is_eat_shape(cards: tuple[int, ...]) -> bool:
    a, b, c = cards
    if a // 10 == c // 10 and (
        (b == a + 1 and c == a + 2) or (a % 10 == 1 and b == a + 5 and c == a + 8)
    ):
        return True
    return is_jiao(cards) or is_one_five_ten(cards)


def parse_meld(token: str) -> Group:
    """One table meld from ``kind:cards``; errors quote the token."""
    name, sep, body = token.strip().partition(":")
    if not sep:
        name, sep, body = token.strip().partition("：")
    kind = MELD_NAMES.get(name.strip().lower())
    if not sep or kind is None:
        raise InvalidNotation(
            f"malformed meld {quote(token)}: expected chi:A,B,C | peng:X | wei:X | chouwei:X | pao:X | ti:X"
        )
    try:
        cards = parse_cards(body)
    except InvalidNotation as e:
        raise InvalidNotation(f"malformed meld {quote(token)}: {e}") from None
    if kind == GroupKind.CHI:
        if len(cards) != 3 or not _is_eat_shape(t := tuple(sorted(cards))):
            raise InvalidNotation(
                f"malformed meld {quote(token)}: chi needs a 一句话 or 绞 of 3 cards"
            )
        return Group(kind, t)
    size = _SIZES[kind]
    if len(cards) == 1:
        cards = cards * size
    if len(cards) != size or len(set(cards)) != 1:
        raise InvalidNotation(f"malformed meld {quote(token)}: {name} needs one face")
    return Group(kind, tuple(cards))


def format_meld(group: Group) -> str:
    """The ``kind:cards`` token of a table meld (inverse of :func:`parse_meld`)."""
    name = _ASCII_NAMES[group.kind]
    if group.kind == GroupKind.CHI:
        return f"{name}:{format_cards(group.cards, sep=',')}"
    return f"{name}:{format_cards(group.cards[:1])}"
