"""paohuzi export / import: a hand written as a replay file and read back is the same hand;
hand-written files (docs/examples) import and step through; bad files are one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.rules import find_rules
from paohuzi.cli.main import main
from replay.record import runner
from replay.record.importing import import_hands
from replay.record.spec import RunSpec
from replay.replayer import importing, replay_file
from replay.replayer.hand import Replayer, load_hand, replay_hand
from replay.replayer.replay_file import ReplayFileError, read_replay, read_replay_file
from replay.replayer.verify import verify_store
from replay.store.runs import open_store

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.*"))
RUNS = {
    "hunan": (find_rules("hunan"), 16),
    "fourp": (find_rules("hunan-4p"), 8),
    "min10": (find_rules("hunan").with_overrides(["min_huxi=10", "huayang=full"]), 8),
    "luzhou": (find_rules("luzhou"), 8),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("export-import")
    for name, (rules, n) in RUNS.items():
        spec = RunSpec(rules=rules, policies=("random",) * rules.players, seed=9, deals=n,
                       session_length=4, shard_hands=8)  # fmt: skip
        runner.simulate(spec, d, name)
    return d


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    d = tmp_path / "store"
    shutil.copytree(pristine, d)
    return d


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args))


def same_hand(a, b) -> None:  # noqa: ANN001
    """Two recorded hands are identical but for their ids."""
    ha = {k: v for k, v in a.hand.items() if k != "hand_id"}
    hb = {k: v for k, v in b.hand.items() if k != "hand_id"}
    assert ha == hb
    ea = {k: v for k, v in a.event_rows.items() if k != "hand_id"}
    eb = {k: v for k, v in b.event_rows.items() if k != "hand_id"}
    assert ea == eb
    assert a.rules == b.rules


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_round_trip_every_hand(root: Path, tmp_path: Path, fmt: str) -> None:
    for run, (_, n) in RUNS.items():
        files = []
        for hand in range(n):
            text, _ = replay_file.export_hand(root, run, hand, fmt)
            p = tmp_path / f"{run}-{hand}.{'json' if fmt == 'json' else 'phz'}"
            p.write_text(text, encoding="utf-8")
            files.append(read_replay_file(p))
        res = import_hands(root, importing.ImportBatch(files, all_or_nothing=True), f"back-{run}")
        assert res.hand_ids == list(range(n))
        for hand in range(n):
            same_hand(load_hand(root, run, hand), load_hand(root, f"back-{run}", hand))
    rep = verify_store(root)
    assert rep.ok, [str(p) for p in rep.problems]


def test_round_trip_through_the_cli(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "h5.json"
    res = cli("export", "hunan", "5", "--data", str(root), "-o", str(out))
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["format"] == "paohuzi-replay"
    res = cli("export", "hunan", "6", "--data", str(root))
    assert res.exit_code == 0 and res.output.startswith("# 跑胡子 replay file")
    txt = tmp_path / "h6.phz"
    txt.write_text(res.output, encoding="utf-8")
    res = cli("import", str(out), str(txt), "--data", str(root))
    assert res.exit_code == 0, res.output
    assert "as run imported-hunan hand 0" in res.output and "hand 1" in res.output
    same_hand(load_hand(root, "hunan", 5), load_hand(root, "imported-hunan", 0))
    same_hand(load_hand(root, "hunan", 6), load_hand(root, "imported-hunan", 1))
    # The same hand again is refused; with --allow-duplicate a second import appends a
    # shard, and the catalog sees every hand.
    res = cli("import", str(out), "--data", str(root))
    assert res.exit_code == 2 and "already imported as run imported-hunan hand 0" in res.output
    res = cli("import", str(out), "--data", str(root), "--allow-duplicate")
    assert res.exit_code == 0 and "hand 2" in res.output
    con = open_store(root).connect()
    n = con.execute("SELECT count(*) FROM hands WHERE run = 'imported-hunan'").fetchone()[0]
    assert n == 3
    assert len(open_store(root).run("imported-hunan").shards) == 2
    res = cli("replay", "imported-hunan", "2", "--data", str(root), "--no-color")
    assert res.exit_code == 0 and "result:" in res.output


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_documented_examples_import_and_step_through(root: Path, path: Path) -> None:
    rf = read_replay_file(path)
    assert rf.outcome, "an example states its outcome"
    final = replay_file.check_replay(rf)
    rp = Replayer(rf.log)
    for k in range(rf.log.n_steps + 1):
        assert rp.seek(k) == replay_hand(rf.log, k)
        if k < rf.log.n_steps:
            d = rp.decision(k)
            assert d.action in d.legal
    assert rp.state == final and final.is_terminal()
    res = cli("import", str(path), "--data", str(root), "--run", "examples")
    assert res.exit_code == 0, res.output
    log = load_hand(root, "examples", 0)
    assert replay_hand(log) == final
    for key, value in rf.outcome.items():
        assert log.hand[key] == value, key
    res = cli("replay", "--file", str(path), "--no-color")
    assert res.exit_code == 0 and "result:" in res.output


def test_example_is_a_red_win_by_own_draw() -> None:
    rf = read_replay_file(ROOT / "docs" / "examples" / "honghu-zimo.phz")
    o = replay_file.check_replay(rf).outcome
    assert o is not None and o.winner == 1 and o.result is not None
    assert [n for n, _ in o.result.mingtang] == ["红胡"] and o.result.score == 6


HAND_WRITTEN = """
[hand]
rules: hunan
dealer: 0
hand 0: 一一四四五八八九九十 叁叁伍伍陆陆捌玖拾拾
liang: 贰
hand 1: 一二三 二七十 壹贰叁 柒柒柒 四五六 捌玖拾 八九
hand 2: 三三五六七七八十十 壹壹肆肆肆伍陆陆叁捌玖
stock: 肆 九 七 rest
[events]
seat 0: 打 陆
seat 2: 碰
"""


def test_hand_written_partial_hand_steps(tmp_path: Path) -> None:
    rf = read_replay(HAND_WRITTEN)
    assert rf.log.n_steps == 2
    s = replay_hand(rf.log)
    assert not s.is_terminal() and s.deciders() == (2,)
    with pytest.raises(ReplayFileError, match="ends before the hand does"):
        replay_file.check_replay(rf)
    p = tmp_path / "partial.phz"
    p.write_text(HAND_WRITTEN, encoding="utf-8")
    res = cli("replay", "--file", str(p), "--no-color")
    assert res.exit_code == 0 and "decision: seat 2 (discard)" in res.output


@pytest.mark.parametrize(
    "edit, message",
    [
        (("stock: 肆 九 七 rest", "stock: 肆 九 七"), "the deal has 64 cards, not 80"),
        (("stock: 肆 九", "stock: 肆 肆 九"), "more than 4 copies in the deal: 肆 ×5"),
        (("hand 1: 一二三 ", "hand 1: 二三 "), "seat 1 is dealt 20 cards, not 19"),
        (("seat 2: 碰", "seat 1: 碰"), "event 1: illegal event: seat 1 plays 碰"),
        (("seat 2: 碰", "seat 2: 碰碰"), "line 12: bad event"),
        (("rules: hunan", "rules: chess"), "unknown rule preset 'chess'"),
        (("dealer: 0", "dealer: 3"), "line 4: dealer 3 is not a seat of a 3-player table"),
        (("dealer: 0", "dealer: 5"), "line 4: field dealer: expected an integer in 0 … 3, got 5"),
        (("[events]", "[moves]"), "unknown section [moves]"),
        (("liang: 贰", "liang: 贰\nwho: me"), "unknown key 'who'"),
        (("hand 0: ", "hand 3: "), "seat 3"),
    ],
)
def test_bad_hand_written_files(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    text = HAND_WRITTEN.replace(*edit)
    p = tmp_path / "bad.phz"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ReplayFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        replay_file.check_replay(read_replay_file(p))
    res = cli("import", str(p), "--data", str(tmp_path / "store"))
    assert res.exit_code == 2
    assert res.output.startswith("Error: ") and res.output.count("\n") == 1, res.output
    assert "Traceback" not in res.output


def test_bad_json_and_wrong_outcome(tmp_path: Path, root: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_text('{"format": "paohuzi-replay", "deck": ', encoding="utf-8")
    res = cli("import", str(p), "--data", str(root))
    assert res.exit_code == 2 and "bad JSON at line 1" in res.output
    res = cli("replay", "--file", str(p), "--data", str(root))
    assert res.exit_code == 2 and res.output.count("\n") == 1
    text, _ = replay_file.export_hand(root, "hunan", 3, "json")
    obj = json.loads(text)
    obj["outcome"]["stock_left"] = "77"
    p.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    res = cli("import", str(p), "--data", str(root))
    assert res.exit_code == 2 and "stated outcome differs: stock_left 77" in res.output
    obj["version"] = 2
    p.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    assert "unknown replay file version 2" in cli("import", str(p), "--data", str(root)).output
    res = cli("import", str(tmp_path / "missing.phz"), "--data", str(root))
    assert res.exit_code == 2 and "no such file" in res.output


def test_import_refuses_to_mix_rules_or_touch_simulated_runs(root: Path, tmp_path: Path) -> None:
    p = tmp_path / "h.phz"
    p.write_text(replay_file.export_hand(root, "hunan", 1)[0], encoding="utf-8")
    q = tmp_path / "l.phz"
    q.write_text(replay_file.export_hand(root, "luzhou", 1)[0], encoding="utf-8")
    res = cli("import", str(p), "--run", "hunan", "--data", str(root))
    assert res.exit_code == 2 and "simulated run" in res.output
    assert cli("import", str(p), "--run", "mine", "--data", str(root)).exit_code == 0
    res = cli("import", str(q), "--run", "mine", "--data", str(root))
    assert res.exit_code == 2 and "other rules" in res.output
    res = cli("import", str(p), str(q), "--data", str(root))
    assert res.exit_code == 2 and "other rules" in res.output
    assert open_store(root).run("mine").n_hands == 1


def test_export_errors(root: Path) -> None:
    res = cli("export", "nope", "0", "--data", str(root))
    assert res.exit_code == 2 and "no run 'nope'" in res.output
    res = cli("export", "hunan", "99", "--data", str(root))
    assert res.exit_code == 2 and "has no hand 99" in res.output
