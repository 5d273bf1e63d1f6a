"""Bad input to the compiled engine raises what the reference raises (same engine.errors type,
same text), before any kernel runs; and the compiled integers hold the extremes the reference
computes (胡息, 番, score under hunan-full; long sessions; long 荒庄 streaks)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.deck import shuffle_deck
from engine.errors import PaohuziError
from engine.fast.play import play_batch, play_sessions
from engine.fast.warmup import SessionSpec
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


@pytest.mark.parametrize("name", ["nope", "Nope ", "minimax"])
def test_unknown_policy(name: str) -> None:
    ref = _reference_error(load_policy, name)
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    _same_error(ref, play_batch, RULES, decks, [0], [1], ["random", name, "random"])
    _same_error(ref, play_sessions, SessionSpec(RULES, ("random", "random", name)), range(0, 1))


def test_policy_count() -> None:
    ref = _reference_error(load_policies, ["random", "random"], 3)
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    _same_error(ref, play_batch, RULES, decks, [0], [1], ["random", "random"])


def test_module_policy_has_no_compiled_version() -> None:
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    with pytest.raises(PaohuziError, match="no compiled version"):
        play_batch(RULES, decks, [0], [1], ["random", "engine.policies.greedy:X", "random"])


# ------------------------------------------------------------------ integer widths


def _reference_outcome(rules: RuleSet, deck: list[int], dealer: int, seed: int) -> tuple:
    from engine.play import play_to_end
    from engine.policies import load_policies as lp

    st = play_to_end(Game(rules), deck, dealer, lp("random", rules.players), seed)
    o = st.outcome
    assert o is not None
    res = o.result
    if res is None or o.winner is None:
        return (int(o.kind), 0, 0, 0, tuple(o.deltas[: rules.players]))
    return (
        int(o.kind),
        res.huxi,
        res.fan,
        res.score,
        tuple(o.deltas[: rules.players]),
    )


def _big_deck(rng: random.Random, dealt: list[int]) -> list[int]:
    """``dealt`` (21 cards) to the dealer (positions 0…19 and 60), the rest shuffled."""
    rest = [k for k in range(20) for _ in range(4)]
    for k in dealt:
        rest.remove(k)
    rng.shuffle(rest)
    return dealt[:20] + rest[:40] + [dealt[20]] + rest[40:]


def test_extreme_wins_hunan_full() -> None:
    """Decks that deal the dealer four big 提 and big runs (and biased all-big hands): the
    compiled engine's 胡息 / 番 / score / deltas equal the reference's, at their largest."""
    full = find_rules("hunan-full")
    rng = random.Random(5)
    four_ti = [k for k in (13, 14, 17, 18) for _ in range(4)] + [10, 11, 12, 15, 15]
    decks = [_big_deck(rng, four_ti) for _ in range(6)]
    big = [k for k in range(10, 20) for _ in range(4)]
    for _ in range(40):
        decks.append(_big_deck(rng, rng.sample(big, 21)))
    arr = np.array(decks, dtype=np.uint8)
    seeds = list(range(len(decks)))
    _, hands = play_batch(full, arr, [0] * len(decks), seeds, ["random"] * 3)
    best = [0, 0, 0]
    for i, deck in enumerate(decks):
        kind, huxi, fan, score, deltas = _reference_outcome(full, deck, 0, seeds[i])
        won = hands["winner"][i] != 255
        got = (
            int(hands["outcome"][i]),
            int(hands["huxi"][i]) if won else 0,
            int(hands["fan"][i]) if won else 0,
            int(hands["score"][i]) if won else 0,
            tuple(int(hands[f"delta_{s}"][i]) for s in range(3)),
        )
        assert got == (kind, huxi, fan, score, deltas), f"deck {i}"
        best = [max(best[0], huxi), max(best[1], fan), max(best[2], score)]
    print("\nextremes through play:", best)
    assert best[0] >= 50 and best[2] >= 50  # big wins were reached, not only small ones


def _reference_streaks(spec: Any) -> tuple[list[int], list[int]]:
    from replay.record.recorder import ShardRecorder
    from replay.record.shard import play_sessions as ref_sessions

    rec = ShardRecorder(spec.rules)
    ref_sessions(spec, range(1), rec, None)
    return list(rec.h_streak), list(rec.h_dealer)


def test_long_huangzhuang_streaks() -> None:
    """Sessions of 300 deals that all end in 荒庄 (min_huxi 99): with huangzhuang_rotate 256
    (the largest allowed) the streak runs up to 255, the widest the uint8 column holds, and
    both engines agree on every streak and dealer; a larger rotate is refused with the rules,
    before any hand is played, so no run can fail (or wrap around) at its 256th 荒庄."""
    from engine.errors import InvalidRules
    from replay.record.spec import RunSpec

    rules = RULES.with_overrides(["min_huxi=99", "huangzhuang_rotate=256"])
    spec = RunSpec(rules=rules, policies=("random",) * 3, seed=3, deals=300, session_length=300)
    _, h = play_sessions(spec, range(1))
    assert (h["outcome"] == 1).all()
    streaks, dealers = _reference_streaks(spec)
    assert h["huang_streak"].tolist() == streaks and h["dealer"].tolist() == dealers
    assert max(streaks) == 255 and streaks[256] == 0 and dealers[256] != dealers[255]
    with pytest.raises(InvalidRules, match=r"huangzhuang_rotate=257: expected 1\.\.256"):
        RULES.with_overrides(["huangzhuang_rotate=257"])


def test_cli_refuses_a_rotate_beyond_the_streak_column(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from paohuzi.cli.main import main

    r = CliRunner().invoke(main, ["simulate", "--data", str(tmp_path), "-n", "3", "-q",
                                  "--set", "huangzhuang_rotate=400"])  # fmt: skip
    assert r.exit_code != 0
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "huangzhuang_rotate=400: expected 1..256" in lines[0], r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
