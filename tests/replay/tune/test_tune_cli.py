"""``paohuzi tune`` end to end: deterministic for a seed whatever the workers, resumable after
an interruption with the same result, validated on fresh deals (never "better" when the
interval includes 0), and one ``Error:`` line, exit 2, for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from weights_helpers import ODD_HEURISTIC, write_weights

from engine.policies import weights as W
from paohuzi.cli.main import main

SMALL = ["-g", "3", "--deals", "24", "--popsize", "4", "--validation-deals", "200", "--seed", "9",
         "-q"]  # fmt: skip


def tune(out: Path, *args: str) -> object:
    return CliRunner().invoke(main, ["tune", str(out), *SMALL, *args])


def report(out: Path) -> dict:
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    for g in doc["generations"]:
        g.pop("seconds")
    doc["validation"].pop("seconds")
    doc.pop("command")  # names the folder
    return doc


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tune") / "whole"
    r = tune(out, "-w", "1")
    assert r.exit_code == 0, r.output
    return out


def test_writes_weights_and_report(whole: Path) -> None:
    doc = report(whole)
    assert len(doc["generations"]) == 3
    assert all(len(g["fitness"]) == 4 for g in doc["generations"])
    table = W.read_weights(whole / "weights.json", "heuristic")  # a valid weights file
    assert table.as_dict() == doc["weights"]
    md = (whole / "report.md").read_text(encoding="utf-8")
    assert "## Validation" in md and "fitness.svg" in md and "| 2 |" in md
    svg = (whole / "fitness.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and svg.count("<circle") == 3 and "<polyline" in svg
    about = json.loads((whole / "weights.json").read_text(encoding="utf-8"))["about"]
    assert "made by: paohuzi tune" in about and "--deals 24" in about


def test_same_seed_same_result_for_any_workers(whole: Path, tmp_path: Path) -> None:
    r = tune(tmp_path / "two", "-w", "2")
    assert r.exit_code == 0, r.output
    assert report(tmp_path / "two")["generations"] == report(whole)["generations"]
    assert report(tmp_path / "two")["validation"] == report(whole)["validation"]
    assert (tmp_path / "two" / "weights.json").read_text() != ""
    assert W.read_weights(tmp_path / "two" / "weights.json", "heuristic") == W.read_weights(
        whole / "weights.json", "heuristic"
    )


def test_resume_after_interruption_equals_uninterrupted(
    whole: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in the middle of the second generation: exit 130, one generation kept; the
    same command then gives exactly the uninterrupted run."""
    from replay.tune import evaluate

    out = tmp_path / "cut"
    real = evaluate.InProcess._map
    calls = {"n": 0}

    def interrupted(self, args, keys):  # type: ignore[no-untyped-def]
        for item in real(self, args, keys):
            calls["n"] += 1
            if calls["n"] == 7:  # generation 0 is 5 tables (4 candidates and the mean)
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(evaluate.InProcess, "_map", interrupted)
    r = tune(out, "-w", "1")
    assert r.exit_code == 130
    assert "1 generation(s) kept" in r.stderr
    monkeypatch.setattr(evaluate.InProcess, "_map", real)
    r = tune(out, "-w", "1")
    assert r.exit_code == 0, r.output
    assert report(out) == report(whole)


def test_raising_generations_goes_on(whole: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "more"
    shutil.copytree(whole, out)
    r = CliRunner().invoke(main, ["tune", str(out), *SMALL[2:], "-g", "4", "-w", "1"])
    assert r.exit_code == 0, r.output
    doc = report(out)
    assert len(doc["generations"]) == 4
    assert doc["generations"][:3] == report(whole)["generations"]
    assert doc["validation"]["generations"] == 4


def test_not_better_when_the_interval_includes_zero(whole: Path) -> None:
    r = tune(whole, "-w", "1")  # done: validates nothing again, prints the verdict
    assert r.exit_code == 0
    v = report(whole)["validation"]
    _, lo, hi = v["score_ci"]
    assert lo < 0 < hi and v["verdict"] == "not shown different"
    assert "not shown better than heuristic: the interval includes 0" in r.stdout


def test_better_only_when_the_interval_is_above_zero(tmp_path: Path) -> None:
    """Against the random policy every table wins clearly: the verdict says better."""
    r = CliRunner().invoke(
        main, ["tune", str(tmp_path / "r"), "-g", "1", "--deals", "16", "--popsize", "2",
               "--validation-deals", "200", "--baseline", "random", "-q", "-w", "1",
               "--params", "danger_w"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    v = report(tmp_path / "r")["validation"]
    assert v["score_ci"][1] > 0 and v["verdict"] == "better"
    assert "better than random: the whole interval is above 0" in r.stdout


# ------------------------------------------------------------------ bad input


def _error(r: object) -> str:
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    lines = r.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in r.output  # type: ignore[attr-defined]
    return lines[0]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"drop": "danger_w"}, "parameter 'danger_w' is missing"),
        ({"add": "nonsense"}, "unknown parameter 'nonsense' for heuristic"),
        ({"set": ("hx", "seven")}, "parameter 'hx': expected a number, got 'seven'"),
        ({"set": ("spill", 2.5)}, "parameter 'spill': 2.5 is out of range 0 … 1"),
    ],
)
def test_bad_start_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict, message: str
) -> None:
    monkeypatch.chdir(tmp_path)  # a short path: error lines cut long inputs
    values = dict(ODD_HEURISTIC)
    if "drop" in change:
        values.pop(change["drop"])
    if "add" in change:
        values[change["add"]] = 1.0
    if "set" in change:
        values[change["set"][0]] = change["set"][1]
    f = write_weights(tmp_path / "bad.json", "heuristic", values)
    line = _error(tune(tmp_path / "o", "--start", f"heuristic@{f.name}"))
    assert message in line and "bad.json" in line
    assert not (tmp_path / "o").exists()


def test_unreadable_weights_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a short path: error lines cut long inputs
    line = _error(tune(tmp_path / "o", "--baseline", "heuristic@./missing.json"))
    assert "missing.json" in line and "cannot read it" in line


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rules", "nowhere"], "nowhere"),
        (["--set", "min_huxi"], "malformed rule override"),
        (["--params", "danger_w,bogus"], "unknown parameter 'bogus'"),
        (["--params", "discard_term"], "flags are not tuned"),
        (["--baseline", "engine.policies.random_policy:RandomPolicy"], "no compiled version"),
        (["--baseline", "nobody"], "nobody"),
        (["--start", "greedy@default"], "a greedy table, not heuristic's"),
        (["--deals", "0"], "--deals"),
    ],
)
def test_bad_options(tmp_path: Path, args: list[str], message: str) -> None:
    assert message in _error(tune(tmp_path / "o", *args))
    assert not (tmp_path / "o").exists()  # refused before the folder is made


def test_out_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    assert "exists and is not a folder" in _error(tune(f))


def test_other_settings_are_refused_on_resume(whole: Path) -> None:
    line = _error(CliRunner().invoke(main, ["tune", str(whole), *SMALL[:-3], "--seed", "10", "-q"]))
    assert "another --seed (9, not 10)" in line


def test_damaged_checkpoint(whole: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "dmg"
    shutil.copytree(whole, out)
    data = (out / "checkpoint.json").read_bytes()
    i = data.index(b'"sigma":') + len(b'"sigma":0.1')  # a digit of generation 0's σ
    (out / "checkpoint.json").write_bytes(data[:i] + bytes([data[i] ^ 1]) + data[i + 1 :])
    line = _error(tune(out, "-w", "1"))
    assert "checkpoint.json: damaged" in line
    (out / "checkpoint.json").write_bytes(b"")
    assert "not a tuning checkpoint" in _error(tune(out, "-w", "1"))


def test_a_learned_table_tuned_from_a_shipped_set(tmp_path: Path) -> None:
    """``--policy learned`` tunes a learned table's coefficients from its shipped set: the
    result is a learned weights file that moved only the named coefficients, and it plays."""
    from paohuzi.cli.tune import TUNED_POLICIES

    assert set(TUNED_POLICIES) == set(W.WEIGHTED)
    start = W.shipped_path("learned", "hunan")
    out = tmp_path / "learned"
    r = tune(out, "-w", "1", "--policy", "learned", "--start", str(start),
             "--params", "d_value,d_wu,c_peng", "--baseline", "heuristic@tuned-hunan")  # fmt: skip
    assert r.exit_code == 0, r.output
    got = W.read_weights(out / "weights.json", "learned")
    was = W.read_weights(start, "learned")
    moved = {p.name for p, a, b in zip(W.PARAMS, got.values, was.values) if a != b}
    assert moved and moved <= {"d_value", "d_wu", "c_peng"}
    r = CliRunner().invoke(main, ["simulate", "-n", "6", "-w", "1", "-q", "--data",
                                  str(tmp_path / "d"), "-p", f"learned@{out}/weights.json"])  # fmt: skip
    assert r.exit_code == 0, r.output
