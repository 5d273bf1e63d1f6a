"""What one seat can see (RULES.md §3, §4): its own hand, every table meld except the faces of
others' 偎, the cards placed to the right, discards, the stock count, the 亮张 while it is
known, the 4-player shown bottom card, and the card on offer once it is revealed.

Never: others' hands, others' 偎 faces, the stock order, the deck, others' hidden declarations.
"""

from __future__ import annotations

from typing import Any

from engine.cards import NUM_KINDS
from engine.groups import Group, GroupKind, meld_huxi

_DRAW_TAKE = 3  # engine.state.Phase.DRAW_TAKE (not imported: the state imports this module)

#: A face-down 偎 of another seat: kind WEI with no cards.
HIDDEN_WEI = Group(GroupKind.WEI, ())


class Observation:
    """A read-only view of a state from ``seat``. Every property returns fresh copies.

    ``state`` is an :class:`engine.state.State`; this module does not import it (imports flow
    one way: the state builds its observations, ``State.observation(seat)``)."""

    __slots__ = ("__s", "seat")

    def __init__(self, state: Any, seat: int) -> None:
        self.__s = state
        self.seat = seat

    def _search_state(self) -> Any:
        """The state behind this view, for the ``search`` policy alone (private: no other
        policy is handed it, tests/engine/test_playouts.py holds the public view to its
        list): :func:`engine.search.determinize` reads what this seat sees of it and deals
        every hidden card anew, and tests hold that no choice of the policy depends on where
        the hidden cards really lie."""
        return self.__s

    @property
    def rules(self):  # noqa: ANN201
        return self.__s.rules

    @property
    def dealer(self) -> int:
        return self.__s.dealer

    @property
    def active(self) -> tuple[int, ...]:
        return self.__s.active

    @property
    def xia(self) -> int:
        """This seat's 下家."""
        return self.__s.xia[self.seat]

    @property
    def shang(self) -> int:
        return self.__s.shang[self.seat]

    @property
    def hand(self) -> tuple[int, ...]:
        """Own hand counts (length 20)."""
        return tuple(self.__s.hands[self.seat])

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(self.__s.hand_size)

    def melds(self, seat: int) -> tuple[Group, ...]:
        """A seat's table melds; another seat's 偎 shows as :data:`HIDDEN_WEI`."""
        ms = self.__s.melds[seat]
        if seat == self.seat:
            return tuple(ms)
        return tuple(HIDDEN_WEI if g.kind == GroupKind.WEI else g for g in ms)

    @property
    def own_meld_huxi(self) -> int:
        return meld_huxi(self.__s.melds[self.seat], self.__s.rules)

    def visible_meld_huxi(self, seat: int) -> int:
        """胡息 of a seat's melds as this seat can count them (hidden 偎 at the small value)."""
        rules = self.__s.rules
        total = 0
        for g in self.melds(seat):
            if g is HIDDEN_WEI:
                total += 6 if rules.luzhou else 3
            else:
                total += meld_huxi((g,), rules)
        return total

    def quads(self, seat: int) -> int:
        return self.__s.quads[seat]

    def right(self, seat: int) -> tuple[int, ...]:
        return tuple(self.__s.right[seat])

    def discards(self, seat: int) -> tuple[int, ...]:
        return tuple(self.__s.discards[seat])

    def discarded_faces(self, seat: int) -> int:
        """Bitmask of faces a seat has discarded (public: discards are face-up)."""
        return self.__s.discarded[seat]

    @property
    def stinky(self) -> int:
        """Own 臭牌 bitmask."""
        return self.__s.stinky[self.seat]

    @property
    def renpeng(self) -> int:
        return self.__s.renpeng[self.seat]

    @property
    def stock_left(self) -> int:
        return len(self.__s.stock)

    @property
    def liang(self) -> int | None:
        """The 亮张 while it is publicly identified in the dealer's hand (C32)."""
        s = self.__s
        return s.liang if s.liang_known else None

    @property
    def bottom(self) -> int | None:
        """The 4-player shown bottom card while it is still in the stock (§13)."""
        s = self.__s
        return s.bottom if s.bottom is not None and s.stock else None

    @property
    def bottom_shown(self) -> tuple[int, ...]:
        """The shown bottom cards still in the stock, bottom first (§13; Luzhou two, §14)."""
        s = self.__s
        return tuple(s.stock[: min(s.n_shown, len(s.stock))])

    @property
    def card(self) -> int | None:
        """The card on offer, if this seat can see it (a drawn card is hidden until revealed)."""
        s = self.__s
        if s.card is None:
            return None
        if s.phase == _DRAW_TAKE and s.owner != self.seat:
            return None
        return s.card

    @property
    def card_kind(self) -> int | None:
        return None if self.card is None else int(self.__s.card_kind)  # type: ignore[arg-type]

    @property
    def owner(self) -> int | None:
        return self.__s.owner

    @property
    def phase(self) -> int:
        return int(self.__s.phase)

    @property
    def n_steps(self) -> int:
        return len(self.__s.history)

    def seen_counts(self) -> tuple[int, ...]:
        """Copies of each face this seat has seen: own hand, visible melds, right, discards,
        the 亮张 and the card on offer (each copy counted once where it now lies)."""
        c = list(self.hand)
        for seat in self.active:
            for g in self.melds(seat):
                for k in g.cards:
                    c[k] += 1
            for k in self.__s.right[seat]:
                c[k] += 1
        if self.liang is not None and self.seat != self.dealer:
            c[self.liang] += 1
        if self.card is not None and self.owner is not None and self.__s.card is not None:
            c[self.card] += 1
        return tuple(min(n, 4) for n in c[:NUM_KINDS])

    def to_dict(self) -> dict:
        """Everything this seat sees, as plain data (used by tests for leak checks)."""
        return {
            "seat": self.seat,
            "dealer": self.dealer,
            "hand": list(self.hand),
            "hand_sizes": list(self.hand_sizes),
            "melds": [[(int(g.kind), list(g.cards)) for g in self.melds(s)] for s in self.active],
            "right": [list(self.right(s)) for s in self.active],
            "discards": [list(self.discards(s)) for s in self.active],
            "stock_left": self.stock_left,
            "liang": self.liang,
            "bottom": self.bottom,
            "bottom_shown": list(self.bottom_shown),
            "card": self.card,
            "owner": self.owner if self.card is not None else None,
            "stinky": self.stinky,
            "renpeng": self.renpeng,
        }
