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
