"""The learned policy (engine.policies.learned, engine.fast.learned): the reference's and the
compiled engine's features are the same floats at every decision of played hands, row for
row, on every preset; its defaults play as ``heuristic``, and the table made from a heuristic
table plays as that table; a learned weights file is checked strictly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from weights_helpers import ODD_LEARNED, write_weights

from engine.actions import HU
from engine.deck import shuffle_deck
from engine.errors import InvalidNotation
from engine.fast import learned as FL
from engine.fast.features import weights_array
from engine.fast.search import flat_state
from engine.play import play_hand
from engine.policies import load_policy
from engine.policies import weights as W
from engine.policies.heuristic import HeuristicPolicy
from engine.policies.learned import CLAIM, DISCARD, LearnedPolicy, from_heuristic
from engine.rules import PRESETS, find_rules
from engine.state import Game


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_both_engines_compute_the_same_features(preset: str) -> None:
    """At every decision with options of 8 hands (played by an odd learned table, every
    feature parameter and coefficient off its default), the reference's feature rows equal
    the compiled kernel's, float for float, for discards and claims."""
    rules = find_rules(preset)
    game = Game(rules)
    table = W.weights_from_mapping(ODD_LEARNED, "learned")
    policy = LearnedPolicy.from_weights(table)
    w = weights_array(table)
    seen = {DISCARD: 0, CLAIM: 0}
    mingtang = np.zeros(len(W.MINGTANG))  # rows with each 名堂 feature set (discards)
    at = FL.D_MT
    for seed in range(8):
        state = game.new_initial_state(shuffle_deck(100 + seed), seed % rules.players)
        for step in play_hand(game, state.deck, state.dealer, [policy] * rules.players, seed):
            s = step.state
            if s.outcome is not None or s.forced:
                continue
            for seat in s.deciders():
                legal = list(s.pending[seat])
                if len(legal) < 2 or HU in legal:  # a 胡 is always taken
                    continue
                kind, rows = policy.features(s.observation(seat), legal)
                if kind is None:
                    continue
                rp, hp, st = flat_state(s)
                out = np.zeros((len(legal), FL.N_FEATURES))
                assert FL.features(rp, w, st, seat, out) == kind
                width = len(rows[0])
                assert out[:, :width].tolist() == rows, (preset, seed, seat, kind)
                assert not out[:, width:].any()
                seen[kind] += 1
                if kind == DISCARD:
                    mingtang += out[:, at : at + len(W.MINGTANG)].sum(axis=0)
    assert seen[DISCARD] > 20 and seen[CLAIM] > 5, seen
    assert mingtang.sum() > 0, "no hand reached a 名堂 band: the test does not test them"


@pytest.mark.parametrize("preset", ["hunan", "luzhou", "hunan-4p"])
def test_the_defaults_play_as_the_heuristic_and_a_converted_table_as_its_source(
    preset: str,
) -> None:
    rules = find_rules(preset)
    game = Game(rules)
    tuned = W.load_spec("heuristic@tuned-hunan")
    pairs = [
        (load_policy("heuristic"), load_policy("learned")),
        (HeuristicPolicy.from_weights(tuned), LearnedPolicy.from_weights(from_heuristic(tuned))),
    ]
    for heuristic, learned in pairs:
        for seed in range(40):
            deck = shuffle_deck(seed)
            a = [
                (s.seat, s.action)
                for s in play_hand(game, deck, 0, [heuristic] * rules.players, seed)
            ]
            b = [
                (s.seat, s.action)
                for s in play_hand(game, deck, 0, [learned] * rules.players, seed)
            ]
            assert a == b, (preset, seed)


def test_from_heuristic_gives_the_defaults_for_the_default_table() -> None:
    assert from_heuristic(W.DEFAULT_HEURISTIC) == W.DEFAULT_LEARNED
    with pytest.raises(ValueError, match="a learned table, not a heuristic one"):
        from_heuristic(W.DEFAULT_LEARNED)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"margin": -20.0}, "unknown parameter 'margin' for learned (a heuristic weight the"
         " learned policy replaces by a coefficient)"),
        ({"d_value": None}, "parameter 'd_value' is missing"),
        ({"c_peng": 1e9}, "parameter 'c_peng': 1000000000.0 is out of range -10000 … 10000"),
        ({"d_feed": "x"}, "parameter 'd_feed': expected a number, got 'x'"),
        ({"ready_takes": 0.5}, "parameter 'ready_takes': expected 0 or 1"),
    ],
)  # fmt: skip
def test_a_learned_file_is_checked_strictly(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    values: dict[str, object] = {**ODD_LEARNED, **change}
    values = {k: v for k, v in values.items() if v is not None}
    path = write_weights(tmp_path / "bad.json", "learned", values)  # type: ignore[arg-type]
    with pytest.raises(InvalidNotation) as e:
        load_policy(f"learned@{path}")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_heuristic_file_is_no_learned_table(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"policy": "heuristic", "weights": W.DEFAULT_HEURISTIC.as_dict()}))
    with pytest.raises(InvalidNotation, match="field policy: expected 'learned', got 'heuristic'"):
        load_policy(f"learned@{path}")
