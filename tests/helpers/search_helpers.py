"""Builders of the search tests (issue 21), shared by the reference's and the compiled
engine's: a random-policy hand stopped mid-way at a real choice (``mid_hand``), every such
choice of one hand (``choice_states``)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from engine.deck import shuffle_deck
from engine.rules import PRESETS, RuleSet
from engine.state import Game, State


def mid_hand(preset: str, deck_seed: int, steps: int, with_choice: bool = True) -> State | None:
    """A state of a random-policy hand after about ``steps`` actions, at a decision of a seat
    with more than one option (None if the hand ended first)."""
    rules = PRESETS[preset]
    s = Game(rules).new_initial_state(shuffle_deck(deck_seed), deck_seed % rules.players)
    rng = random.Random(deck_seed)
    n = 0
    while s.outcome is None:
        seat = s.current_player()
        assert seat is not None
        legal = s.legal_actions(seat)
        if n >= steps and (len(legal) > 1 or not with_choice):
            return s
        s.apply(seat, legal[rng.randrange(len(legal))])
        n += 1
    return None


def choice_states(rules: RuleSet, deck_seed: int) -> Iterator[State]:
    """Every state of one random-policy hand (deck and dealer as :func:`mid_hand` takes them)
    at which a seat has more than one option, each a copy."""
    s = Game(rules).new_initial_state(shuffle_deck(deck_seed), deck_seed % rules.players)
    rng = random.Random(deck_seed)
    while s.outcome is None:
        seat = s.current_player()
        assert seat is not None
        legal = s.legal_actions(seat)
        if len(legal) > 1:
            yield s.clone()
        s.apply(seat, legal[rng.randrange(len(legal))])
