"""The service tests' store and the command line they compare the API with: run ``a`` (40
hunan hands, random seats) and run ``dup`` (8 duplicate deals of heuristic, greedy, random:
24 hands), recorded by the reference engine (no compilation), and ``paohuzi ARGS``
in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from paohuzi.cli.main import main


def cli(*args: str) -> Any:
    """``paohuzi ARGS`` in-process; the result (exit code, stdout, stderr)."""
    return CliRunner().invoke(main, list(args))


def cli_json(*args: str) -> Any:
    """The JSON ``paohuzi ARGS`` prints (it must succeed)."""
    res = cli(*args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def record(d: Path) -> Path:
    """Runs ``a`` and ``dup`` in the store ``d``; hands 0–1 of ``dup`` reviewed and stored
    (so ``/stats`` answers its ``reviews`` too)."""
    for args in (
        ["--run", "a", "-n", "40", "--seed", "3"],
        ["--run", "dup", "-n", "8", "--duplicate", "-p", "heuristic,greedy,random"],
    ):
        res = cli("simulate", "--data", str(d), "-q", "-w", "1", "--engine", "reference", *args)
        assert res.exit_code == 0, res.output
    res = cli("review", "dup", "--hands", "0-1", "-N", "2", "-q", "-w", "1", "--data", str(d))
    assert res.exit_code == 0, res.output
    return d
