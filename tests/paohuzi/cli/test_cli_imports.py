"""The command line stays light: ``paohuzi --help``, ``paohuzi score`` and ``paohuzi tune
--help`` import no pyarrow, duckdb, pandas, numpy, numba, streamlit, fastapi or uvicorn
(issue 8), and the help list of the lazy commands is their own short help."""

from __future__ import annotations

import importlib

import pytest
from import_helpers import imported

from paohuzi.cli.main import LAZY_COMMANDS, SHORT_HELP

HEAVY = ("pyarrow", "duckdb", "pandas", "numpy", "numba", "streamlit", "fastapi", "uvicorn")


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("score", "壹贰叁柒捌玖六七八九九", "--meld", "pao:伍", "--meld", "peng:三",
         "--meld", "chi:二,七,十"),
        ("score", "--help"),
        ("tune", "--help"),
    ],
)  # fmt: skip
def test_light_commands_import_nothing_heavy(args: tuple[str, ...]) -> None:
    heavy = sorted(imported(*args) & set(HEAVY))
    assert heavy == [], f"paohuzi {' '.join(args[:1])} imports {heavy}"


def test_short_help_table_matches_the_commands() -> None:
    assert set(SHORT_HELP) == set(LAZY_COMMANDS), "add the new command's line to SHORT_HELP"
    for name, spec in LAZY_COMMANDS.items():
        module, _, attr = spec.partition(":")
        cmd = getattr(importlib.import_module(module), attr)
        assert SHORT_HELP[name] == cmd.get_short_help_str(limit=1000), name
