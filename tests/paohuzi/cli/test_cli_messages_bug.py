"""Messages left wrong by the last break test (issue 40): a huge input echoed whole in an
error line, ``--limit`` past a 64-bit integer answered by DuckDB's own message, and a killed
run "running" in ``stats`` while ``runs`` said "stopped"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from catalog_helpers import cli

from replay.store.layout import run_dir

HUGE = "x" * 100_000


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("msgs40")
    code, _, err = cli("simulate", "--data", str(d), "--run", "r", "-n", "20", "-w", "1", "-q")
    assert code == 0, err
    return d


def _one_short_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err[:500]
    assert len(lines[0]) < 400, lines[0][:500]
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ("simulate", "-n", "1", "-p", HUGE),
        ("simulate", "-n", "1", "-p", f"random,{HUGE}"),
        ("stats", HUGE),
        ("stats", "--events", HUGE),
        ("hands", HUGE),
        ("replay", HUGE, "1"),
        ("hands", "r", "--winner", HUGE),
        ("runs", HUGE),
        ("verify", HUGE),  # a traceback: the name too long for the system's stat
    ],
    ids=[
        "simulate-policy",
        "simulate-policies",
        "stats",
        "stats-events",
        "hands",
        "replay",
        "click-value",
        "click-extra-argument",
        "verify",
    ],
)
def test_huge_input_is_cut_in_the_error_line_bug(data: Path, args: tuple[str, ...]) -> None:
    # a 100,000-character policy or run name came back whole in the error line
    code, out, err = cli(*args, "--data", str(data))
    assert code == 2 and out == ""
    line = _one_short_error(err)
    assert "x" * 60 + "…" in line and "x" * 61 not in line, line
    assert f"({len(HUGE):,} characters)" in line or f"({len(HUGE)} characters)" in line, line


def test_short_inputs_are_echoed_whole(data: Path) -> None:
    code, _, err = cli("simulate", "-n", "1", "-p", "nope", "--data", str(data))
    assert code == 2
    assert err == (
        "Error: unknown policy 'nope' (built-in: random, greedy, heuristic, learned; or module:Class)\n"
    )
    code, _, err = cli("stats", "nosuch", "--data", str(data))
    assert code == 2 and err == f"Error: no run 'nosuch' in {data} (runs: r)\n"


@pytest.mark.parametrize("limit", ["1e20", "100000000000000000000", "9223372036854775807", "0"])
def test_limit_out_of_range_is_one_clear_line_bug(data: Path, limit: str) -> None:
    # --limit 1e20 / 10**20 gave click's "not a valid integer range" or DuckDB's conversion
    # error ("Type INT128 with value ... out of range for the destination type INT64")
    code, out, err = cli("hands", "r", "--data", str(data), "--limit", limit)
    assert code == 2 and out == ""
    assert err.startswith(
        "Error: Invalid value for '--limit': expected an integer from 1 to 1,000,000,000,"
        f" got '{limit}' (see '"
    ), err
    assert err.count("\n") == 1, err


def test_limit_at_its_bound_lists_the_hands(data: Path) -> None:
    code, out, err = cli("hands", "r", "--data", str(data), "--limit", "1000000000", "--json")
    assert code == 0, err
    assert len(json.loads(out)["hands"]) == 20


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _writer(data: Path, pid: int, tmp: Path) -> Path:
    """A copy of the store whose run ``r`` is "running", its lock naming ``pid``."""
    import shutil

    d = tmp / "d"
    shutil.copytree(data, d)
    path = run_dir(d, "r")
    m = json.loads((path / "manifest.json").read_text())
    m["status"] = "running"  # what a SIGKILLed writer leaves
    (path / "manifest.json").write_text(json.dumps(m))
    (path / ".lock").write_text(str(pid))
    return d


@pytest.mark.parametrize(("alive", "state"), [(False, "stopped"), (True, "being written")])
def test_killed_run_is_stopped_in_stats_as_in_runs_bug(
    data: Path, tmp_path: Path, alive: bool, state: str
) -> None:
    # stats said "running" for a run whose writer was killed, while runs said "stopped"
    d = _writer(data, os.getpid() if alive else _dead_pid(), tmp_path)
    code, out, err = cli("runs", "--data", str(d), "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["state"] == state
    code, out, err = cli("stats", "r", "--data", str(d))
    assert code == 0, err
    assert out.splitlines()[0].endswith(f"· {state}"), out.splitlines()[0]
    code, out, err = cli("stats", "r", "--data", str(d), "--json")
    assert code == 0, err
    assert json.loads(out)["runs"][0]["status"] == state
