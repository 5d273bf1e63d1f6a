"""Seeded random playouts with invariants checked after every action (STYLE §15)."""

from __future__ import annotations

import random

import pytest

from engine.actions import MAX_ACTION
from engine.cards import DECK_SIZE
from engine.deck import derive_seed, shuffle_deck
from engine.groups import GroupKind
from engine.observation import HIDDEN_WEI, Observation
from engine.policies import load_policies
from engine.rules import find_rules
from engine.state import CardKind, Game, Phase, State

PUBLIC = {
    "rules",
    "dealer",
    "active",
    "xia",
    "shang",
    "hand",
    "hand_sizes",
    "melds",
    "own_meld_huxi",
    "visible_meld_huxi",
    "quads",
    "right",
    "discards",
    "discarded_faces",
    "stinky",
    "renpeng",
    "stock_left",
    "liang",
    "bottom",
    "bottom_shown",
    "card",
    "card_kind",
    "owner",
    "phase",
    "n_steps",
    "seen_counts",
    "to_dict",
    "seat",
}


def cards_in_play(state: State) -> int:
    n = sum(state.hand_size) + sum(state.table_cards) + sum(map(len, state.right))
    n += len(state.stock)
    if state.card is not None and state.card_kind != CardKind.LIANG:
        n += 1
    return n


def check_observation(state: State, seat: int) -> None:
    obs = state.observation(seat)
    assert {a for a in dir(obs) if not a.startswith("_")} <= PUBLIC
    d = obs.to_dict()
    assert d["hand"] == state.hands[seat]
    for s, melds in zip(state.active, d["melds"], strict=True):
        for (_kind, cards), real in zip(melds, state.melds[s], strict=True):
            if s != seat and real.kind == GroupKind.WEI:
                assert cards == [], "another seat's 偎 face leaked"
            else:
                assert cards == list(real.cards)
    if state.phase == Phase.DRAW_TAKE and state.owner != seat:
        assert d["card"] is None, "an unrevealed draw leaked"
    assert HIDDEN_WEI.cards == ()
    for value in d.values():  # nothing else is a per-seat hand or the stock
        assert value != state.stock[::-1] or len(state.stock) <= state.n_shown


def check_invariants(state: State, step: int) -> None:
    assert cards_in_play(state) == DECK_SIZE
    for s in state.active:
        assert state.hand_size[s] == sum(state.hands[s])
        assert state.table_cards[s] == sum(len(g.cards) for g in state.melds[s])
        assert all(0 <= n <= 4 for n in state.hands[s])
        # N ≤ T + 1, except a dead (empty) hand whose forced takes skip the discard (C14).
        assert state.n_cards(s) <= state.target(s) + 1 or state.hand_size[s] == 0
    if state.sitter is not None:
        assert state.hand_size[state.sitter] == 0 and not state.melds[state.sitter]
    for seat in state.deciders():
        legal = state.legal_actions(seat)
        assert legal, "a decider with no option"
        assert legal == sorted(set(legal)), "legal actions not sorted and unique"
        assert all(0 <= a <= MAX_ACTION for a in legal)
        if state.is_forced():
            assert len(legal) == 1
    if step % 7 == 0:
        assert state.clone() == state


def run_hands(preset: str, policy: str, n: int, base_seed: int) -> dict[str, int]:
    rules = find_rules(preset)
    game = Game(rules)
    policies = load_policies(policy, rules.players)
    tally: dict[str, int] = {}
    for i in range(n):
        seed = derive_seed(base_seed, preset, policy, i)
        deck = shuffle_deck(seed)
        dealer = seed % rules.players
        state = game.new_initial_state(deck, dealer)
        rngs = [random.Random(seed + s) for s in range(rules.players)]
        step = 0
        check_invariants(state, step)
        while state.outcome is None:
            seat = state.current_player()
            assert seat is not None
            legal = state.legal_actions(seat)
            if step % 5 == 0:
                check_observation(state, seat)
            action = policies[seat].act(Observation(state, seat), legal, rngs[seat])
            assert action in legal
            state.apply_checked(seat, action)
            step += 1
            check_invariants(state, step)
        out = state.outcome
        assert sum(out.deltas) == 0
        if out.winner is not None:
            assert out.result is not None and out.result.win
            assert out.deltas[out.winner] > 0 or out.result.score == 0
            if state.sitter is not None:
                assert out.deltas[state.sitter] == 0
        rebuilt = State.rebuild(rules, deck, dealer, state.history)
        assert rebuilt == state
        tally[out.kind.name] = tally.get(out.kind.name, 0) + 1
    return tally


@pytest.mark.parametrize(
    ("preset", "policy", "n"),
    [
        ("hunan", "random", 900),
        ("hunan-4p", "random", 400),
        ("luzhou", "random", 400),
        ("hunan-full", "random", 200),
        ("hunan", "heuristic", 300),
        ("hunan-4p", "heuristic", 150),
        ("luzhou", "heuristic", 150),
        ("hunan", "greedy", 150),
    ],
)
def test_random_playouts_keep_invariants(preset: str, policy: str, n: int) -> None:
    tally = run_hands(preset, policy, n, base_seed=2026)
    assert sum(tally.values()) == n
    assert tally.get("HU", 0) > 0, tally  # the playouts reach wins, not only 荒庄


def test_observation_phase_constant_matches_state() -> None:
    from engine import observation

    assert observation._DRAW_TAKE == Phase.DRAW_TAKE
