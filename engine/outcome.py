"""The codes of how a hand ends (:class:`OutcomeKind`) and where its hu card comes from
(:class:`Source`), written to logs.

They are defined here, on their own, so that a reader of the log's codes (the statistics, the
store's listings) does not import the game to name them; :mod:`engine.state` and
:mod:`engine.hu`, where they belong, import them from here and are where to look them up.

>>> OutcomeKind.HUANGZHUANG, Source.DISCARD
(<OutcomeKind.HUANGZHUANG: 1>, <Source.DISCARD: 4>)
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["OutcomeKind", "Source"]


class OutcomeKind(IntEnum):
    """How a hand ended. Codes are stable: they are written to logs."""

    HU = 0  # 胡 during play
    HUANGZHUANG = 1  # 荒庄: a draw was needed and the stock was empty
    TIANHU_AUTO = 2  # automatic 3提/5坎 天胡 (§9 step 2)
    TIANHU = 3  # optional 天胡: 亮张 hu, or the 4p / Luzhou dealer's 21-card hu


class Source(IntEnum):
    """Where the hu card comes from (§10.3). Codes are stable: they are written to logs."""

    OWN_DRAW = 0  # 自摸: the winner drew it
    OTHER_DRAW = 1  # another player's revealed draw
    LIANG_DEALER = 2  # the dealer's 21 cards as a dealt hand (亮张 hu, 4p / Luzhou 天胡; step 0)
    LIANG_OTHER = 3  # a non-dealer on the 亮张
    DISCARD = 4  # a discard (Luzhou, or hu_on_discards)
