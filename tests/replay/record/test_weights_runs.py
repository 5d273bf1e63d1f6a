"""Runs of ``POLICY@WEIGHTS`` (issue 22, weights as data): the manifest records the table
itself; a run resumes, replays and verifies after its weights file is deleted; a changed
file is refused on resume; a bad weights file is one ``Error:`` line (exit 2) with nothing
written; the manifest's recorded tables are checked by its strict schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from weights_helpers import ODD_HEURISTIC, ODD_LEARNED, document, write_weights

from paohuzi.cli.main import main
from replay.store.manifest_schema import ManifestInvalid, check_manifest
from replay.store.runs import open_store


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def simulate(data: Path, policies: str, *more: str) -> Any:
    """A 48-hand run in one process (a pool of two would start, and load the compiled engine,
    at every call: 33 s for this file's tests instead of 14)."""
    return cli("simulate", "--data", str(data), "-q", "-n", "48", "--seed", "5", "-w", "1",
               "--shard-hands", "16", "--session-length", "4", "--policies", policies, *more)  # fmt: skip


def one_run(data: Path) -> Any:
    (run,) = open_store(data).runs()
    return run


def test_manifest_records_the_table(tmp_path: Path) -> None:
    w = write_weights(tmp_path / "odd.json", "heuristic", ODD_HEURISTIC)
    r = simulate(tmp_path / "d", f"heuristic@{w},heuristic@default,random")
    assert r.exit_code == 0, r.output
    m = one_run(tmp_path / "d").manifest
    assert m["params"]["policies"] == [f"heuristic@{w}", "heuristic@default", "random"]
    recorded = m["params"]["weights"]
    assert recorded[f"heuristic@{w}"] == ODD_HEURISTIC
    assert recorded["heuristic@default"]["danger_w"] == 4.0
    assert set(recorded) == {f"heuristic@{w}", "heuristic@default"}
    assert {s["engine"] for s in m["shards"]} == {"fast"}  # --engine auto plays them compiled


def test_plain_runs_record_no_weights(tmp_path: Path) -> None:
    assert simulate(tmp_path / "d", "heuristic,greedy,random").exit_code == 0
    assert "weights" not in one_run(tmp_path / "d").manifest["params"]


def _interrupt(data: Path, keep: int) -> None:
    """The run as a Ctrl-C after ``keep`` shards leaves it."""
    (path,) = (data / "runs").iterdir()
    m = json.loads((path / "manifest.json").read_text())
    m["shards"] = m["shards"][:keep]
    m["status"] = "interrupted"
    (path / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize(
    ("engine", "policy", "values", "seat"),
    [
        ("fast", "heuristic", ODD_HEURISTIC, "{}"),
        ("reference", "heuristic", ODD_HEURISTIC, "{}"),
        # a learned run (both engines record its bytes: test_engines_equal.py), verified by
        # the compiled checker
        ("fast", "learned", ODD_LEARNED, "{}"),
        # a search whose rollouts play the table
        ("fast", "learned", ODD_LEARNED, "search@2/{}"),
    ],
)
def test_resume_replay_and_verify_after_the_file_is_deleted(
    tmp_path: Path, engine: str, policy: str, values: dict[str, float], seat: str
) -> None:
    w = write_weights(tmp_path / "odd.json", policy, values)
    spec = seat.format(f"{policy}@{w}") + ",heuristic,greedy"
    assert simulate(tmp_path / "whole", spec, "--engine", engine).exit_code == 0
    assert simulate(tmp_path / "cut", spec, "--engine", engine).exit_code == 0
    _interrupt(tmp_path / "cut", 1)
    w.unlink()
    r = simulate(tmp_path / "cut", spec, "--engine", engine)
    assert r.exit_code == 0, r.output
    run, whole = one_run(tmp_path / "cut"), one_run(tmp_path / "whole")
    assert run.manifest["status"] == "complete" and len(run.shards) == 3
    assert run.content_digest() == whole.content_digest()
    assert run.manifest["params"]["weights"][f"{policy}@{w}"] == values
    # replay and verify read the log alone (the compiled checker after the compiled engine,
    # the reference one after the reference engine)
    checker = ["--reference"] if engine == "reference" else []
    r = cli("verify", *checker, "--data", str(tmp_path / "cut"))
    assert r.exit_code == 0 and "all good" in r.output, r.output
    r = cli("replay", run.name, "7", "--step", "5", "--data", str(tmp_path / "cut"))
    assert r.exit_code == 0 and r.output.strip(), r.output
    # a new run of the deleted file is refused
    r = simulate(tmp_path / "new", spec)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
    assert "cannot read it" in r.stderr and str(w) in r.stderr


def test_resume_refuses_a_changed_file(tmp_path: Path) -> None:
    w = write_weights(tmp_path / "odd.json", "heuristic", ODD_HEURISTIC)
    spec = f"heuristic@{w},random,random"
    assert simulate(tmp_path / "d", spec).exit_code == 0
    _interrupt(tmp_path / "d", 1)
    before = (next((tmp_path / "d" / "runs").iterdir()) / "manifest.json").read_bytes()
    write_weights(w, "heuristic", {**ODD_HEURISTIC, "danger_w": 5.0})
    r = simulate(tmp_path / "d", spec)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
    assert r.stderr.startswith("Error: run ") and "other weights for heuristic@" in r.stderr
    assert "danger_w 9, not 5" in r.stderr and "another --run" in r.stderr
    assert (next((tmp_path / "d" / "runs").iterdir()) / "manifest.json").read_bytes() == before
    # the file restored, the run resumes
    write_weights(w, "heuristic", ODD_HEURISTIC)
    assert simulate(tmp_path / "d", spec).exit_code == 0
    assert one_run(tmp_path / "d").manifest["status"] == "complete"


def _values(**changes: Any) -> dict[str, Any]:
    values = dict(ODD_HEURISTIC)
    for k, v in changes.items():
        if v is None:
            values.pop(k)
        else:
            values[k] = v
    return values


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (document("heuristic", _values(ready_w=None)), "parameter 'ready_w' is missing"),
        (document("heuristic", _values(readyw=1.0)), "unknown parameter 'readyw' for heuristic"),
        (
            document("heuristic", _values(hx="seven")),
            "parameter 'hx': expected a number, got 'seven'",
        ),
        (document("heuristic", _values(spill=2)), "parameter 'spill': 2 is out of range 0 … 1"),
        (document("greedy", _values()), "field policy: expected 'heuristic', got 'greedy'"),
        ("{nope", "not JSON"),
        (None, "cannot read it"),
        ("DIR", "is a directory, not a file"),
    ],
)
def test_bad_weights_file_is_one_line_and_writes_nothing(
    tmp_path: Path, content: Any, message: str
) -> None:
    path = tmp_path / "w.json"
    if content == "DIR":
        path.mkdir()
    elif isinstance(content, str):
        path.write_text(content)
    elif content is not None:
        path.write_text(json.dumps(content))
    data = tmp_path / "d"
    for engine in ("auto", "reference"):
        r = simulate(data, f"heuristic@{path},random,random", "--engine", engine)
        assert r.exit_code == 2, r.output
        assert r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith(f"Error: weights file '{path}': "), r.stderr
        assert message in r.stderr, r.stderr
    assert not (data / "runs").exists() or not any((data / "runs").iterdir())


def test_bad_spec_is_one_line(tmp_path: Path) -> None:
    for spec, message in [
        ("heuristic@nosuch", "no shipped weights set 'nosuch' for heuristic"),
        ("random@default", "only greedy, heuristic and learned take weights"),
    ]:
        r = simulate(tmp_path / "d", spec)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
        assert message in r.stderr


def test_sweep_takes_a_weights_spec(tmp_path: Path) -> None:
    w = write_weights(tmp_path / "odd.json", "heuristic", ODD_HEURISTIC)
    r = cli("sweep", "--data", str(tmp_path / "d"), "-q", "--hands", "8", "--name", "wt",
            "--policies", f"heuristic@{w}+random+random,heuristic")  # fmt: skip
    assert r.exit_code == 0, r.output
    runs = {run.name: run.manifest for run in open_store(tmp_path / "d").runs()}
    assert len(runs) == 2
    assert sum("weights" in m["params"] for m in runs.values()) == 1


# ---------------------------------------------------------------------------------------------
# The manifest's schema
# ---------------------------------------------------------------------------------------------


def _manifest(
    weights: Any, policies: tuple[str, ...] = ("heuristic@w.json", "random", "random")
) -> dict[str, Any]:
    return {
        "format": "paohuzi-run", "schema_version": 1, "run": "r", "status": "complete",
        "rules": {}, "shards": [], "params": {"policies": list(policies), "weights": weights},
    }  # fmt: skip


def test_schema_accepts_a_recorded_table() -> None:
    check_manifest(_manifest({"heuristic@w.json": ODD_HEURISTIC}))


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"heuristic@w.json": _values(danger_w=-1.0)},
         "params.weights.heuristic@w.json.danger_w: expected a number ≥ 0.0, got -1.0"),
        ({"heuristic@w.json": _values(hx="7")}, "params.weights.heuristic@w.json.hx: expected a number"),
        ({"heuristic@w.json": _values(hx=True)}, "params.weights.heuristic@w.json.hx: expected a number"),
        ({"heuristic@w.json": _values(zz=1.0)}, "params.weights.heuristic@w.json.zz: unknown parameter"),
        ({"heuristic@w.json": _values(ready_w=None)}, "params.weights['heuristic@w.json']: parameter 'ready_w' is missing"),
        ({"heuristic@w.json": _values(path_slack=2.5)}, "parameter 'path_slack': expected a whole number"),
        ({}, "manifest field params.weights['heuristic@w.json'] is missing"),
        ({"heuristic@w.json": ODD_HEURISTIC, "greedy@x.json": {}},
         "params.weights['greedy@x.json']: no weighted policy of params.policies"),
        ([1], "manifest field params.weights: expected an object"),
    ],
)  # fmt: skip
def test_schema_refuses_a_bad_recorded_table(weights: Any, message: str) -> None:
    with pytest.raises(ManifestInvalid) as e:
        check_manifest(_manifest(weights))
    assert message in str(e.value) and "\n" not in str(e.value)
