"""Messages that said the wrong thing (issue 20): a killed run listed as "running", a sweep
of no policy mix that ran nothing and exited 0, a shard's size given as a string reported as
"has 20,699 bytes, the manifest says 20699"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from catalog_helpers import cli

from replay.store.layout import run_dir


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("msgs")
    code, _, err = cli("simulate", "--data", str(d), "--run", "r", "-n", "20", "-w", "1", "-q")
    assert code == 0, err
    return d


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_killed_run_is_listed_as_stopped_not_running_bug(data: Path) -> None:
    path = run_dir(data, "r")
    m = json.loads((path / "manifest.json").read_text())
    m["status"] = "running"  # what a SIGKILLed writer leaves
    (path / "manifest.json").write_text(json.dumps(m))
    (path / ".lock").write_text(str(_dead_pid()))
    code, out, _ = cli("runs", "--data", str(data), "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert (row["status"], row["state"]) == ("running", "stopped")
    code, out, _ = cli("runs", "--data", str(data))
    assert code == 0 and out.splitlines()[1].split()[:2] == ["r", "stopped"], out


def test_sweep_of_no_policy_mix_is_an_error_bug(tmp_path: Path) -> None:
    code, out, err = cli("sweep", "--data", str(tmp_path), "--policies", ",", "-n", "10")
    assert code == 2 and out == ""
    assert err == "Error: --policies ',' names no policy mix\n"
    assert not (tmp_path / "runs").exists()


def test_shard_size_given_as_a_string_is_named_as_such_bug(data: Path, tmp_path: Path) -> None:
    import shutil

    d = tmp_path / "d"
    shutil.copytree(data, d)
    mpath = run_dir(d, "r") / "manifest.json"
    m = json.loads(mpath.read_text())
    m["status"] = "complete"
    size = m["shards"][0]["files"]["hands"]["bytes"]
    m["shards"][0]["files"]["hands"]["bytes"] = str(size)
    mpath.write_text(json.dumps(m))
    code, _, err = cli("stats", "--data", str(d), "r")
    assert code == 2
    assert err == (
        "Error: run r: manifest field shards[0].files.hands.bytes:"
        f" expected an integer, got '{size}'\n"
    ), err
