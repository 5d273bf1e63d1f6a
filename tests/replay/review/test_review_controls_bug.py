"""Issue 59, risk 1: control characters of a run's strings (a policy spec — a weights file's
path may hold BEL, ESC, C1 controls, bidi overrides —, a comparison's bot names in the
manifest) reach the terminal through ``paohuzi review``: the text output writes them as
escapes (``\\x07``, ``\\u202e``), the JSON output as JSON escapes, and both read back."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.policies.weights import SHIPPED_DIR
from paohuzi.cli.main import main

#: BEL, RIGHT-TO-LEFT OVERRIDE, an ESC sequence (clear the screen), C1 CSI, LINE SEPARATOR.
EVIL = "e\x07\u202e\x1b[2J\x9b31m\u2028x"
ESCAPED = ("\\x07", "\\u202e", "\\x1b[2J", "\\x9b31m", "\\u2028")


def raw_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal acts on instead of showing (a newline aside)."""
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def cli(*args: str) -> tuple[int, str, str]:
    # color=True: click strips ESC sequences only when it thinks it writes to a pipe
    r = CliRunner().invoke(main, list(args), color=True)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def evil_store(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The review tests' store, plus run ``e``: seat 0 plays a weights file whose path holds
    :data:`EVIL`; hand 0 of run ``m`` has a comparison naming a bot :data:`EVIL`."""
    d = tmp_path_factory.mktemp("evil")
    data = d / "data"
    shutil.copytree(store, data)
    weights = d / f"w{EVIL}.json"
    shutil.copy(SHIPPED_DIR / "default-heuristic.json", weights)
    code, out, err = cli("simulate", "--data", str(data), "--run", "e", "-n", "2", "-q", "-w",
                         "1", "--policies", f"heuristic@{weights},random,greedy")  # fmt: skip
    assert code == 0, err
    path = data / "runs" / "run=m" / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    m["comparisons"] = [{"hand": 0, "seat": 0, "scores": [{"policy": EVIL, "score": 3}]}]
    path.write_text(json.dumps(m), encoding="utf-8")
    return data


def test_review_escapes_control_characters_bug(evil_store: Path) -> None:
    base = ("--data", str(evil_store), "-N", "2", "-q", "--no-store")
    code, out, err = cli("review", "m", "0", *base)
    assert code == 0, err
    assert "the same deal:" in out
    assert raw_controls(out) == [] and raw_controls(err) == []
    assert all(e in out for e in ESCAPED), out[-300:]
    code, out, err = cli("review", "e", "--hands", "0-1", "-w", "1", *base)
    assert code == 0, err
    assert raw_controls(out) == [] and raw_controls(err) == []
    assert all(e in out for e in ESCAPED)


def test_review_json_escapes_control_characters_bug(evil_store: Path) -> None:
    base = ("--data", str(evil_store), "-N", "2", "-q", "--no-store", "--format", "json")
    code, out, err = cli("review", "m", "0", *base)
    assert code == 0, err
    assert raw_controls(out) == []
    assert json.loads(out)["comparison"]["scores"] == [{"policy": EVIL, "score": 3}]
    code, out, err = cli("review", "e", "--hands", "0-1", "-w", "1", *base)
    assert code == 0, err
    assert raw_controls(out) == []
    assert {r["policy"] for r in json.loads(out)["rates"]} >= {f"heuristic@{evil_store.parent}"
                                                              f"/w{EVIL}.json"}  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [("runs",), ("runs", "--json"), ("hands", "e"), ("hands", "e", "--json"), ("stats", "e"),
     ("stats", "e", "--json"), ("stats", "e", "--events"), ("stats", "e", "--events", "--json")],
)  # fmt: skip
def test_runs_and_stats_escape_control_characters_bug(evil_store: Path, args: tuple) -> None:
    code, out, err = cli(*args, "--data", str(evil_store))
    assert code == 0, err
    assert raw_controls(out) == [] and raw_controls(err) == []
    if "--json" not in args and args[0] != "hands":  # the policies are listed
        assert all(e in out for e in ESCAPED), out


def test_error_lines_escape_control_characters_bug() -> None:
    from paohuzi.cli.errors import input_error

    line = input_error(f"unknown policy {EVIL}").format_message()
    assert raw_controls(line) == [] and "\\x07" in line and "\\u202e" in line
