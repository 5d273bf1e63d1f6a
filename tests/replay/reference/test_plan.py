"""The report's plan of ladders (replay.reference.plan, issue 45): one ladder per preset with
shipped sets of its own, every pair once, each match seating the one policy against the
other in every other seat of the preset's table."""

from __future__ import annotations

from itertools import combinations

import pytest

from engine.rules import find_rules
from replay.reference import plan as P

FULL = P.SCALES["full"]


@pytest.mark.parametrize("preset", P.LADDER_PRESETS)
def test_a_ladder_seats_every_pair_once_at_the_presets_table(preset: str) -> None:
    pairs = [s for s in P.studies(FULL) if s.section == "ladder" and s.preset == preset]
    names = P.ladder_policies(FULL, preset)
    assert {frozenset(s.policies) for s in pairs} == {frozenset(p) for p in combinations(names, 2)}
    players = find_rules(preset).players
    for s in pairs:
        dear, *rest = s.policies
        assert len(s.policies) == players and len(set(rest)) == 1, s.key
        assert names.index(dear) > names.index(rest[0]), s.key  # the dearer in the one seat
        assert s.spec().rules.players == players and s.duplicate
    # the preset's own shipped sets, and no other preset's
    assert f"heuristic@tuned-{preset}" in names and f"learned@{preset}" in names
    assert not any(n.endswith(("@hunan", "@tuned-hunan")) for n in names if preset != "hunan")


def test_run_names_are_unique_and_the_hunan_ladder_keeps_its_keys() -> None:
    studies = P.studies(FULL)
    assert len({s.run_name() for s in studies}) == len(studies)
    hunan = [s.key for s in studies if s.section == "ladder" and s.preset == "hunan"]
    assert "ladder.learned_hunan.heuristic_tuned-hunan" in hunan  # as the published runs
    assert all(k.startswith("ladder.") for k in hunan)
    others = [s.key for s in studies if s.section == "ladder" and s.preset != "hunan"]
    assert others and all(k.startswith(("ladder-hunan-4p.", "ladder-luzhou.")) for k in others)
