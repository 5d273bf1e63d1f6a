"""Sessions: consecutive hands at one table, who deals next (RULES.md §2, §12, §13), and the
seeds of a run of sessions (:class:`RunSeeds`, the one place a run seed becomes decks).

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

from collections.abc import Iterable
from dataclasses import dataclass

from engine.deck import derive_seed, derive_seeds, shuffle_deck
from engine.rules import RuleSet

#: Version of the run seed derivation of :class:`RunSeeds` (session, deal and hand seeds).
#: The deck shuffle has its own ``engine.deck.SHUFFLE_VERSION``. Never change a version's
#: meaning; add a new version.
SEED_METHOD_VERSION = 1

#: :class:`RunSeeds`' derivation as a run's manifest states it (``seeds``), key by key.
SEED_METHOD = {
    "session": 'derive_seed(run_seed, "session", session)',
    "first_dealer": "engine.session.first_dealer(rules, session_seed)",
    "deck": 'shuffle_deck(derive_seed(run_seed, "deal", deal_id))',
    "policy": 'derive_seed(run_seed, "hand", hand_id)',
}


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


@dataclass(frozen=True, slots=True)
class RunSeeds:
    """Every seed of a run, from its run seed (method ``SEED_METHOD_VERSION`` = 1, with
    :func:`engine.deck.derive_seed`): session ``i`` has the seed ``derive_seed(S, "session",
    i)`` and its first dealer from it (:func:`first_dealer`); deal ``d`` the deck
    ``shuffle_deck(derive_seed(S, "deal", d))``; hand ``h`` the policy seed
    ``derive_seed(S, "hand", h)`` (``engine.play.play_hand`` derives one per seat from it).
    Both engines take their seeds from here, so a run is the same hands in either.

    >>> from engine.rules import find_rules
    >>> seeds = RunSeeds(7)
    >>> seeds.deck(3) == shuffle_deck(seeds.deal(3)) == shuffle_deck(derive_seed(7, "deal", 3))
    True
    >>> seeds.first_dealer(find_rules("hunan"), 0).huang_streak
    0
    """

    run_seed: int

    def session(self, session: int) -> int:
        return derive_seed(self.run_seed, "session", session)

    def first_dealer(self, rules: RuleSet, session: int) -> DealerState:
        """The first dealer of session ``session``."""
        return first_dealer(rules, self.session(session))

    def deal(self, deal_id: int) -> int:
        """The shuffle seed of deal ``deal_id`` (its deck is ``shuffle_deck`` of it)."""
        return derive_seed(self.run_seed, "deal", deal_id)

    def deck(self, deal_id: int) -> tuple[int, ...]:
        return shuffle_deck(self.deal(deal_id))

    def hand(self, hand_id: int) -> int:
        """The policy seed of hand ``hand_id``."""
        return derive_seed(self.run_seed, "hand", hand_id)

    def deals(self, deal_ids: Iterable[int]) -> list[int]:
        """:meth:`deal` of each of ``deal_ids`` (a batch at once)."""
        return derive_seeds(self.run_seed, "deal", deal_ids)

    def hands(self, hand_ids: Iterable[int]) -> list[int]:
        """:meth:`hand` of each of ``hand_ids`` (a batch at once)."""
        return derive_seeds(self.run_seed, "hand", hand_ids)
