"""Bad input to the compiled engine raises what the reference raises (same engine.errors type,
same text), before any kernel runs; and the compiled integers hold the extremes the reference
computes (胡息, 番, score under hunan-full; long sessions; long 荒庄 streaks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from engine.deck import shuffle_deck
from engine.errors import PaohuziError
from engine.fast.play import play_batch, play_sessions
from engine.policies import load_policies, load_policy
from engine.rules import RuleSet, find_rules
from engine.state import Game

RULES = find_rules("hunan")


def _reference_error(fn, *args) -> PaohuziError:
    with pytest.raises(PaohuziError) as info:
        fn(*args)
    return info.value


def _same_error(ref: PaohuziError, fn, *args) -> None:
    with pytest.raises(PaohuziError) as info:
        fn(*args)
    assert type(info.value) is type(ref)
    assert str(info.value) == str(ref)
    assert "\n" not in str(info.value)


def _bad_decks() -> list[list[int]]:
    good = list(shuffle_deck(3))
    dup = good.copy()
    dup[0] = dup[1] if dup[1] != dup[0] else (dup[0] + 1) % 20
    return [dup, good[:79], good + [0], [200] + good[1:], [-1] + good[1:]]


@pytest.mark.parametrize("i", range(5))
def test_bad_deck(i: int) -> None:
    deck = _bad_decks()[i]
    ref = _reference_error(Game(RULES).new_initial_state, deck, 0)
    _same_error(ref, play_batch, RULES, np.array([deck]), [0], [1], ["random"] * 3)
    if len(deck) == 80:  # the bad deck among good ones
        decks = np.array([shuffle_deck(1), deck, shuffle_deck(2)])
        _same_error(ref, play_batch, RULES, decks, [0, 0, 0], [1, 2, 3], ["random"] * 3)


@pytest.mark.parametrize("dealer", [-1, 3, 7])
def test_bad_dealer(dealer: int) -> None:
    ref = _reference_error(Game(RULES).new_initial_state, shuffle_deck(1), dealer)
    decks = np.array([shuffle_deck(1), shuffle_deck(2)], dtype=np.uint8)
    _same_error(ref, play_batch, RULES, decks, [0, dealer], [1, 2], ["random"] * 3)


def test_bad_dealer_four_players() -> None:
    rules = RuleSet.from_dict({**RULES.to_dict(), "players": 4})
    ref = _reference_error(Game(rules).new_initial_state, shuffle_deck(1), 4)
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    _same_error(ref, play_batch, rules, decks, [4], [1], ["random"] * 4)


@dataclass(frozen=True)
class _Spec:
    rules: RuleSet
    policies: tuple[str, ...]
    seed: int = 1
    deals: int = 2
    session_length: int = 2
    duplicate: bool = False


@pytest.mark.parametrize("name", ["nope", "Nope ", "minimax"])
def test_unknown_policy(name: str) -> None:
    ref = _reference_error(load_policy, name)
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    _same_error(ref, play_batch, RULES, decks, [0], [1], ["random", name, "random"])
    _same_error(ref, play_sessions, _Spec(RULES, ("random", "random", name)), range(0, 1))


def test_policy_count() -> None:
    ref = _reference_error(load_policies, ["random", "random"], 3)
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    _same_error(ref, play_batch, RULES, decks, [0], [1], ["random", "random"])


def test_module_policy_has_no_compiled_version() -> None:
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    with pytest.raises(PaohuziError, match="no compiled version"):
        play_batch(RULES, decks, [0], [1], ["random", "engine.policies.greedy:X", "random"])
