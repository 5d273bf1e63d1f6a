"""``paohuzi distill`` (replay.distill): rounds of teacher data, fit and validation give the
same tables and figures for 1 and 2 workers and after a kill; teacher data is a pure
function of its chunk; the fit finds a linear truth and lowers the regret; the folder, the
checkpoint and the options are checked in one line, and only distill's own folder is written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

from engine.policies import weights as W
from engine.policies.learned import CLAIM, DISCARD, from_heuristic
from engine.rules import find_rules
from paohuzi.cli.main import main
from replay.distill import teacher as TD
from replay.distill import train as TR

ROOT = Path(__file__).resolve().parents[3]
QUICK = ["--teacher", "search@8", "--rounds", "2", "--hands", "20", "--chunk-hands", "2",
         "--sample", "0.5", "--validation-deals", "200", "--final-deals", "300", "--seed", "3",
         "-q"]  # fmt: skip


def distill(out: Path, *args: str) -> object:
    return CliRunner().invoke(main, ["distill", str(out), *QUICK, *args])


def _error(r: object) -> str:
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    lines = r.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr  # type: ignore[attr-defined]
    return lines[0]


def _result(out: Path) -> tuple[dict, bytes]:
    """The report without wall times and command line, and the table's weights."""
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    for rd in doc["rounds"]:
        rd.pop("seconds")
        rd["validation"].pop("seconds")
    doc["final"].pop("seconds")
    doc.pop("command")
    weights = json.loads((out / "learned.json").read_text(encoding="utf-8"))["weights"]
    return doc, json.dumps(weights, sort_keys=True).encode()


@pytest.fixture(scope="module")
def done(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("distill") / "done"
    r = distill(out, "-w", "1")
    assert r.exit_code == 0, r.output
    return out


def test_a_run_writes_its_table_report_and_curve(done: Path) -> None:
    doc, _ = _result(done)
    assert [rd["r"] for rd in doc["rounds"]] == [0, 1]
    for rd in doc["rounds"]:
        assert rd["decisions"]["discard"] > 50 and rd["decisions"]["claim"] > 20, rd["decisions"]
        assert rd["after"]["discard"]["decisions"] > 0  # chunk 9 of each round is held out
        assert rd["validation"]["deals"] == 200
    assert doc["final"]["deals"] == 300 and doc["best"] in (0, 1)
    table = W.load_spec(f"learned@{done / 'learned.json'}")
    assert table.as_dict() == doc["rounds"][doc["best"]]["table"]
    md = (done / "report.md").read_text(encoding="utf-8")
    assert "\n| 2 | " in md and "\n| 0 | " not in md and "curve.svg" in md and "`c_peng`" in md
    assert (done / "curve.svg").read_text().startswith("<svg")
    assert len(list((done / "data" / "round-001").glob("chunk-*.parquet"))) == 10
    about = json.loads((done / "learned.json").read_text(encoding="utf-8"))["about"]
    assert "distilled from search@8 over 2 rounds" in about and "paohuzi distill" in about


def test_two_workers_give_the_same_tables_and_figures(done: Path, tmp_path: Path) -> None:
    r = distill(tmp_path / "two", "-w", "2")
    assert r.exit_code == 0, r.output
    assert _result(tmp_path / "two") == _result(done)


def test_a_killed_run_resumes_to_the_same_result(done: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "paohuzi", "distill", str(out), *QUICK, "-w", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    chunks = out / "data" / "round-000"
    deadline = time.monotonic() + 120
    while len(list(chunks.glob("chunk-*.parquet"))) < 3:
        assert proc.poll() is None, proc.stderr.read()  # type: ignore[union-attr]
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    report = out / "report.json"  # killed before the end: no final validation yet
    assert not report.exists() or json.loads(report.read_text())["final"] is None
    r = distill(out, "-w", "1")
    assert r.exit_code == 0, r.output
    assert _result(out) == _result(done)
    assert not list(out.rglob(".*.tmp-*"))


def test_max_minutes_stops_between_steps_and_the_same_command_goes_on(
    done: Path, tmp_path: Path
) -> None:
    out = tmp_path / "budget"
    r = CliRunner().invoke(main, ["distill", str(out), *QUICK[:-1], "-w", "1",
                                  "--max-minutes", "0.00001"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "stopped by --max-minutes" in r.output
    r = distill(out, "-w", "1")
    assert r.exit_code == 0, r.output
    assert _result(out) == _result(done)


def test_teacher_data_is_a_pure_function_of_its_chunk() -> None:
    rules = find_rules("hunan")
    table = from_heuristic(W.load_spec("heuristic@tuned-hunan"))
    spec = TD.ChunkSpec(rules, table, table, 4, 11, chunk=2, hands=3, chunk_size=3, sample=0.5)
    a, b = TD.chunk_table(spec), TD.chunk_table(spec)
    assert a.equals(b) and a.num_rows > 0 and a.schema.equals(TD.SCHEMA)
    hands = set(a.column("hand").to_pylist())
    assert hands <= {6, 7, 8} and set(a.column("chunk").to_pylist()) == {2}
    # every sampled decision: one chosen option, its rows contiguous, values in range
    chosen = a.column("chosen").to_numpy(zero_copy_only=False).astype(int)
    for kind in (DISCARD, CLAIM):
        d = TR.Decisions.of(a, kind, 3)
        assert d.count > 0
        sizes = np.diff(np.r_[d.starts, len(d.q)])
        rows = np.flatnonzero(a.column("kind").to_numpy(zero_copy_only=False) == kind)
        assert (np.add.reduceat(chosen[rows], d.starts) == 1).all() and (sizes >= 2).all()
    assert a.schema.metadata[TD.DIGEST_KEY] == spec.digest().encode()
    other = TD.ChunkSpec(rules, table, table, 4, 12, chunk=2, hands=3, chunk_size=3, sample=0.5)
    assert other.digest() != spec.digest()
    wins = a.column("win").to_numpy()
    assert ((wins >= 0) & (wins <= 1)).all()


def _synthetic(truth: np.ndarray, n: int, seed: int) -> pa.Table:
    """Decisions of 2–6 options whose values are a linear function of their features plus
    noise (the teacher data's columns)."""
    rng = np.random.default_rng(seed)
    cols: dict[str, list] = {f.name: [] for f in TD.SCHEMA}
    for g in range(n):
        k = int(rng.integers(2, 7))
        x = rng.normal(size=(k, len(truth)))
        q = x @ truth + rng.normal(scale=2.0, size=k)
        for i in range(k):
            row = {"chunk": 0, "hand": g, "decision": g, "kind": DISCARD, "seat": 0,
                   "option": i, "action": i, "chosen": i == 0, "value": float(q[i]), "win": 0.0}  # fmt: skip
            for c in TD.FEATURE_COLUMNS:
                row[c] = 0.0
            for j, c in enumerate(TD.FEATURE_COLUMNS[: len(truth)]):
                row[c] = float(x[i, j])
            for name, v in row.items():
                cols[name].append(v)
    return pa.table(cols, schema=TD.SCHEMA)


def test_the_fit_finds_a_linear_truth_and_lowers_the_regret() -> None:
    names = TR.KINDS[0][1]
    truth = np.zeros(len(names))
    truth[:4] = [1.0, -2.0, 0.5, 3.0]
    train, test = _synthetic(truth, 3000, 1), _synthetic(truth, 1000, 2)
    start = TR.coefficients(W.DEFAULT_LEARNED, names)
    d_train = TR.Decisions.of(train, DISCARD, len(names))
    d_test = TR.Decisions.of(test, DISCARD, len(names))
    fitted = TR.fit(d_train, start)
    before, after = TR.assess(d_test, start), TR.assess(d_test, fitted)
    best = TR.assess(d_test, truth)
    assert after.regret < 0.3 * before.regret and after.regret < 1.1 * best.regret + 0.01
    cos = fitted @ truth / np.linalg.norm(fitted) / np.linalg.norm(truth)
    assert cos > 0.98, (fitted, cos)


# ------------------------------------------------------------------ one line, never destroy


def test_only_its_own_folder(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.md").write_text("my notes\n")
    assert "a folder that paohuzi distill did not make" in _error(distill(mine))
    assert [p.name for p in mine.iterdir()] == ["notes.md"]
    tuned = tmp_path / "tuned"
    tuned.mkdir()
    (tuned / "paohuzi-tuning.json").write_text('{"format": "paohuzi-tuning", "version": 1}\n')
    assert "did not make (no paohuzi-distill.json in it)" in _error(distill(tuned))


def test_other_settings_in_the_same_folder_are_refused(done: Path) -> None:
    line = _error(distill(done, "--hands", "21"))
    assert "a distillation with other settings (hands: 20 there, 21 now)" in line


def test_teacher_data_of_other_settings_is_never_trained_on(done: Path, tmp_path: Path) -> None:
    """A chunk file that is not the chunk the run would make (its checkpoint removed and the
    run started again with another seed) is named, not read."""
    import shutil

    out = tmp_path / "other"
    shutil.copytree(done, out, ignore=shutil.ignore_patterns(".lock"))
    (out / "checkpoint.json").unlink()
    line = _error(CliRunner().invoke(main, ["distill", str(out), *QUICK[:-3], "--seed", "4", "-q"]))
    assert "round-000/chunk-00000.parquet: teacher data of other settings" in line


def test_a_damaged_checkpoint_is_one_line(done: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "damaged"
    shutil.copytree(done, out, ignore=shutil.ignore_patterns(".lock"))
    doc = json.loads((out / "checkpoint.json").read_text())
    doc["rounds"][0]["validation"]["deals"] = 10**6
    (out / "checkpoint.json").write_text(json.dumps(doc))
    assert "damaged (its checksum differs" in _error(distill(out))
    doc["rounds"][0]["validation"]["deals"] = "many"
    (out / "checkpoint.json").write_text(json.dumps(doc))
    assert "field rounds[0].validation.deals: expected an integer" in _error(distill(out))
    (out / "checkpoint.json").write_text("{")
    assert "not a distillation checkpoint (not JSON" in _error(distill(out))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--teacher", "search@0"], "--teacher"),
        (["--teacher", "search@8/heuristic"], "its rollouts are played by the apprentice"),
        (["--start", "nosuchset"], "no shipped weights set 'nosuchset' for learned"),
        (["--start", "greedy@default"], "a greedy table, not a learned or heuristic one"),
        (["--validation-deals", "50"], "--validation-deals 50: 200"),
        (["--chunk-hands", "5"], "4 chunks, fewer than 10 (one chunk in 10 is held out"),
        (["--baseline", "nope"], "unknown policy 'nope'"),
        (["--rules", "nope"], "unknown rule preset 'nope'"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "bad"
    assert message in _error(distill(out, *args))
    assert not out.exists() or not any(out.iterdir())
