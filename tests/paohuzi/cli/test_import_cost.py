"""The store's reading commands start fast (issue 42): ``paohuzi stats``, ``hands`` and
``runs`` answer from the scan memo and DuckDB, and import no pyarrow, numpy or pandas;
``paohuzi replay`` reads its hand's rows with pyarrow, and imports no pandas. Checked by the
modules ``python -X importtime`` names, never by times, on the warm path of a reader: each
command has run once before, so its scan is remembered whatever the last write left."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from import_helpers import imported

from paohuzi.cli.main import main

HEAVY = ("pyarrow", "numpy", "pandas")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("imports")
    for args in (
        ["simulate", "--data", str(d), "--run", "a", "-n", "16", "-w", "1", "-q",
         "--engine", "reference"],
        ["index", "--data", str(d), "-q"],
    ):  # fmt: skip
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
    return d


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        pytest.param(("stats", "--json"), HEAVY, id="stats"),
        pytest.param(("hands", "a", "--limit", "3"), HEAVY, id="hands"),
        pytest.param(("runs",), HEAVY, id="runs"),
        pytest.param(("replay", "a", "0", "--format", "json"), ("pandas",), id="replay"),
    ],
)
def test_reading_commands_import_nothing_heavy(
    store: Path, args: tuple[str, ...], absent: tuple[str, ...]
) -> None:
    cmd = (*args, "--data", str(store))
    imported(*cmd)
    heavy = sorted(imported(*cmd) & set(absent))
    assert heavy == [], f"paohuzi {args[0]} imports {heavy}"
