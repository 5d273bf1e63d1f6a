"""The replayer: any step of any recorded hand equals the simulator's state at that step;
moving forward and backward; finding a hand by id; decisions; errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.deck import derive_seed
from engine.errors import IllegalAction
from engine.play import play_hand
from engine.policies import load_policies
from engine.rules import find_rules
from engine.state import Game, State
from replay import store
from replay.record import runner
from replay.record.spec import RunSpec
from replay.replayer.hand import (
    HandLog,
    Replayer,
    StepOutOfRange,
    UnknownHand,
    decision_at,
    list_hands,
    list_runs,
    load_hand,
    replay_hand,
)
from replay.store.layout import StoreError
from replay.store.manifest import write_manifest
from replay.store.runs import open_store
from replay.store.scan import file_sha256

PRESETS = {"hunan": 36, "hunan-4p": 24, "luzhou": 24}  # preset → hands in its fixture run


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one small simulated run per rule preset (several shards each)."""
    d = tmp_path_factory.mktemp("replayer")
    for preset, n in PRESETS.items():
        spec = RunSpec(
            rules=find_rules(preset),
            policies=("random",) * find_rules(preset).players,
            seed=21,
            deals=n,
            session_length=4,
            shard_hands=8,
        )
        runner.simulate(spec, d, preset)
    return d


def simulated_states(run: store.Run, hand_id: int) -> list[State]:
    """Re-simulate a recorded hand with its policies and seed; a clone of the state at
    every step (step 0 = the deal)."""
    m = run.manifest
    row = run.read_hand(hand_id).hand
    rules = run.rules
    names = m["params"]["seat_policies"][row["rotation"]]
    policies = load_policies(list(names), rules.players)
    game = Game(rules)
    deck = tuple(row["deck"])
    states = [game.new_initial_state(deck, row["dealer"])]
    seed = derive_seed(m["params"]["seed"], "hand", hand_id)
    for step in play_hand(game, deck, row["dealer"], policies, seed):
        states.append(step.state.clone())
    return states


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_replayed_state_equals_simulated_state_at_every_step(root: Path, data: st.DataObject):
    preset = data.draw(st.sampled_from(sorted(PRESETS)), label="preset")
    hand_id = data.draw(st.integers(0, PRESETS[preset] - 1), label="hand")
    run = open_store(root).run(preset)
    expected = simulated_states(run, hand_id)
    log = load_hand(root, preset, hand_id)
    assert log.n_steps == len(expected) - 1
    for k, state in enumerate(expected):
        assert replay_hand(log, step=k) == state, (preset, hand_id, k)
    assert replay_hand(log) == expected[-1]
    assert replay_hand(log).is_terminal()


def test_forward_and_backward(root: Path) -> None:
    log = load_hand(root, "hunan", 5)
    rp = Replayer(log)
    forward = [rp.forward().clone() for _ in range(log.n_steps)]
    assert rp.step == log.n_steps and rp.state.is_terminal()
    rp.forward()  # stays at the end
    assert rp.step == log.n_steps
    for k in range(log.n_steps - 1, -1, -1):
        assert rp.back() == replay_hand(log, k)
    assert rp.step == 0
    assert forward[-1] == replay_hand(log)
    assert rp.seek(-1) == replay_hand(log)  # negative steps count from the end
    assert [s.clone() for s in rp] == [replay_hand(log, k) for k in range(log.n_steps + 1)]


def test_decisions_match_the_recorded_events(root: Path) -> None:
    for hand_id in range(6):
        log = load_hand(root, "hunan-4p", hand_id)
        rp = Replayer(log)
        for k in range(log.n_steps):
            d = decision_at(log, k)
            assert d == rp.decision(k)
            assert d.seat == log.event_rows["seat"][k]
            assert d.action == log.event_rows["action"][k]
            assert d.action in d.legal
            assert d.forced == log.event_rows["forced"][k]
            assert len(d.legal) == log.event_rows["n_legal"][k]
            assert d.chosen_str in d.legal_str
            assert d.to_dict()["chosen"] == d.chosen_str


def test_load_hand_equals_the_store_reader(root: Path) -> None:
    run = open_store(root).run("luzhou")
    for hand_id in (0, 7, 8, 23):
        rec = run.read_hand(hand_id)
        log = load_hand(open_store(root), "luzhou", hand_id)
        assert log.hand == rec.hand
        assert log.event_rows == rec.events
        assert log.events == tuple(rec.history)
        assert log.rules == run.rules and log.deck == rec.deck and log.dealer == rec.dealer
        assert replay_hand(log) == rec.rebuild(run.rules)


def test_hand_found_in_a_file_with_many_row_groups(tmp_path: Path, root: Path) -> None:
    """The lookup reads only the row groups that hold the hand."""
    shutil.copytree(root / "runs" / "run=hunan", tmp_path / "runs" / "run=hunan")
    run = open_store(tmp_path).run("hunan")
    for s in run.shards:
        for t in ("hands", "events"):
            p = run.shard_path(s, t)
            pq.write_table(pq.read_table(p), p, row_group_size=3)
            assert pq.ParquetFile(p).metadata.num_row_groups > 1
            # The manifest is made to agree, as a writer with that layout would have it.
            s["files"][t].update(bytes=p.stat().st_size, sha256=file_sha256(p))
    write_manifest(run.path, run.manifest)
    run = open_store(tmp_path).run("hunan")
    for hand_id in range(PRESETS["hunan"]):
        assert load_hand(tmp_path, "hunan", hand_id).event_rows == run.read_hand(hand_id).events


def test_listing(root: Path) -> None:
    runs = {r["run"]: r for r in list_runs(root)}
    assert set(runs) == set(PRESETS)
    assert runs["hunan-4p"]["players"] == 4 and runs["hunan"]["hands"] == PRESETS["hunan"]
    hands = list_hands(root, "hunan", offset=6, limit=5)
    assert [h["hand_id"] for h in hands] == [6, 7, 8, 9, 10]
    assert "deck" not in hands[0]
    assert len(list_hands(root, "hunan", limit=None)) == PRESETS["hunan"]


def test_errors(root: Path) -> None:
    with pytest.raises(StoreError, match="no run 'nope'"):
        load_hand(root, "nope", 0)
    with pytest.raises(UnknownHand, match="has no hand 36"):
        load_hand(root, "hunan", 36)
    log = load_hand(root, "hunan", 1)
    with pytest.raises(StepOutOfRange, match=f"0 … {log.n_steps}"):
        replay_hand(log, log.n_steps + 1)
    with pytest.raises(StepOutOfRange):
        decision_at(log, log.n_steps)
    with pytest.raises(StepOutOfRange):
        replay_hand(log, -log.n_steps - 2)


def test_an_illegal_event_is_located(root: Path) -> None:
    log = load_hand(root, "hunan", 2)
    seat, _ = log.events[0]
    bad = HandLog.from_history(
        log.rules, log.deck, log.dealer, [(seat, 999), *log.events[1:]], run="x", hand_id=2
    )
    replay_hand(bad, 0)  # the deal itself is fine
    with pytest.raises(IllegalAction, match="run x hand 2 event seq 0"):
        replay_hand(bad, 1)
    with pytest.raises(IllegalAction, match="seq 0"):
        decision_at(bad, 0)


def test_a_deck_that_is_not_a_permutation(root: Path) -> None:
    log = load_hand(root, "hunan", 3)
    deck = (log.deck[1],) + log.deck[1:]
    bad = HandLog.from_history(log.rules, deck, log.dealer, log.events, run="x", hand_id=3)
    with pytest.raises(IllegalAction, match="not a permutation"):
        replay_hand(bad, 0)
