"""Actions as small ints in a bounded, documented space (STYLE §2).

======================  ============================  =====================================
code                    kind                          meaning
======================  ============================  =====================================
0                       PASS                          decline every option offered
1                       HU                            胡 on the offered card
2                       PENG                          碰 the offered card
10 + k   (10..29)       DISCARD                       打 a card of kind k
30 + k   (30..49)       TI                            提 of face k (forced)
50 + k   (50..69)       WEI                           偎 / 臭偎 of face k (forced)
70 + k   (70..89)       PAO                           跑 of face k (forced)
100 + …  (100..69020)   CHI                           吃 + 比: the multiset of eat shapes laid
======================  ============================  =====================================

A 吃 code packs the sorted ids of its 1–3 eat shapes (``engine.groups.EAT_SHAPES``) as
base-41 digits, each id + 1, left-padded with zeros; so codes sort by their groups.

>>> encode_chi([(0, 1, 2), (2, 3, 4)])
144
>>> decode(144)
Action('吃 [一二三][三四五]')
>>> decode(144).kind, decode(144).groups
(<ActionKind.CHI: 7>, ((0, 1, 2), (2, 3, 4)))
>>> action_str(144)
'吃 [一二三][三四五]'
>>> action_str(DISCARD_BASE + 19)
'打 拾'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from engine.cards import card_char, format_cards
from engine.errors import InvalidNotation
from engine.groups import EAT_SHAPE_ID, EAT_SHAPES

PASS = 0
HU = 1
PENG = 2
DISCARD_BASE = 10
TI_BASE = 30
WEI_BASE = 50
PAO_BASE = 70
CHI_BASE = 100
_RADIX = len(EAT_SHAPES) + 1
MAX_ACTION = CHI_BASE + _RADIX**3 - 1


class ActionKind(IntEnum):
    PASS = 0
    HU = 1
    PENG = 2
    DISCARD = 3
    TI = 4
    WEI = 5
    PAO = 6
    CHI = 7


FORCED_KINDS = frozenset({ActionKind.TI, ActionKind.WEI, ActionKind.PAO})


@dataclass(frozen=True, slots=True)
class Action:
    """The readable view of an action code."""

    kind: ActionKind
    card: int | None = None
    groups: tuple[tuple[int, ...], ...] = ()

    def __str__(self) -> str:
        return action_str(encode(self))

    def __repr__(self) -> str:
        """``Action('吃 [一二三][三四五]')``: the action in card notation (equality and hash
        stay the fields')."""
        return f"Action({str(self)!r})"


def encode_chi(groups: Iterable[tuple[int, ...]]) -> int:
    """The code of a 吃 laying down these eat-shaped groups (order-free)."""
    ids = sorted(EAT_SHAPE_ID[tuple(sorted(g))] for g in groups)  # type: ignore[index]
    if not 1 <= len(ids) <= 3:
        raise ValueError(f"a 吃 lays down 1 to 3 groups, not {len(ids)}")
    code = 0
    for i in [-1] * (3 - len(ids)) + ids:
        code = code * _RADIX + i + 1
    return CHI_BASE + code


def chi_groups(code: int) -> tuple[tuple[int, int, int], ...]:
    """The eat shapes of a 吃 code, ascending by shape id."""
    v = code - CHI_BASE
    digits = []
    for _ in range(3):
        v, d = divmod(v, _RADIX)
        digits.append(d)
    return tuple(EAT_SHAPES[d - 1] for d in reversed(digits) if d)


def kind_of(code: int) -> ActionKind:
    if code == PASS:
        return ActionKind.PASS
    if code == HU:
        return ActionKind.HU
    if code == PENG:
        return ActionKind.PENG
    if DISCARD_BASE <= code < DISCARD_BASE + 20:
        return ActionKind.DISCARD
    if TI_BASE <= code < TI_BASE + 20:
        return ActionKind.TI
    if WEI_BASE <= code < WEI_BASE + 20:
        return ActionKind.WEI
    if PAO_BASE <= code < PAO_BASE + 20:
        return ActionKind.PAO
    if CHI_BASE < code <= MAX_ACTION:
        return ActionKind.CHI
    raise InvalidNotation(f"action code out of range: {code!r}")


_BASES = {
    ActionKind.DISCARD: DISCARD_BASE,
    ActionKind.TI: TI_BASE,
    ActionKind.WEI: WEI_BASE,
    ActionKind.PAO: PAO_BASE,
}


def decode(code: int) -> Action:
    k = kind_of(code)
    if k in _BASES:
        return Action(k, code - _BASES[k])
    if k == ActionKind.CHI:
        return Action(k, None, chi_groups(code))
    return Action(k)


def encode(action: Action) -> int:
    if action.kind in _BASES:
        assert action.card is not None
        return _BASES[action.kind] + action.card
    if action.kind == ActionKind.CHI:
        return encode_chi(action.groups)
    return int(action.kind)  # PASS 0, HU 1, PENG 2


_LABELS = {
    ActionKind.PASS: "过",
    ActionKind.HU: "胡",
    ActionKind.PENG: "碰",
    ActionKind.DISCARD: "打",
    ActionKind.TI: "提",
    ActionKind.WEI: "偎",
    ActionKind.PAO: "跑",
}


def action_str(code: int) -> str:
    """An action in card notation: ``吃 [一二三][三四五]``, ``打 拾``, ``过``."""
    a = decode(code)
    if a.kind == ActionKind.CHI:
        return "吃 " + "".join(f"[{format_cards(g)}]" for g in a.groups)
    if a.card is not None:
        return f"{_LABELS[a.kind]} {card_char(a.card)}"
    return _LABELS[a.kind]


_NAMES = {"pass": PASS, "过": PASS, "hu": HU, "胡": HU, "peng": PENG, "碰": PENG}


def parse_action(text: str) -> int:
    """An action from text: ``pass``, ``hu``, ``peng``, ``discard:拾``, ``ti:五``, ``wei:五``,
    ``pao:五``, ``chi:一二三+三四五``. The caller checks legality (``State.apply_checked``)."""
    from engine.cards import parse_card, parse_cards

    t = text.strip()
    low = t.lower()
    if low in _NAMES:
        return _NAMES[low]
    name, sep, body = t.partition(":")
    name = name.strip().lower()
    bases = {
        "discard": DISCARD_BASE,
        "打": DISCARD_BASE,
        "ti": TI_BASE,
        "提": TI_BASE,
        "wei": WEI_BASE,
        "偎": WEI_BASE,
        "pao": PAO_BASE,
        "跑": PAO_BASE,
    }
    try:
        if sep and name in bases:
            return bases[name] + parse_card(body)
        if sep and name in ("chi", "吃"):
            groups = [tuple(sorted(parse_cards(g))) for g in body.split("+")]
            return encode_chi(groups)
    except (InvalidNotation, KeyError, ValueError):
        pass
    raise InvalidNotation(f"malformed action {text!r}")
