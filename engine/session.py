"""Sessions: consecutive hands at one table and who deals next (RULES.md §2, §12, §13).

* The first dealer of a session is drawn from the session seed.
* After a win the winner deals; after 荒庄 the dealer stays, and after the
  ``rules.huangzhuang_rotate``-th consecutive 荒庄 (3, C16) the deal passes to the next seat
  in the ring (the dealer's 下家; with 4 players the next of the 4 seats, C22). The 荒庄
  counter resets on a win and whenever the deal passes.

>>> from engine.rules import find_rules
>>> rules = find_rules("hunan")
>>> next_dealer(rules, DealerState(dealer=0, huang_streak=0), winner=2)
DealerState(dealer=2, huang_streak=0)
>>> s = DealerState(dealer=1, huang_streak=0)
>>> for _ in range(3):
...     s = next_dealer(rules, s, winner=None)
>>> s
DealerState(dealer=2, huang_streak=0)
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.deck import derive_seed
from engine.rules import RuleSet


@dataclass(frozen=True, slots=True)
class DealerState:
    dealer: int
    huang_streak: int = 0


def first_dealer(rules: RuleSet, session_seed: int) -> DealerState:
    """The random first dealer of a session, from its seed."""
    return DealerState(derive_seed(session_seed, "first-dealer") % rules.players, 0)


def next_dealer(rules: RuleSet, current: DealerState, winner: int | None) -> DealerState:
    """The dealer of the next hand, given the winner of this one (None for 荒庄)."""
    if winner is not None:
        return DealerState(winner, 0)
    streak = current.huang_streak + 1
    if streak >= rules.huangzhuang_rotate:
        return DealerState((current.dealer + 1) % rules.players, 0)
    return DealerState(current.dealer, streak)
