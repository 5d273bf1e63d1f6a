"""The review tests' store: one recorded run ``m`` of six hunan hands, a seat each of
heuristic, random and greedy."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("review")
    r = CliRunner().invoke(
        main, ["simulate", "--data", str(d), "--run", "m", "-n", "6", "-q", "-w", "1",
               "--policies", "heuristic,random,greedy"],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    return d
