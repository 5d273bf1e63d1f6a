"""paohuzi replay: the terminal rendering against golden text (colours off), colours, the
JSON view, the interactive keys and the one-line errors.

Regenerate the golden files after an intended change of the rendering with
``PAOHUZI_UPDATE_GOLDEN=1 pytest tests/replay/test_replay_render.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.rules import find_rules
from paohuzi.cli.main import main
from replay.record import runner
from replay.record.importing import import_hands
from replay.record.spec import RunSpec
from replay.replayer import importing
from replay.replayer.hand import Replayer, load_hand
from replay.replayer.render_text import render_text, render_view, to_terminal
from replay.replayer.replay_file import read_replay_file
from replay.replayer.views import state_view

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).parent / "golden"
EXAMPLE = ROOT / "docs" / "examples" / "honghu-zimo.phz"
UPDATE = bool(os.environ.get("PAOHUZI_UPDATE_GOLDEN"))


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path} (set PAOHUZI_UPDATE_GOLDEN=1)"
    assert text == path.read_text(encoding="utf-8")


def all_frames(seat: int | None) -> str:
    rp = Replayer(read_replay_file(EXAMPLE).log)
    frames = []
    for k in range(rp.n_steps + 1):
        rp.seek(k)
        frames.append(render_view(state_view(rp.state, seat, log=rp.log)))
    return "\n\n".join(frames) + "\n"


def test_golden_god_view_of_every_step() -> None:
    check_golden("honghu-zimo.all.txt", all_frames(None))


def test_golden_seat_view_of_every_step() -> None:
    check_golden("honghu-zimo.seat1.txt", all_frames(1))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("render")
    spec = RunSpec(rules=find_rules("hunan"), policies=("random",) * 3, seed=4, deals=6,
                   session_length=3, shard_hands=3)  # fmt: skip
    runner.simulate(spec, d, "r")
    files = [read_replay_file(EXAMPLE)]
    import_hands(d, importing.ImportBatch(files, all_or_nothing=True), "ex")
    return d


def run_cli(root: Path, *args: str, input: str | None = None):  # noqa: A002
    return CliRunner().invoke(main, ["replay", "--data", str(root), *args], input=input)


def test_cli_text_equals_the_golden_frame(root: Path) -> None:
    res = run_cli(root, "ex", "0", "--step", "4", "--no-color")
    assert res.exit_code == 0, res.output
    frames = (GOLDEN / "honghu-zimo.all.txt").read_text(encoding="utf-8").split("\n\n")
    # The imported copy adds its run and hand to the header; the rest is the same.
    assert res.output.splitlines()[1:] == frames[4].splitlines()[1:]
    assert res.output.startswith("跑胡子 hunan · run ex · hand 0 · step 4/10")
    res = run_cli(root, "ex", "0", "--no-color")  # default: the end of the hand
    assert "result: 胡 — seat 1 wins on 七" in res.output
    assert "胡息 18 · 等 3 (自摸 +1) · 名堂 红胡 2 · 番 2 · score 6" in res.output
    assert "settlement: seat 0 -6 · seat 1 +12 · seat 2 -6" in res.output


def test_colours(root: Path) -> None:
    plain = run_cli(root, "ex", "0", "--step", "1").output  # not a terminal: no colour
    assert "\x1b[" not in plain
    coloured = run_cli(root, "ex", "0", "--step", "1", "--color").output
    assert "\x1b[1;31m贰\x1b[0m" in coloured  # the 亮张 贰 is red
    assert "\x1b[1;31m一" not in coloured  # 一 is black
    view = state_view(Replayer(read_replay_file(EXAMPLE).log).seek(1), None)
    assert to_terminal(render_text(view), color=False) == render_view(view)


def test_seat_view_hides_what_the_seat_cannot_see(root: Path) -> None:
    res = run_cli(root, "ex", "0", "--step", "8", "--seat", "1", "--no-color")
    assert res.exit_code == 0
    assert "hand 18 cards hidden" in res.output and "偎?(3)" in res.output
    assert "一二二三四五六七八九十壹贰叁柒柒柒捌玖拾" in res.output  # seat 1's own hand
    v = json.loads(run_cli(root, "ex", "0", "--step", "8", "--seat", "1", "-f", "json").output)
    assert v["viewer"] == 1 and v["seats"][0]["hand"] == {"hidden": True, "count": 18}
    assert v["seats"][0]["melds"][0] == {"kind": "wei", "label": "偎?", "hidden": True,
                                         "cards": None, "huxi": 3}  # fmt: skip
    assert v["decision"]["options"][0]["options"] is None and "stock" not in v
    v = json.loads(run_cli(root, "ex", "0", "--step", "8", "-f", "json").output)
    assert v["seats"][0]["melds"][0]["label"] == "偎九" and v["stock"]["text"].startswith("七")


def test_json_view_of_the_end(root: Path) -> None:
    v = json.loads(run_cli(root, "ex", "0", "--format", "json").output)
    o = v["outcome"]
    assert (v["step"], v["n_steps"], v["decision"]) == (10, 10, None)
    assert (o["kind"], o["winner"], o["source"], o["huxi"], o["deng"], o["fan"]) == (
        "HU", 1, "OWN_DRAW", 18, 3, 2,
    )  # fmt: skip
    assert o["mingtang"] == [{"name": "红胡", "fan": 2}]
    assert [d["delta"] for d in o["settlement"]] == [-6, 12, -6]
    assert sum(g["huxi"] for g in o["decomposition"]) == 18
    v = json.loads(run_cli(root, "ex", "0", "--step", "4", "--format", "json").output)
    d = v["decision"]
    assert d["forced"] and d["chosen"] == {"seat": 2, "code": 83, "text": "跑 肆"}
    assert d["options"] == [{"seat": 2, "n_legal": 1,
                             "options": [{"code": 83, "text": "跑 肆"}]}]  # fmt: skip


def test_recorded_hand_renders_at_every_step(root: Path) -> None:
    for hand in range(6):
        log = load_hand(root, "r", hand)
        for k in range(log.n_steps + 1):
            text = render_view(state_view(Replayer(log).seek(k), None, log=log))
            assert f"step {k}/{log.n_steps}" in text
            for seat in range(3):
                render_view(state_view(Replayer(log).seek(k), seat, log=log))


def test_interactive_keys(root: Path) -> None:
    # next, next, previous, seat 2's next decision, go to step 9, end, quit
    res = run_cli(root, "ex", "0", "-i", "--no-color", input="nnp2g9\neq")
    assert res.exit_code == 0, res.output
    steps = [line.split(" · ")[3] for line in res.output.splitlines()
             if line.startswith("跑胡子")]  # fmt: skip
    assert steps == ["step 0/10", "step 1/10", "step 2/10", "step 1/10", "step 2/10",
                     "step 9/10", "step 10/10"]  # fmt: skip
    res = run_cli(root, "ex", "0", "-i", "--no-color", "--step", "10", input="nxq")
    assert "at the end of the hand" in res.output and "unknown key 'x'" in res.output
    res = run_cli(root, "ex", "0", "-i", "--no-color", input="vq")
    assert "view of seat 0" in res.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope", "0"], "no run 'nope'"),
        (["r", "6"], "run r has no hand 6"),
        (["r", "0", "--step", "999"], "step 999 out of range for run r hand 0"),
        (["r", "0", "--seat", "3"], "seat 3 out of range"),
        (["r", "0", "--seat", "1", "--all"], "either --seat S or --all"),
        (["r"], "missing RUN and HAND"),
        (["r", "x"], "'x' is not a valid integer"),
        (["--file", "/nonexistent.phz"], "no such file"),
        (["r", "0", "-i", "-f", "json"], "--interactive shows text"),
    ],
)
def test_bad_input_is_one_line(root: Path, args: list[str], message: str) -> None:
    res = run_cli(root, *args)
    assert res.exit_code == 2, res.output
    assert res.output.startswith("Error: ") and res.output.count("\n") == 1
    assert message in res.output


def test_a_store_without_the_run_folder(tmp_path: Path, root: Path) -> None:
    shutil.copytree(root, tmp_path / "s")
    shutil.rmtree(tmp_path / "s" / "runs" / "run=r")
    res = run_cli(tmp_path / "s", "r", "0")
    assert res.exit_code == 2 and "runs: ex" in res.output
