"""The two engines behind ``paohuzi simulate`` write the same bytes (DESIGN "Two engines, one
truth"): for the same command, the compiled engine (``--engine fast``) and the Python
reference (``--engine reference``) give identical shard files, row for row; a run may be
resumed with the other engine; ``auto`` picks the compiled engine only for policies it has.

The kernel-level and many-hand equality tests are in tests/engine/fast/; this file checks the
whole recording path (runner, recorder tables, Parquet bytes, manifest)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner
from weights_helpers import FLAGS_OFF, ODD_GREEDY, ODD_HEURISTIC, ODD_LEARNED, write_weights

from engine.rules import find_rules
from paohuzi.cli.main import main
from replay.record import runner
from replay.record.fast_engine import fast_policies, resolve
from replay.record.spec import RunSpec
from replay.store.runs import open_store


def first_difference(a: pa.Table, b: pa.Table, key: str) -> str:
    """The first row where two tables differ, named by ``key``, or ''."""
    for name in a.column_names:
        x, y = a.column(name).to_pylist(), b.column(name).to_pylist()
        for i, (u, v) in enumerate(zip(x, y)):
            if u != v:
                row_a = {c: a.column(c)[i].as_py() for c in a.column_names if c != "deck"}
                return f"column {name} differs at {key} row {i}: fast {u!r}, reference {v!r}; row {row_a}"
        if len(x) != len(y):
            return f"column {name}: {len(x)} rows (fast) vs {len(y)} (reference)"
    return ""


def run_both(tmp_path: Path, spec: RunSpec) -> None:
    runs = {}
    for engine in ("fast", "reference"):
        res = runner.simulate(dataclasses.replace(spec, engine=engine), tmp_path / engine, "r")
        runs[engine] = open_store(tmp_path / engine).run(res.name)
    for table in ("hands", "events"):
        diff = first_difference(
            runs["fast"].read_table(table), runs["reference"].read_table(table), table
        )
        assert not diff, diff
    for s_fast, s_ref in zip(runs["fast"].shards, runs["reference"].shards, strict=True):
        assert s_fast["engine"] == "fast" and s_ref["engine"] == "reference"
        for t in ("hands", "events"):  # the same Parquet bytes
            assert s_fast["files"][t]["sha256"] == s_ref["files"][t]["sha256"], (s_fast, t)


POLICY_MIXES = [
    ("random",),
    ("greedy",),
    ("greedy", "random", "greedy"),
    ("heuristic",),
    ("heuristic", "greedy", "random"),
]


@pytest.mark.parametrize("preset", ["hunan", "hunan-basic", "hunan-full", "hunan-4p", "luzhou"])
@pytest.mark.parametrize("mix", POLICY_MIXES, ids="-".join)
def test_same_shards_from_both_engines(tmp_path: Path, preset: str, mix: tuple[str, ...]) -> None:
    rules = find_rules(preset)
    names = tuple(mix[s % len(mix)] for s in range(rules.players))
    assert set(names) <= fast_policies(), "every built-in policy plays compiled"
    # 3 shards per engine; many-hand equality of the kernels is tests/engine/fast's
    spec = RunSpec(rules=rules, policies=names, seed=11, deals=48, shard_hands=16)
    run_both(tmp_path, spec)


# the search policy over each rollout policy, beside the built-ins and itself
SEARCH_MIXES = [
    ("search@2/random", "heuristic"),
    ("search@2/heuristic", "greedy", "search@1/greedy"),
]


# hunan-basic is hunan-full's scoring with fewer 名堂: the built-in mixes above cover it
@pytest.mark.parametrize("preset", ["hunan", "hunan-full", "hunan-4p", "luzhou"])
@pytest.mark.parametrize("mix", SEARCH_MIXES, ids="-".join)
def test_same_shards_with_the_search_policy(
    tmp_path: Path, preset: str, mix: tuple[str, ...]
) -> None:
    """Duplicate sessions with search seats: the compiled search (one compiled call per
    decision) records the reference's rows, byte for byte."""
    rules = find_rules(preset)
    names = tuple(mix[s % len(mix)] for s in range(rules.players))
    assert resolve("auto", RunSpec(rules=rules, policies=names, seed=1, deals=1)) == "fast"
    spec = RunSpec(rules=rules, policies=names, seed=13, deals=4, session_length=3,
                   duplicate=True, shard_hands=len(names) * 3)  # fmt: skip
    run_both(tmp_path, spec)


@pytest.mark.parametrize("preset", ["hunan", "hunan-4p", "luzhou"])
def test_same_shards_with_weights_tables(tmp_path: Path, preset: str) -> None:
    """Non-default weights tables (heuristic with every parameter moved, heuristic with its
    flags off, greedy's) play compiled under ``auto`` and record the reference's bytes; the
    manifest of both records the tables, parameter by parameter."""
    rules = find_rules(preset)
    odd = write_weights(tmp_path / "odd.json", "heuristic", ODD_HEURISTIC)
    off = write_weights(tmp_path / "off.json", "heuristic", FLAGS_OFF)
    g = write_weights(tmp_path / "g.json", "greedy", ODD_GREEDY)
    mix = (f"heuristic@{odd}", f"greedy@{g}", f"heuristic@{off}", "heuristic")
    names = mix[: rules.players]
    spec = RunSpec(rules=rules, policies=names, seed=17, deals=60, session_length=4,
                   duplicate=True, shard_hands=48)  # fmt: skip
    assert resolve("auto", spec) == "fast"
    run_both(tmp_path, spec)
    for engine in ("fast", "reference"):
        m = open_store(tmp_path / engine).run("r").manifest
        assert m["params"]["weights"][f"heuristic@{odd}"] == ODD_HEURISTIC
        assert m["params"]["weights"][f"greedy@{g}"] == ODD_GREEDY


@pytest.mark.parametrize("preset", ["hunan", "hunan-basic", "hunan-full", "hunan-4p", "luzhou"])
def test_same_shards_with_learned_tables(tmp_path: Path, preset: str) -> None:
    """``learned`` (engine.policies.learned / engine.fast.learned) with every coefficient and
    feature parameter moved, and with its defaults, beside heuristic and random: the same
    bytes from both engines, duplicate; the manifest records the learned table."""
    rules = find_rules(preset)
    odd = write_weights(tmp_path / "odd.json", "learned", ODD_LEARNED)
    names = (f"learned@{odd}", "learned", "heuristic", "random")[: rules.players]
    spec = RunSpec(rules=rules, policies=names, seed=29, deals=40, session_length=4,
                   duplicate=True, shard_hands=40)  # fmt: skip
    assert resolve("auto", spec) == "fast"
    run_both(tmp_path, spec)
    m = open_store(tmp_path / "fast").run("r").manifest
    assert m["params"]["weights"][f"learned@{odd}"] == ODD_LEARNED


def test_same_shards_with_a_shipped_set_and_search(tmp_path: Path) -> None:
    """``heuristic@default`` beside a search seat (whose rollouts keep the default table)."""
    rules = find_rules("hunan")
    odd = write_weights(tmp_path / "odd.json", "heuristic", ODD_HEURISTIC)
    names = ("heuristic@default", "search@1/heuristic", f"heuristic@{odd}")
    spec = RunSpec(rules=rules, policies=names, seed=19, deals=3, session_length=3,
                   shard_hands=3)  # fmt: skip
    run_both(tmp_path, spec)


@pytest.mark.parametrize("preset", ["hunan", "hunan-4p", "luzhou"])
def test_same_shards_with_search_over_tables(tmp_path: Path, preset: str) -> None:
    """Search seats whose rollouts play a table (``search@N/POLICY@WEIGHTS``: a learned file
    with every parameter moved, the shipped ``learned@hunan``, a heuristic file): the same
    bytes from both engines, duplicate; the manifest records each rollout table."""
    rules = find_rules(preset)
    odd = write_weights(tmp_path / "odd.json", "learned", ODD_LEARNED)
    h = write_weights(tmp_path / "h.json", "heuristic", ODD_HEURISTIC)
    names = (f"search@2/learned@{odd}", "search@2/learned@hunan", f"search@1/heuristic@{h}",
             "learned")[: rules.players]  # fmt: skip
    spec = RunSpec(rules=rules, policies=names, seed=31, deals=3, session_length=2,
                   duplicate=True, shard_hands=len(names) * 2)  # fmt: skip
    assert resolve("auto", spec) == "fast"
    run_both(tmp_path, spec)
    weights = open_store(tmp_path / "fast").run("r").manifest["params"]["weights"]
    assert weights[f"learned@{odd}"] == ODD_LEARNED
    assert weights[f"heuristic@{h}"] == ODD_HEURISTIC
    assert "learned@hunan" in weights


def test_same_shards_with_the_tuned_set(tmp_path: Path) -> None:
    """The shipped ``heuristic@tuned-hunan`` (docs/TUNING.md) against the defaults, duplicate."""
    rules = find_rules("hunan")
    names = ("heuristic@tuned-hunan", "heuristic", "greedy")
    spec = RunSpec(rules=rules, policies=names, seed=23, deals=4, session_length=2,
                   duplicate=True, shard_hands=6)  # fmt: skip
    run_both(tmp_path, spec)


@pytest.mark.parametrize(
    "overrides",
    [("min_huxi=10", "one_five_ten=true"), ("hu_on_discards=true", "chouhu=false")],
)
def test_same_shards_with_rule_overrides(tmp_path: Path, overrides: tuple[str, ...]) -> None:
    rules = find_rules("hunan").with_overrides(overrides)
    spec = RunSpec(rules=rules, policies=("random", "greedy", "random"), seed=5, deals=160,
                   shard_hands=64)  # fmt: skip
    run_both(tmp_path, spec)


def test_duplicate_sessions_are_the_same(tmp_path: Path) -> None:
    spec = RunSpec(rules=find_rules("hunan"), policies=("greedy", "random", "random"), seed=3,
                   deals=64, session_length=5, duplicate=True, shard_hands=30)  # fmt: skip
    run_both(tmp_path, spec)


def test_a_run_resumes_with_the_other_engine(tmp_path: Path) -> None:
    spec = RunSpec(rules=find_rules("hunan"), policies=("random",) * 3, seed=8, deals=160,
                   shard_hands=40)  # fmt: skip
    whole = runner.simulate(dataclasses.replace(spec, engine="reference"), tmp_path / "a", "r")
    # A run made by the fast engine, with two shards lost, resumed by the reference engine.
    runner.simulate(dataclasses.replace(spec, engine="fast"), tmp_path / "b", "r")
    mpath = tmp_path / "b" / "runs" / "run=r" / "manifest.json"
    m = json.loads(mpath.read_text())
    m["shards"] = [s for s in m["shards"] if s["index"] not in (1, 3)]
    m["status"] = "interrupted"
    mpath.write_text(json.dumps(m))
    runner.simulate(dataclasses.replace(spec, engine="reference"), tmp_path / "b", "r")
    run = open_store(tmp_path / "b").run("r")
    assert [s["engine"] for s in run.shards] == ["fast", "reference", "fast", "reference"]
    assert run.content_digest() == open_store(tmp_path / "a").run(whole.name).content_digest()


def test_auto_picks_the_engine_that_can_play() -> None:
    rules = find_rules("hunan")
    spec = RunSpec(rules=rules, policies=("random",) * 3, seed=1, deals=1)
    assert resolve("auto", spec) == "fast"
    assert resolve("reference", spec) == "reference"
    plug = dataclasses.replace(spec, policies=("engine.policies.random_policy:RandomPolicy",) * 3)
    assert resolve("auto", plug) == "reference"


def test_fast_for_a_plug_in_policy_is_one_line(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        main,
        ["simulate", "--data", str(tmp_path), "-n", "5", "--engine", "fast", "-q",
         "--policies", "engine.policies.random_policy:RandomPolicy"],
    )  # fmt: skip
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "--engine fast: policy" in r.stderr and "no compiled version" in r.stderr
