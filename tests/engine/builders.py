"""Readable builders for state-machine scenario tests (RULES.md §3, C2).

A scenario is a chosen deck in card notation, a few actions in notation, and assertions on
the option sets, written as action strings (``engine.actions.action_str``)::

    deck = deck_for(
        dealer="一一一二三四五六七八九十壹贰叁肆伍陆柒捌",
        xia="…20 cards…",
        shang="…20 cards…",
        liang="玖",
        stock="拾贰",          # the first cards drawn, in draw order
    )
    state = new_state(deck)
    play(state, "0:discard:八", "1:pass")
    assert opts(state, 2) == ["过", "碰"]

Deck layout (C2): positions 0–19 are the dealer's, 20–39 his 下家's (seat dealer+1), 40–59
his 上家's (3 players: dealer+2; 4 players: dealer+3), 60 is the 亮张 (the dealer's 21st card)
and 61–79 the stock, 61 drawn first and 79 the bottom (海底). Unspecified stock positions are
filled deterministically with the cards left over, spread out face by face.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from engine.actions import action_str, parse_action
from engine.cards import COPIES, NUM_KINDS, card_char, format_cards, parse_cards
from engine.rules import RuleSet, find_rules
from engine.state import Game, State

HAND = 20
STOCK = 19


class DeckError(ValueError):
    """A scenario deck that cannot exist (a face used too often, a wrong hand size)."""


def _cards(text: str | Iterable[int]) -> list[int]:
    if isinstance(text, str):
        return parse_cards(text)
    return [int(k) for k in text]


def deck_for(
    dealer: str,
    xia: str,
    shang: str,
    liang: str,
    stock: str = "",
    bottom: str = "",
) -> list[int]:
    """An 80-card deck (list of kinds, position 0 first) from the hands in card notation.

    ``stock`` lists the first cards drawn, in draw order; ``bottom`` lists the last cards of
    the stock, in draw order (its last card is the 海底, deck position 79). The positions in
    between are filled with the remaining cards: one copy of each remaining face in kind order,
    then the next copy, and so on, so that fill cards of one face lie far apart.
    """
    parts = {
        "dealer": _cards(dealer),
        "xia": _cards(xia),
        "shang": _cards(shang),
        "liang": _cards(liang),
        "stock": _cards(stock),
        "bottom": _cards(bottom),
    }
    for name in ("dealer", "xia", "shang"):
        if len(parts[name]) != HAND:
            raise DeckError(
                f"{name} hand has {len(parts[name])} cards, expected {HAND}: "
                f"{format_cards(parts[name])!r}"
            )
    if len(parts["liang"]) != 1:
        raise DeckError(f"liang must be exactly one card, got {format_cards(parts['liang'])!r}")
    if len(parts["stock"]) + len(parts["bottom"]) > STOCK:
        raise DeckError(
            f"stock {len(parts['stock'])} + bottom {len(parts['bottom'])} cards exceed {STOCK}"
        )
    used: Counter[int] = Counter()
    where: dict[int, list[str]] = {}
    for name, cards in parts.items():
        for k in cards:
            used[k] += 1
            where.setdefault(k, []).append(name)
    over = [k for k in range(NUM_KINDS) if used[k] > COPIES]
    if over:
        detail = "; ".join(
            f"{card_char(k)} ×{used[k]} ({', '.join(sorted(set(where[k])))})" for k in over
        )
        raise DeckError(f"face used more than {COPIES} times: {detail}")
    left = {k: COPIES - used[k] for k in range(NUM_KINDS)}
    fill: list[int] = []
    for copy in range(COPIES):
        fill.extend(k for k in range(NUM_KINDS) if left[k] > copy)
    deck = (
        parts["dealer"]
        + parts["xia"]
        + parts["shang"]
        + parts["liang"]
        + parts["stock"]
        + fill
        + parts["bottom"]
    )
    assert len(deck) == NUM_KINDS * COPIES, len(deck)
    return deck


def rules_of(rules: str | RuleSet = "hunan") -> RuleSet:
    return find_rules(rules) if isinstance(rules, str) else rules


def new_state(deck: list[int], dealer: int = 0, rules: str | RuleSet = "hunan") -> State:
    """A fresh hand: deal ``deck`` and run the automatic start (§3, §9)."""
    return Game(rules_of(rules)).new_initial_state(deck, dealer)


def play(state: State, *steps: str) -> State:
    """Apply actions written as ``"seat:action"`` (``"0:discard:五"``, ``"1:pass"``,
    ``"2:chi:一二三+三四五"``, ``"1:hu"``) with :meth:`State.apply_checked`."""
    for step in steps:
        seat_text, sep, action_text = step.partition(":")
        if not sep:
            raise ValueError(f"step {step!r}: expected 'seat:action'")
        state.apply_checked(int(seat_text), parse_action(action_text))
    return state


def opts(state: State, seat: int) -> list[str]:
    """The legal actions of ``seat`` as action strings, in code order."""
    return [action_str(a) for a in state.legal_actions(seat)]


def hand(state: State, seat: int) -> str:
    """The concealed hand of ``seat`` in card notation, sorted by kind."""
    return format_cards(state.hand_cards(seat))


def table(state: State, seat: int) -> list[str]:
    """The table melds of ``seat`` as strings (``碰五``, ``吃[一二三]``), in take order."""
    return [str(g) for g in state.melds[seat]]


def right(state: State, seat: int) -> str:
    """The dead cards placed to the right of ``seat``."""
    return format_cards(state.right[seat])


def faces(mask: int) -> str:
    """The faces in a bitmask (stinky / renpeng / discarded), in card notation."""
    return format_cards(k for k in range(NUM_KINDS) if mask >> k & 1)


def top(state: State) -> str:
    """The next stock card (the top is the last element of ``state.stock``)."""
    return card_char(state.stock[-1]) if state.stock else ""


def auto(state: State, limit: int = 20) -> State:
    """Apply pending forced actions (提/偎/跑, compulsory 碰) until a real choice is due."""
    for _ in range(limit):
        if state.is_terminal() or not state.is_forced():
            break
        (seat,) = state.deciders()
        (action,) = state.legal_actions(seat)
        state.apply_checked(seat, action)
    return state


def drive(state: State, stop=None, limit: int = 400) -> State:  # noqa: ANN001
    """Play on passively: forced actions are applied, every claim is declined (PASS), and a
    discard takes the first legal card. Stops at the end of the hand or when ``stop(state)``
    is true (checked before every decision)."""
    for _ in range(limit):
        if state.is_terminal() or (stop is not None and stop(state)):
            return state
        seats = state.deciders()
        if state.is_forced() or state.phase.name == "DISCARD":
            (seat,) = seats
            state.apply_checked(seat, state.legal_actions(seat)[0])
        else:
            for seat in seats:
                state.apply_checked(seat, 0)
    raise AssertionError(f"drive: no end after {limit} decisions")
