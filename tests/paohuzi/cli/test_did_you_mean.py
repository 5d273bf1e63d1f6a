"""A misspelt command, policy, rule preset, rule switch, option, choice or run name is one
error line naming the input and the closest valid choices (issue 60: ``paohuzi simulat`` said
only "No such command", ``--policies heuristc`` listed every policy but the one meant), exit
status 2, never a traceback; every such line ends with :func:`engine.errors.did_you_mean`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from leftover_helpers import small_store

from engine.errors import did_you_mean
from paohuzi.cli.main import main


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_store(tmp_path_factory.mktemp("typos") / "d", "base-run")


def _one_line(res: Any) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


CASES = [
    (["simulat", "-n", "5"], "'simulat'", ["'simulate'"]),
    (["simulate", "-n", "5", "--policies", "heuristc"], "'heuristc'", ["'heuristic'"]),
    (["simulate", "-n", "5", "--policies", "heuristc,random,random"], "'heuristc'",
     ["'heuristic'"]),
    (["simulate", "-n", "5", "--policies", "search@2/gredy"], "'gredy'", ["'greedy'"]),
    (["simulate", "-n", "5", "--policies", "heuristic@defalt"], "'defalt'", ["'default'"]),
    (["simulate", "-n", "5", "--rules", "hunan-ful"], "'hunan-ful'", ["'hunan-full'"]),
    (["simulate", "-n", "5", "--set", "min_hux=10"], "'min_hux'", ["'min_huxi'"]),
    (["simulate", "-n", "5", "--set", "huayang=ful"], "'ful'", ["'full'"]),
    (["simulate", "-n", "5", "--polices", "random"], "--polices", ["'--policies'"]),
    (["simulate", "-n", "5", "--engine", "fas"], "'fas'", ["'fast'"]),
    (["play", "--opponents", "gready", "--compare", "none"], "'gready'", ["'greedy'"]),
    (["replay", "base-rn", "0"], "'base-rn'", ["'base-run'"]),
    (["rm", "base-rnu", "--yes"], "'base-rnu'", ["'base-run'"]),
    (["hands", "bsae-run"], "'bsae-run'", ["'base-run'"]),
    (["hands", "base-run", "--outcome", "huangzuang"], "'huangzuang'", ["'huangzhuang'"]),
    (["stats", "base-rum"], "'base-rum'", ["'base-run'"]),
    (["verify", "base-runn"], "'base-runn'", ["'base-run'"]),
    (["export", "base-ru", "0"], "'base-ru'", ["'base-run'"]),
]  # fmt: skip


@pytest.mark.parametrize(("args", "given", "meant"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_typo_names_the_closest_choice(
    data: Path, args: list[str], given: str, meant: list[str]
) -> None:
    line = _one_line(CliRunner().invoke(main, [*args, "--data", str(data)]))
    assert given in line, line
    hint = line.split("; did you mean ", 1)
    assert len(hint) == 2, line
    for m in meant:
        assert m in hint[1], line


def test_nothing_close_is_not_guessed(data: Path) -> None:
    line = _one_line(CliRunner().invoke(main, ["xyzzy"]))
    assert line.startswith("Error: No such command 'xyzzy'. (see ")
    line = _one_line(
        CliRunner().invoke(main, ["simulate", "--policies", "zzz", "--data", str(data)])
    )
    assert "did you mean" not in line and "'zzz'" in line


def test_the_helper() -> None:
    assert did_you_mean("heuristc", ["random", "heuristic"]) == "; did you mean 'heuristic'?"
    assert did_you_mean("HEURISTC", ["random", "heuristic"]) == "; did you mean 'heuristic'?"
    assert did_you_mean("heuristic", ["heuristic"]) == ""  # not misspelt
    assert did_you_mean("x" * 10_000, ["x"]) == ""  # a huge input is not compared
