"""Run management (``paohuzi runs``, ``hands``, ``rm``), duplicate and default-run imports,
and the smaller items of issue 10: ``export --force``, ``--data ""``, ``demo --seed -1``,
the interactive ``g`` prompt, hand ranges after a lost shard entry, policy load errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
from click.testing import CliRunner

from engine.rules import find_rules
from engine.state import OutcomeKind
from paohuzi.cli.main import main
from replay import schema
from replay.record import runner
from replay.record.spec import RunSpec
from replay.replayer import replay_file
from replay.store import manage
from replay.store.manifest import RunLock, read_manifest, write_manifest
from replay.store.runs import open_store

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "honghu-zimo.phz"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("runs")
    for name, rules, n in (("h", find_rules("hunan"), 24), ("lz", find_rules("luzhou"), 8)):
        spec = RunSpec(rules=rules, policies=("random",) * rules.players, seed=5, deals=n,
                       session_length=4, shard_hands=8)  # fmt: skip
        runner.simulate(spec, d, name)
    return d


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    d = tmp_path / "store"
    shutil.copytree(pristine, d)
    return d


def cli(*args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(main, list(args), input=input)


def one_error(res: Any, *needles: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------------------------------------
# paohuzi runs
# ---------------------------------------------------------------------------------------------


def test_runs_lists_every_run(root: Path) -> None:
    res = cli("runs", "--data", str(root))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["run", "status", "rules", "policies", "hands", "size", "created"]
    assert [ln.split()[:5] for ln in lines[1:]] == [
        ["h", "complete", "hunan", "random,random,random", "24"],
        ["lz", "complete", "luzhou", "random,random,random", "8"],
    ]
    rows = json.loads(cli("runs", "--data", str(root), "--json").stdout)
    assert [(r["run"], r["hands"], r["rules"]) for r in rows] == [("h", 24, "hunan"),
                                                                  ("lz", 8, "luzhou")]  # fmt: skip
    assert all(r["bytes"] > 0 and r["created"] for r in rows)


def test_runs_of_an_empty_store_and_an_unreadable_manifest(root: Path, tmp_path: Path) -> None:
    res = cli("runs", "--data", str(tmp_path / "empty"))
    assert res.exit_code == 0 and res.stdout == ""
    (root / "runs" / "run=lz" / "manifest.json").write_text("{not json")
    rows = json.loads(cli("runs", "--data", str(root), "--json").stdout)
    assert [(r["run"], r["status"]) for r in rows] == [("h", "complete"), ("lz", "unreadable")]


# ---------------------------------------------------------------------------------------------
# paohuzi hands
# ---------------------------------------------------------------------------------------------


def hands_json(root: Path, *args: str) -> dict[str, Any]:
    res = cli("hands", "h", "--data", str(root), "--json", *args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_hands_filters_agree_with_the_table(root: Path) -> None:
    t = open_store(root).run("h").read_table("hands")
    rows = t.to_pylist()
    every = hands_json(root, "--limit", "1000")
    assert [h["hand_id"] for h in every["hands"]] == list(range(24)) and not every["more"]
    cases: list[tuple[list[str], Any]] = [
        (["--winner", "1"], lambda r: r["winner"] == 1),
        (["--outcome", "hu"], lambda r: r["outcome"] == OutcomeKind.HU),
        (["--outcome", "HUANGZHUANG"], lambda r: r["outcome"] == OutcomeKind.HUANGZHUANG),
        (["--huxi-min", "18"], lambda r: r["huxi"] is not None and r["huxi"] >= 18),
        (["--huxi-max", "15"], lambda r: r["huxi"] is not None and r["huxi"] <= 15),
        (
            ["--winner", "0", "--huxi-min", "10", "--huxi-max", "30"],
            lambda r: r["winner"] == 0 and r["huxi"] is not None and 10 <= r["huxi"] <= 30,
        ),
    ]
    for bit_name in ("honghu", "红胡"):
        cases.append((["--mingtang", bit_name], lambda r: r["mingtang"] & 1))
    for args, keep in cases:
        got = [h["hand_id"] for h in hands_json(root, *args, "--limit", "1000")["hands"]]
        assert got == [r["hand_id"] for r in rows if keep(r)], args
    assert pc.sum(t["outcome"]).as_py() is not None  # the run has both outcomes, or not: fine


def test_hands_limit_and_text(root: Path) -> None:
    got = hands_json(root, "--limit", "5")
    assert [h["hand_id"] for h in got["hands"]] == [0, 1, 2, 3, 4] and got["more"]
    res = cli("hands", "h", "--data", str(root), "--limit", "3")
    lines = res.stdout.splitlines()
    assert lines[0].split()[:3] == ["hand", "outcome", "winner"] and len(lines) == 4
    assert "raise --limit" in res.stderr
    # the ids are those `replay RUN ID` takes
    hid = lines[2].split()[0]
    res = cli("replay", "h", hid, "--data", str(root), "--no-color")
    assert res.exit_code == 0 and f"run h · hand {hid} ·" in res.output
    res = cli("hands", "h", "--data", str(root), "--huxi-min", "99")
    assert res.exit_code == 0 and res.stdout == "" and "no hands match" in res.stderr


@pytest.mark.parametrize(
    "args, needle",
    [
        (["nope"], "no run 'nope'"),
        (["h", "--outcome", "win"], "unknown outcome 'win'"),
        (["h", "--mingtang", "nothing"], "unknown 名堂 'nothing'"),
        (["h", "--winner", "7"], "--winner"),
        (["h", "--limit", "0"], "--limit"),
        (["h", "--huxi-min", "x"], "--huxi-min"),
    ],
)
def test_hands_bad_input(root: Path, args: list[str], needle: str) -> None:
    one_error(cli("hands", *args[:1], "--data", str(root), *args[1:]), needle)


# ---------------------------------------------------------------------------------------------
# paohuzi rm
# ---------------------------------------------------------------------------------------------


def catalog_runs(root: Path) -> list[str]:
    con = open_store(root).connect()
    try:
        return [r[0] for r in con.execute("SELECT DISTINCT run FROM hands ORDER BY 1").fetchall()]
    finally:
        con.close()


def test_rm_asks_and_removes(root: Path) -> None:
    res = cli("rm", "lz", "--data", str(root))  # no terminal, no answer: nothing removed
    one_error(res, "lz", "--yes")
    res = cli("rm", "lz", "--data", str(root), input="n\n")
    assert res.exit_code == 1 and "kept" in res.stderr
    assert (root / "runs" / "run=lz").is_dir()
    res = cli("rm", "lz", "--data", str(root), input="y\n")
    assert res.exit_code == 0, res.output
    assert "remove run lz (8 hands" in res.stdout and "removed run lz" in res.stdout
    assert not (root / "runs" / "run=lz").exists()
    assert catalog_runs(root) == ["h"]
    assert [r.name for r in open_store(root).runs()] == ["h"]
    res = cli("rm", "h", "--data", str(root), "--yes")
    assert res.exit_code == 0 and catalog_runs(root) == []
    assert list((root / "runs").iterdir()) == []


def test_rm_refuses_a_run_being_written(root: Path) -> None:
    with RunLock(root / "runs" / "run=lz"):
        one_error(cli("rm", "lz", "--data", str(root), "--yes"), "being written")
    assert (root / "runs" / "run=lz" / "manifest.json").exists()
    assert catalog_runs(root) == ["h", "lz"]


def test_rm_bad_names(root: Path) -> None:
    one_error(cli("rm", "nope", "--data", str(root), "--yes"), "no run 'nope'", "h, lz")
    one_error(cli("rm", "../runs", "--data", str(root), "--yes"), "bad run name")
    one_error(cli("rm", "", "--data", str(root), "--yes"), "bad run name")
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=h", "run=lz"]


def test_remove_run_helper(root: Path) -> None:
    path = manage.remove_run(root, "h")
    assert path.name == "run=h" and not path.exists()
    assert not [p for p in (root / "runs").iterdir() if p.name.startswith(".removing")]


# ---------------------------------------------------------------------------------------------
# import: duplicates and the default run
# ---------------------------------------------------------------------------------------------


def test_the_same_hand_twice_is_refused(root: Path, tmp_path: Path) -> None:
    data = str(root)
    assert cli("import", str(EXAMPLE), "--data", data).exit_code == 0
    before = read_manifest(root / "runs" / "run=imported-hunan")
    one_error(cli("import", str(EXAMPLE), "--data", data), "already imported as run"
              " imported-hunan hand 0", "--allow-duplicate")  # fmt: skip
    # the same hand in another spelling, into another run: still the same hand
    js = tmp_path / "same.json"
    js.write_text(replay_file.to_json(replay_file.read_replay_file(EXAMPLE).log), encoding="utf-8")
    one_error(cli("import", str(js), "--data", data, "--run", "other"), "already imported")
    assert read_manifest(root / "runs" / "run=imported-hunan") == before
    assert not (root / "runs" / "run=other").exists()
    res = cli("import", str(js), "--data", data, "--allow-duplicate")
    assert res.exit_code == 0 and "hand 1" in res.stdout


def test_one_hand_twice_in_one_import_is_refused(tmp_path: Path) -> None:
    data = str(tmp_path / "s")
    one_error(cli("import", str(EXAMPLE), str(EXAMPLE), "--data", data), "already imported")
    res = cli("import", str(EXAMPLE), str(EXAMPLE), "--data", data, "--allow-duplicate")
    assert res.exit_code == 0 and "hand 1" in res.stdout


def test_an_exported_simulated_hand_imports_once(root: Path, tmp_path: Path) -> None:
    p = tmp_path / "h3.phz"
    assert cli("export", "h", "3", "--data", str(root), "-o", str(p)).exit_code == 0
    assert cli("import", str(p), "--data", str(root)).exit_code == 0
    one_error(cli("import", str(p), "--data", str(root)), "already imported")


def test_default_run_follows_the_rules(root: Path, tmp_path: Path) -> None:
    lz = tmp_path / "lz.phz"
    assert cli("export", "lz", "0", "--data", str(root), "-o", str(lz)).exit_code == 0
    res = cli("import", str(lz), "--data", str(root))
    assert res.exit_code == 0 and "as run imported-luzhou hand 0" in res.stdout
    res = cli("import", str(EXAMPLE), "--data", str(root))
    assert res.exit_code == 0 and "as run imported-hunan hand 0" in res.stdout
    odd = tmp_path / "odd.phz"
    odd.write_text(lz.read_text(encoding="utf-8").replace("rules: luzhou", "rules: luzhou\n"
                   "set: min_huxi=15"), encoding="utf-8")  # fmt: skip
    fp = replay_file.read_replay_file(odd).log.rules.fingerprint()[:8]
    res = cli("import", str(odd), "--data", str(root), "--allow-duplicate")
    if res.exit_code == 0:  # the hand may not be a win under the changed rules
        assert f"as run imported-luzhou-{fp} hand 0" in res.stdout


def test_a_run_with_other_rules_does_not_block_the_default(root: Path, tmp_path: Path) -> None:
    lz = tmp_path / "lz.phz"
    assert cli("export", "lz", "1", "--data", str(root), "-o", str(lz)).exit_code == 0
    # as an older version did: a luzhou hand in the run named imported-hunan
    assert cli("import", str(lz), "--data", str(root), "--run", "imported-hunan").exit_code == 0
    fp = find_rules("hunan").fingerprint()[:8]
    for _ in range(2):
        res = cli("import", str(EXAMPLE), "--data", str(root), "--allow-duplicate")
        assert res.exit_code == 0, res.output
        assert f"as run imported-hunan-{fp}" in res.stdout
    assert len(open_store(root).run(f"imported-hunan-{fp}").shards) == 2


# ---------------------------------------------------------------------------------------------
# Smaller items
# ---------------------------------------------------------------------------------------------


def test_export_does_not_overwrite_without_force(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "h.phz"
    out.write_text("precious\n")
    one_error(cli("export", "h", "1", "--data", str(root), "-o", str(out)), "exists", "--force")
    assert out.read_text() == "precious\n"
    res = cli("export", "h", "1", "--data", str(root), "-o", str(out), "--force")
    assert res.exit_code == 0 and out.read_text().startswith("# 跑胡子 replay file")


@pytest.mark.parametrize(
    "args",
    [
        ["runs", "--data", ""],
        ["hands", "h", "--data", ""],
        ["replay", "h", "0", "--data", ""],
        ["export", "h", "0", "--data", ""],
        ["import", str(EXAMPLE), "--data", ""],
        ["rm", "h", "--data", "  ", "--yes"],
        ["stats", "--data", ""],
    ],
)
def test_empty_data_directory_is_an_error(args: list[str], tmp_path: Path) -> None:
    res = CliRunner().invoke(main, args)
    one_error(res, "--data", "empty")


@pytest.mark.parametrize("seed", ["-1", str(2**64)])
def test_demo_seed_range(seed: str) -> None:
    one_error(cli("demo", "--seed", seed), "--seed")


def test_demo_largest_seed_plays() -> None:
    assert cli("demo", "--seed", str(2**64 - 1)).exit_code == 0


def frames(output: str) -> list[str]:
    return [ln.split(" · ")[3] for ln in output.splitlines() if ln.startswith("跑胡子")]


@pytest.mark.parametrize(
    "keys, steps, message",
    [
        ("ng\nnq", ["step 0/", "step 1/", "step 1/", "step 2/"], None),  # empty: back
        ("gq\nnq", ["step 0/", "step 0/", "step 1/"], None),  # q: back
        ("g3\nq", ["step 0/", "step 3/"], None),
        ("gx\nq", ["step 0/", "step 0/"], "not a step: 'x'"),
        ("g999\nq", ["step 0/", "step 0/"], "out of range"),
        ("g", ["step 0/"], None),  # end of input at the prompt: the session ends
    ],
)
def test_interactive_go_prompt(root: Path, keys: str, steps: list[str], message: str) -> None:
    res = cli("replay", "h", "0", "-i", "--no-color", "--data", str(root), input=keys)
    assert res.exit_code == 0, res.output
    got = frames(res.stdout)
    assert [s[: len(e)] for s, e in zip(got, steps, strict=True)] == steps
    if message:
        assert message in res.stdout


def test_hand_ranges_after_a_lost_shard_entry(root: Path) -> None:
    run = root / "runs" / "run=h"
    m = read_manifest(run)
    assert [s["first_hand"] for s in m["shards"]] == [0, 8, 16]
    m["shards"] = [s for s in m["shards"] if s["index"] != 1]
    write_manifest(run, m)
    res = cli("replay", "h", "10", "--data", str(root))
    one_error(res, "run h has no hand 10 (hands 0–7, 16–23)")
    assert manage.format_ranges(manage.hand_ranges(m)) == "hands 0–7, 16–23"


def test_policy_that_is_not_a_class(tmp_path: Path) -> None:
    res = cli("simulate", "--hands", "4", "--policies", "os:path", "--data", str(tmp_path))
    one_error(res, "os:path", "not a class")
    assert schema.SCHEMA_VERSION  # the store module imports without the simulator


def test_runs_labels_rules_as_stats_does_bug(tmp_path: Path) -> None:
    # runs printed the fingerprint (7d2b60962d3ba92a) of a --set min_huxi=10 run, where
    # stats says "hunan min_huxi=10"
    d = str(tmp_path / "d")
    res = cli("simulate", "-n", "8", "--set", "min_huxi=10", "--run", "m", "-w", "1", "-q",
              "--data", d)  # fmt: skip
    assert res.exit_code == 0, res.output
    (row,) = json.loads(cli("runs", "--data", d, "--json").stdout)
    (st,) = json.loads(cli("stats", "--data", d, "--json").stdout)["runs"]
    assert row["rules"] == st["rules"] == "hunan min_huxi=10"
    assert "hunan min_huxi=10" in cli("runs", "--data", d).stdout
