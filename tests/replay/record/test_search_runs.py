"""``simulate`` with the ``search`` policy (issue 21): a run is a pure function of its command
(same bytes for any worker count and either engine, resumable with the other), the spec is
recorded verbatim, ``--engine auto`` plays it compiled, and a bad spec is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store.layout import run_dir
from replay.store.runs import open_store

SPEC = "search@2/random,heuristic,heuristic"


def simulate(data: Path, run: str, *extra: str) -> tuple[int, str]:
    r = CliRunner().invoke(
        main,
        ["simulate", "--data", str(data), "--run", run, "-n", "6", "--seed", "3", "--policies",
         SPEC, "--shard-hands", "3", "-q", *extra],
    )  # fmt: skip
    return r.exit_code, r.stderr


def test_a_search_run_is_the_same_bytes_for_any_worker_count_and_engine(tmp_path: Path) -> None:
    assert simulate(tmp_path / "a", "s", "-w", "1")[0] == 0
    assert simulate(tmp_path / "b", "s", "-w", "2")[0] == 0
    assert simulate(tmp_path / "c", "s", "-w", "2", "--engine", "reference")[0] == 0
    a, b, c = (open_store(tmp_path / d).run("s") for d in "abc")
    assert a.content_digest() == b.content_digest() == c.content_digest()
    m = json.loads((run_dir(tmp_path / "a", "s") / "manifest.json").read_text())
    assert m["params"]["policies"] == ["search@2/random", "heuristic", "heuristic"]
    assert {s["engine"] for s in m["shards"]} == {"fast"}  # auto: compiled
    assert {s["engine"] for s in c.shards} == {"reference"}
    assert a.read_hand(0).hand["policy_0"] == "search@2/random"


def test_a_search_run_resumes_with_the_other_engine(tmp_path: Path) -> None:
    short = ("--session-length", "3")  # two sessions, two shards
    assert simulate(tmp_path / "a", "s", "--engine", "reference", *short)[0] == 0
    mpath = run_dir(tmp_path / "a", "s") / "manifest.json"
    m = json.loads(mpath.read_text())
    m["shards"] = m["shards"][:1]
    m["status"] = "interrupted"
    mpath.write_text(json.dumps(m))
    assert simulate(tmp_path / "a", "s", "--engine", "fast", *short)[0] == 0
    run = open_store(tmp_path / "a").run("s")
    assert [s["engine"] for s in run.shards] == ["reference", "fast"]
    assert simulate(tmp_path / "b", "s", *short)[0] == 0
    assert run.content_digest() == open_store(tmp_path / "b").run("s").content_digest()


@pytest.mark.parametrize(
    ("policies", "message"),
    [
        ("search@0", "the rollouts must be 1 … 4096, not 0"),
        ("search@9/nope", "unknown rollout policy 'nope'"),
        ("search@x", "write search@N or search@N/POLICY"),
    ],
)
def test_bad_search_spec_is_one_error_line(tmp_path: Path, policies: str, message: str) -> None:
    r = CliRunner().invoke(
        main, ["simulate", "--data", str(tmp_path), "-n", "3", "--policies", policies, "-q"]
    )
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1 and message in r.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_options_are_valued_from_a_recorded_hand_at_step_k(tmp_path: Path) -> None:
    """evaluate works from the replayer's state of a recorded hand, the same as from the live
    state that reached it."""
    from engine.policies import load_policy
    from engine.search import evaluate
    from replay.replayer.hand import Replayer, load_hand

    r = CliRunner().invoke(
        main, ["simulate", "--data", str(tmp_path), "--run", "h", "-n", "3", "-q", "-w", "1"]
    )
    assert r.exit_code == 0, r.stderr
    rp = Replayer(load_hand(tmp_path, "h", 1))
    for k in range(rp.n_steps):
        state = rp.state_at(k)
        seat = state.current_player()
        if seat is not None and len(state.legal_actions(seat)) > 1:
            break
    else:
        pytest.skip("no real choice in the hand")
    rollout = load_policy("random")
    values = evaluate(state, seat, 4, rollout, seed=9)
    assert [v.action for v in values] == state.legal_actions(seat)
    live = state.clone()
    assert evaluate(live, seat, 4, rollout, seed=9) == values


def test_a_bare_search_plays_its_presets_rollouts_in_a_new_run_and_a_recorded_one_as_recorded(
    tmp_path: Path,
) -> None:
    """``search@N`` typed for a new hunan run plays and records learned@hunan's rollouts
    (engine.policies.search_policy.PRESET_ROLLOUTS: measured stronger, docs/SEARCH.md), the
    same hands as the explicit spec; under other rules it stays bare. A run that records a
    bare ``search@N`` (every run made before there was a preset rollout) plays heuristic
    rollouts, and verifies: the same hands as ``search@N/heuristic``."""
    from engine.rules import find_rules
    from replay.record.runner import simulate as record
    from replay.record.spec import RunSpec

    def run(data: Path, policies: str, *extra: str) -> dict[str, object]:
        r = CliRunner().invoke(
            main,
            ["simulate", "--data", str(data), "--run", "s", "-n", "4", "--seed", "3",
             "--policies", policies, "--shard-hands", "4", "-q", *extra],
        )  # fmt: skip
        assert r.exit_code == 0, r.stderr
        return json.loads((run_dir(data, "s") / "manifest.json").read_text())  # type: ignore[no-any-return]

    def digest(data: Path) -> str:
        return open_store(data).run("s").content_digest()

    m = run(tmp_path / "bare", "search@2,heuristic,heuristic")
    assert m["params"]["policies"] == ["search@2/learned@hunan", "heuristic", "heuristic"]  # type: ignore[index]
    assert "learned@hunan" in m["params"]["weights"]  # type: ignore[index]
    run(tmp_path / "explicit", "search@2/learned@hunan,heuristic,heuristic")
    assert digest(tmp_path / "bare") == digest(tmp_path / "explicit")
    for extra in (("-r", "luzhou"), ("--set", "min_huxi=10")):
        m = run(tmp_path / extra[1], "search@2,heuristic,heuristic", *extra)
        assert m["params"]["policies"] == ["search@2", "heuristic", "heuristic"], extra  # type: ignore[index]

    recorded = RunSpec(rules=find_rules("hunan"), policies=("search@2", "heuristic", "heuristic"),
                       seed=3, deals=4, shard_hands=4)  # fmt: skip
    record(recorded, tmp_path / "recorded", "s")
    run(tmp_path / "heuristic", "search@2/heuristic,heuristic,heuristic")
    old, new = (open_store(tmp_path / d).run("s") for d in ("recorded", "heuristic"))
    assert old.manifest["params"]["policies"][0] == "search@2"
    assert [old.read_hand(h).events for h in range(4)] == [
        new.read_hand(h).events for h in range(4)
    ]
    r = CliRunner().invoke(main, ["verify", "--data", str(tmp_path / "recorded")])
    assert r.exit_code == 0 and "all good" in r.output, r.output
    assert digest(tmp_path / "bare") != digest(tmp_path / "heuristic")
    # the command that recorded it confirms it as it was played: named, or by default name
    assert run(tmp_path / "recorded", "search@2,heuristic,heuristic")["params"]["policies"] == [  # type: ignore[index]
        "search@2", "heuristic", "heuristic"]  # fmt: skip
    record(recorded, tmp_path / "default")
    r = CliRunner().invoke(
        main,
        ["simulate", "--data", str(tmp_path / "default"), "-n", "4", "--seed", "3",
         "--policies", "search@2,heuristic,heuristic", "--shard-hands", "4", "-q"],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert [run.name for run in open_store(tmp_path / "default").runs()] == [
        recorded.default_name()]  # fmt: skip
