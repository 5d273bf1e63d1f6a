"""``paohuzi stats --json`` on a store of six runs — 3 players, ``--duplicate``, 4 players,
Luzhou, ``--set min_huxi=10`` and one run without summary tables — equals the output kept in
``golden/stats.json`` (written by the code before the statistics layer was redesigned), key
for key, floats to 1e-9 relative; and the same again with ``PAOHUZI_SUMMARY=0`` (every run
from its hands).

The golden file is regenerated only on purpose: ``PAOHUZI_REGEN_GOLDEN=1 pytest
tests/replay/analysis/test_stats_golden.py`` (then review the diff).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main

GOLDEN = Path(__file__).parent / "golden" / "stats.json"

RUNS: list[tuple[str, list[str]]] = [
    ("three", ["-n", "300", "--seed", "31", "--policies", "heuristic,random,greedy"]),
    ("dup", ["-n", "60", "--seed", "32", "--policies", "greedy,random,heuristic", "--duplicate"]),
    ("four", ["-n", "120", "--seed", "33", "--rules", "hunan-4p", "--policies", "greedy"]),
    ("luzhou", ["-n", "150", "--seed", "34", "--rules", "luzhou", "--policies", "greedy"]),
    ("min10", ["-n", "150", "--seed", "35", "--set", "min_huxi=10", "--policies", "heuristic"]),
    ("nosummary", ["-n", "100", "--seed", "36", "--policies", "random,greedy,greedy"]),
]


def _cli(args: list[str], env: dict[str, str] | None = None) -> str:
    r = CliRunner().invoke(main, args, env=env)
    assert r.exit_code == 0, r.output
    return r.output


def _strip_summaries(run_path: Path) -> None:
    """The run as an older version recorded it: no summary files, none listed."""
    shutil.rmtree(run_path / "summary")
    path = run_path / "manifest.json"
    m = json.loads(path.read_text())
    for shard in m["shards"]:
        shard["files"].pop("summary", None)
    path.write_text(json.dumps(m, indent=1))


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("golden") / "data"
    for name, args in RUNS:
        _cli(["simulate", "--data", str(data), "-w", "1", "-q", "--run", name,
              "--shard-hands", "128", *args])  # fmt: skip
    _strip_summaries(data / "runs" / "run=nosummary")
    (data / "paohuzi.duckdb").unlink(missing_ok=True)
    return data


def _same(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{where}: keys {list(a)} != {b!r}"
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{where}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert isinstance(b, int | float) and not isinstance(b, bool), f"{where}: {a!r} != {b!r}"
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a!r} != {b!r}"
    else:
        assert a == b and type(a) is type(b), f"{where}: {a!r} != {b!r}"


@pytest.mark.parametrize("summaries", ["1", "0"])
def test_stats_json_equals_golden(golden_store: Path, summaries: str) -> None:
    out = json.loads(
        _cli(["stats", "--data", str(golden_store), "--json"], {"PAOHUZI_SUMMARY": summaries})
    )
    if os.environ.get("PAOHUZI_REGEN_GOLDEN") == "1" and summaries == "1":
        GOLDEN.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n")
    assert [r["run"] for r in out["runs"]] == sorted(name for name, _ in RUNS)
    _same(json.loads(GOLDEN.read_text()), out, "stats")
