"""Hu evaluation 胡牌 (RULES.md §10.3): every option, every partition, the best one by C9.

>>> from engine.cards import parse_cards
>>> from engine.rules import find_rules
>>> from engine.melds import parse_meld
>>> melds = [parse_meld("chi:一,二,三"), parse_meld("peng:伍")]
>>> r = evaluate_hu(find_rules("hunan"), melds, parse_cards("壹贰叁四五六七八九陆柒捌贰柒"),
...                 parse_cards("拾")[0], HuContext(Source.OTHER_DRAW))
>>> (r.win, r.huxi, r.deng, r.fan, r.score)
(True, 18, 2, 1, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from engine.groups import Group


class Source(IntEnum):
    """Where the hu card comes from (§10.3). Codes are stable: they are written to logs."""

    OWN_DRAW = 0  # 自摸: the winner drew it
    OTHER_DRAW = 1  # another player's revealed draw
    LIANG_DEALER = 2  # the dealer's 21 cards as a dealt hand (亮张 hu, 4p / Luzhou 天胡; step 0)
    LIANG_OTHER = 3  # a non-dealer on the 亮张
    DISCARD = 4  # a discard (Luzhou, or hu_on_discards)


class NoWin(IntEnum):
    """Why a hand is not a win (a typed result, not an exception, STYLE §11)."""

    CARD_COUNT = 1  # not N + 1 = T + 1 cards, so 7 门子 are impossible
    NO_SPLIT = 2  # the cards cannot be split into 7 门子 (with a 将 iff a 跑/提)
    BELOW_MIN = 3  # best split is below the 胡息 threshold
    OWN_PAIR = 4  # own draw onto own pair/坎/偎: it is 偎/提'd unrevealed, never hu'd (§10.3 step 1)
    DISCARD = 5  # a discard cannot be hu'd under these rules (§10.2)


NOWIN_TEXT = {
    NoWin.CARD_COUNT: "wrong number of cards for 7 门子",
    NoWin.NO_SPLIT: "cannot be split into 7 门子",
    NoWin.BELOW_MIN: "below the 胡息 threshold",
    NoWin.OWN_PAIR: "own draw onto own pair/坎/偎 is 偎/提, never a hu",
    NoWin.DISCARD: "a discard cannot be hu'd under these rules",
}


@dataclass(frozen=True, slots=True)
class HuContext:
    """Circumstances of a hu chance that the cards alone do not tell.

    * ``tianhu``: a 天胡 (亮张 hu, the 4p/Luzhou dealer's 21-card hu, the 3提/5坎 hu).
    * ``haidi``: the hu card is the last stock card.
    * ``dihu``: Hunan full: a non-dealer wins on the first stock card; Luzhou: the 下家 wins on
      the dealer's first discard.
    """

    source: Source
    tianhu: bool = False
    haidi: bool = False
    dihu: bool = False


@dataclass(frozen=True, slots=True)
class HuResult:
    """The best reading of a hand (§10.3 step 5) and its score (§11, §14).

    When ``win`` is false, ``reason`` says why; ``huxi`` is still the best 胡息 over the splits
    when a split exists (None otherwise) and ``groups`` that split.
    """

    win: bool
    reason: NoWin | None
    option: str | None = None  # 'F', 'K', 'P', 'W', or '0' (step 0)
    groups: tuple[Group, ...] = ()
    group_huxi: tuple[int, ...] = ()
    huxi: int | None = None
    deng: int = 0
    mingtang: tuple[tuple[str, int], ...] = ()
    fan: int = 0  # Hunan 番; Luzhou multiplier
    score: int = 0
    zimo: bool = False
    tianhu: bool = False
    extra: dict[str, int] = field(default_factory=dict)
