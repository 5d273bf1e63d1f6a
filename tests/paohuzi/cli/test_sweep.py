"""paohuzi sweep: a 2×2 grid makes four runs, each equal to the same ``simulate`` alone;
rerunning resumes (does nothing new); bad grids are one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_helpers import catalog_mismatch
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store.runs import open_store

BASE = ["-n", "60", "--seed", "4", "--shard-hands", "32", "-w", "1", "-q"]
GRID = [
    "--name",
    "g",
    "--rules",
    "hunan,hunan-full",
    "--policies",
    "random,heuristic+random+random",
]
CELLS = {
    "sweep-g.hunan.random": ["--rules", "hunan", "--policies", "random"],
    "sweep-g.hunan.heuristic-random-random": [
        "--rules", "hunan", "--policies", "heuristic,random,random",
    ],
    "sweep-g.hunan-full.random": ["--rules", "hunan-full", "--policies", "random"],
    "sweep-g.hunan-full.heuristic-random-random": [
        "--rules", "hunan-full", "--policies", "heuristic,random,random",
    ],
}  # fmt: skip


def test_grid_runs_equal_simulate_alone_and_resume(tmp_path: Path) -> None:
    data = tmp_path / "sweep"
    r = CliRunner().invoke(main, ["sweep", *GRID, *BASE, "--data", str(data)])
    assert r.exit_code == 0, r.output
    st = open_store(data)
    assert st.run_names() == sorted(CELLS)
    for name, args in CELLS.items():
        alone = tmp_path / name
        s = CliRunner().invoke(main, ["simulate", *args, *BASE, "--data", str(alone)])
        assert s.exit_code == 0, s.output
        (ref,) = open_store(alone).runs()
        run = st.run(name)
        assert run.status == "complete" and run.n_hands == 60
        assert run.content_digest() == ref.content_digest(), name
        assert run.manifest["labels"]["sweep"]["name"] == "g"
    mtimes = {p: p.stat().st_mtime_ns for p in data.rglob("*.parquet")}
    again = CliRunner().invoke(main, ["sweep", *GRID, *BASE, "--data", str(data)])
    assert again.exit_code == 0, again.output
    assert again.output.count("already complete") == 4
    assert {p: p.stat().st_mtime_ns for p in data.rglob("*.parquet")} == mtimes


def test_the_catalog_is_refreshed_once_after_the_grid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each refresh reads every run's listing: a grid refreshes the store's catalog once,
    after its last run, and leaves it current; a grid stopped by an error refreshes it on its
    way out."""
    from replay.record import runner

    calls: list[Path] = []
    real = runner.refresh_catalog

    def counted(root: Path) -> str | None:
        calls.append(root)
        return real(root)

    monkeypatch.setattr(runner, "refresh_catalog", counted)
    data = tmp_path / "sweep"
    r = CliRunner().invoke(main, ["sweep", *GRID, *BASE, "--data", str(data)])
    assert r.exit_code == 0, r.output
    assert len(calls) == 1
    assert catalog_mismatch(data) is None
    # a cell's run name already holds a simulation of other rules: the grid stops there
    other = ["--rules", "hunan-full", "--policies", "random", *BASE]
    s = CliRunner().invoke(main, ["simulate", *other, "--run", "sweep-h.hunan.random",
                                  "--data", str(data)])  # fmt: skip
    assert s.exit_code == 0, s.output
    calls.clear()
    grid = ["--name", "h", "--rules", "hunan", "--policies", "random,greedy", *BASE]
    r = CliRunner().invoke(main, ["sweep", *grid, "--data", str(data)])
    assert r.exit_code == 2 and "sweep-h.hunan.random" in r.output, r.output
    assert len(calls) == 1
    assert catalog_mismatch(data) is None


def test_set_axis_names(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        main,
        ["sweep", "--name", "m", "--set", "min_huxi=10,15", "--list", "--data", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    assert r.output.split() == [
        "sweep-m.hunan.min_huxi-10.random",
        "sweep-m.hunan.min_huxi-15.random",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "hunan,nope"], "unknown rule preset 'nope'"),
        (["--set", "min_huxi"], "malformed --set"),
        (["--policies", "random+nope+random"], "policy 'nope'"),
        (["--backend", "local", "--address", "auto"], "--address is for --backend ray"),
    ],
)
def test_bad_grid_is_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    r = CliRunner().invoke(main, ["sweep", "-n", "5", "-q", "--data", str(tmp_path), *args])
    assert r.exit_code == 2, r.output
    assert message in r.output and r.output.strip().count("\n") == 0


def test_a_bare_search_plays_heuristic_rollouts_in_every_cell(tmp_path: Path) -> None:
    """Where simulate gives a bare search@N its preset's rollouts (hunan: learned@hunan), a
    sweep does not: its cells differ only in what the grid varies (here the rules)."""
    r = CliRunner().invoke(
        main,
        ["sweep", "--name", "s", "--rules", "hunan,hunan-full", "--policies",
         "search@1+heuristic+heuristic", "-n", "2", "--seed", "4", "-w", "1", "-q",
         "--data", str(tmp_path)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    for run in open_store(tmp_path).runs():
        assert run.manifest["params"]["policies"] == ["search@1", "heuristic", "heuristic"]
