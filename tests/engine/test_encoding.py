"""The learners' encoding (engine/encoding.py, issue 63): every legal option of many random
decisions has one index and comes back from it; the 吃 patterns are exactly those the engine
can offer; the observation vector is the same in every deal the seat cannot tell apart."""

from __future__ import annotations

import dataclasses
import itertools
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search_helpers import mid_hand
from sizes import size

from engine import actions as A
from engine.deck import shuffle_deck
from engine.encoding import (
    ACTION_SIZE,
    CHI_OFFSET,
    CHI_PATTERNS,
    OBS_FIELDS,
    OBS_HIGH,
    OBS_SIZE,
    ROLES,
    action_index,
    field_slice,
    index_action,
    legal_mask,
    observation_dict,
    observation_vector,
    role_shape,
)
from engine.rules import PRESETS, RuleSet
from engine.search import determinize
from engine.state import Game, _bi_covers

#: The rule sets of the round trip: every preset, and 一五十 on (its 吃 patterns).
RULE_SETS = [*PRESETS.values(), dataclasses.replace(PRESETS["hunan"], one_five_ten=True)]


def test_the_action_space_is_small_and_dense() -> None:
    assert ACTION_SIZE == 154 and len(CHI_PATTERNS) == 71
    assert OBS_SIZE == sum(n for _, n, _, _ in OBS_FIELDS) == OBS_HIGH.shape[0]
    cards: list[int | None] = [None, *range(20)]
    seen = set()
    for i in range(ACTION_SIZE):
        for c in cards:
            try:
                code = index_action(i, c)
            except ValueError:
                continue
            assert action_index(code, c) == i
            seen.add(i)
    assert seen == set(range(ACTION_SIZE))
    with pytest.raises(ValueError):
        index_action(ACTION_SIZE, None)


def _engine_patterns(rules: RuleSet) -> set[tuple[str, ...]]:
    """The 吃 patterns the engine offers, over every hand a face can be eaten with (the
    engine's own cover search, ``State._chi_options``' loop, on each hand of the faces that
    share a group with it, 0–2 loose copies each)."""
    game = Game(rules)
    out = set()
    for c in range(20):
        near = sorted({x for s, _ in game.shapes_with[c] for x in s})
        for counts in itertools.product(range(3), repeat=len(near)):
            free = [0] * 20
            for x, n in zip(near, counts):
                free[x] = n
            for shape, (a, b) in game.shapes_with[c]:
                if free[a] < 1 + (a == b) or free[b] < 1:
                    continue
                free[a] -= 1
                free[b] -= 1
                covers = [()] if free[c] == 0 else _bi_covers(free, c, free[c], game.shapes_with[c])
                for cover in covers:
                    code = A.encode_chi((shape, *cover))
                    out.add(CHI_PATTERNS[action_index(code, c) - CHI_OFFSET])
                free[a] += 1
                free[b] += 1
    return out


def test_the_chi_patterns_are_those_the_engine_offers() -> None:
    plain = _engine_patterns(PRESETS["hunan"])
    with_1510 = _engine_patterns(dataclasses.replace(PRESETS["hunan"], one_five_ten=True))
    assert plain | with_1510 == set(CHI_PATTERNS)
    assert all("F" not in p for p in plain)
    assert all(sorted(p, key=ROLES.index) == list(p) for p in CHI_PATTERNS)
    assert role_shape("F", 4) == (0, 4, 9) and role_shape("E", 3) is None


def test_every_legal_option_round_trips() -> None:
    """Every legal option of every decider, over random hands of every rule set, has its own
    index, the mask holds exactly those, and the index gives the code back."""
    want = size(10_000, 1_000_000)
    decisions = 0
    hand = 0
    while decisions < want:
        rules = RULE_SETS[hand % len(RULE_SETS)]
        s = Game(rules).new_initial_state(shuffle_deck(hand), hand % rules.players)
        rng = random.Random(hand)
        hand += 1
        while s.outcome is None:
            for seat in s.deciders():
                legal = s.legal_actions(seat)
                idx = [action_index(code, s.card) for code in legal]
                assert len(set(idx)) == len(legal), (legal, idx)
                assert [index_action(i, s.card) for i in idx] == legal
                mask = legal_mask(s, seat)
                assert mask.sum() == len(legal) and mask[idx].all()
                decisions += 1
            who = s.current_player()
            assert who is not None
            legal = s.legal_actions(who)
            s.apply(who, legal[rng.randrange(len(legal))])


@settings(max_examples=size(60, 2_000), deadline=None)
@given(
    preset=st.sampled_from(sorted(PRESETS)),
    deck_seed=st.integers(0, 10**6),
    steps=st.integers(0, 60),
    draw_seed=st.integers(0, 10**6),
)
def test_the_vector_does_not_see_hidden_cards(
    preset: str, deck_seed: int, steps: int, draw_seed: int
) -> None:
    """Redeal what the seat to act has not seen (others' hands, their 偎 faces, the stock:
    ``engine.search.determinize``) and its vector is unchanged."""
    s = mid_hand(preset, deck_seed, steps)
    if s is None:
        return
    seat = s.current_player()
    assert seat is not None
    v = observation_vector(s, seat)
    rng = random.Random(draw_seed)
    for _ in range(3):
        d = determinize(s, seat, rng)
        assert np.array_equal(observation_vector(d, seat), v)
        assert np.array_equal(legal_mask(d, seat), legal_mask(s, seat))


def test_the_vector_is_within_its_bounds_and_reads_back() -> None:
    for deck_seed in range(40):
        preset = sorted(PRESETS)[deck_seed % len(PRESETS)]
        s = mid_hand(preset, deck_seed, deck_seed % 50, with_choice=False)
        if s is None:
            continue
        for seat in range(s.n_seats):
            v = observation_vector(s, seat)
            assert v.dtype == np.float32 and (v >= 0).all() and (v <= OBS_HIGH).all()
            d = observation_dict(v)
            assert d["hand"] == list(s.hands[seat])
            assert d["stock_left"] == len(s.stock)
            assert sum(d[f"seat{j}.active"] for j in range(4)) == 3
            assert d["seat0.active"] == (seat in s.active)
            assert list(v[field_slice("hand")]) == list(s.hands[seat])


def test_others_wei_faces_are_hidden() -> None:
    """A seat with a 偎 on the table: its own vector shows the face, another seat's shows a
    face-down 偎 only."""
    found = 0
    for deck_seed in range(400):
        s = mid_hand("hunan", deck_seed, 40, with_choice=False)
        if s is None:
            continue
        for owner in s.active:
            weis = [g.cards[0] for g in s.melds[owner] if g.kind == 2]  # GroupKind.WEI
            if not weis:
                continue
            found += 1
            own = observation_dict(observation_vector(s, owner))
            assert all(own["seat0.wei"][k] for k in weis)
            for other in s.active:
                if other != owner:
                    j = (owner - other) % s.n_seats
                    seen = observation_dict(observation_vector(s, other))
                    assert not any(seen[f"seat{j}.wei"]) and seen[f"seat{j}.wei_hidden"] == len(
                        weis
                    )
        if found >= 5:
            break
    assert found >= 5


def test_the_env_doc_lists_every_field_and_the_sizes() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ENV.md").read_text(encoding="utf-8")
    for name, _, _, _ in OBS_FIELDS:
        if not name.startswith("seat") or name.startswith("seat0."):
            assert f"`{name.removeprefix('seat0.')}`" in doc, name
    assert f"A = {ACTION_SIZE}" in doc and f"{OBS_SIZE} numbers" in doc
    for p in CHI_PATTERNS:
        assert "+".join(p) in doc, p
