"""``paohuzi score``: the hand calculator's text, JSON and batch output (RULES.md §10.3, §11,
§15) and its one-line errors."""

from __future__ import annotations

import doctest
import importlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from score_examples import BATCH_LINES, EX1, EX2, EX4, EX8, ISSUE, check_batch_output

from engine import calculator
from paohuzi.cli.main import main

SCRIPT = Path(sys.executable).with_name("paohuzi")


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, ["score", *args], input=input)


def ok(*args: str, input: str | None = None) -> str:
    r = run(*args, input=input)
    assert r.exit_code == 0, (r.stdout, r.stderr)
    assert r.stderr == ""
    return r.stdout


def as_json(*args: str) -> dict:
    return json.loads(ok(*args, "--json"))


def group_rows(text: str) -> list[list[str]]:
    """The indented group lines of the text report, split into words."""
    return [line.split() for line in text.splitlines() if line.startswith("  ")]


# --------------------------------------------------------------------------- the issue's example


def test_issue_example_text():
    out = ok(*ISSUE)
    rows = group_rows(out)
    # 伍 is a big card: 跑伍 is worth 9 (§11.1), so the total is 19. With a small 五 the
    # issue's 16 comes out (next test).
    assert rows == [
        ["吃[二七十]", "3", "table"],
        ["碰三", "1", "table"],
        ["跑伍", "9", "table"],
        ["六七八", "0"],
        ["将九九", "0"],
        ["壹贰叁", "6"],
        ["柒捌玖", "0"],
        ["胡息", "19"],
    ]
    assert "win: 胡息 19 ≥ 15" in out
    assert "等" not in out  # no hu card, no source: nothing to score


def test_issue_example_with_small_pao_is_16():
    d = as_json(
        "壹贰叁柒捌玖六七八九九", "--meld", "pao:五", "--meld", "peng:三", "--meld", "chi:二,七,十"
    )
    assert d["win"] is True
    assert d["huxi"] == 16
    assert [(g["kind"], g["cards"], g["huxi"]) for g in d["groups"]] == [
        ("chi", "二七十", 3),
        ("peng", "三三三", 1),
        ("pao", "五五五五", 6),
        ("sentence", "六七八", 0),
        ("jiang", "九九", 0),
        ("sentence", "壹贰叁", 6),
        ("sentence", "柒捌玖", 0),
    ]


def test_issue_example_json_shape():
    d = as_json(*ISSUE)
    assert set(d) == {
        "hand", "melds", "card", "source", "rules", "min_huxi", "win", "reason", "reason_text",
        "option", "groups", "huxi", "deng", "mingtang", "fan", "score", "zimo", "tianhu",
        "settlement",
    }  # fmt: skip
    assert d["hand"] == "壹贰叁柒捌玖六七八九九"
    assert d["melds"] == ["pao:伍", "peng:三", "chi:二,七,十"]
    assert d["card"] is None and d["source"] is None
    assert d["rules"] == "hunan" and d["min_huxi"] == 15
    assert d["win"] is True and d["reason"] is None and d["reason_text"] is None
    assert d["huxi"] == 19 == sum(g["huxi"] for g in d["groups"])
    assert [g["table"] for g in d["groups"]] == [True, True, True, False, False, False, False]
    assert all(set(g) == {"kind", "cards", "huxi", "table"} for g in d["groups"])
    assert d["deng"] is None and d["score"] is None and d["settlement"] is None


def test_ascii_cards():
    out = ok(*ISSUE, "--ascii")
    assert "pao b5" in out and "b1 b2 b3" in out
    assert not any("\u4e00" <= c <= "\u9fff" for line in group_rows(out)[:-1] for c in line[0])
    d = as_json(*ISSUE, "--ascii")
    assert d["hand"].startswith("b1 b2 b3")
    assert d["melds"] == ["pao:b5", "peng:s3", "chi:s2,s7,s10"]
    assert {"kind": "jiang", "cards": "s9 s9", "huxi": 0, "table": False} in d["groups"]


# --------------------------------------------------------------------------- RULES §15 examples


def test_example_1_other_draw():
    out = ok(*EX1, "--source", "other")
    assert "胡息         18" in out
    assert "\n等 2\n" in out
    assert "名堂 none (平胡)" in out
    assert "番 1" in out
    assert "score 2" in out
    assert "settlement +4/−2/−2" in out
    d = as_json(*EX1, "--source", "other")
    assert (d["huxi"], d["deng"], d["fan"], d["score"]) == (18, 2, 1, 2)
    assert d["mingtang"] == [] and d["zimo"] is False
    assert d["settlement"] == [4, -2, -2]


def test_example_1_source_defaults_to_other():
    assert as_json(*EX1)["source"] == "other"


def test_example_1_own_draw_is_zimo():
    out = ok(*EX1, "--source", "own")
    assert "等 3 (自摸 +1 等)" in out
    assert "settlement +6/−3/−3" in out
    d = as_json(*EX1, "--source", "own")
    assert (d["huxi"], d["deng"], d["score"], d["zimo"]) == (18, 3, 3, True)


def test_example_1_four_players_sitter_pays_nothing():
    d = as_json(*EX1, "--rules", "hunan-4p")
    assert d["settlement"] == [4, -2, -2, 0]


def test_example_2_below_threshold():
    out = ok(*EX2)
    assert "no win: below the 胡息 threshold: best 12 < 15" in out
    d = as_json(*EX2)
    assert d["win"] is False and d["reason"] == "below_min" and d["huxi"] == 12
    assert d["score"] is None and d["settlement"] is None


def test_threshold_follows_the_rules():
    out = ok(*EX1, "--set", "min_huxi=20")
    assert "no win: below the 胡息 threshold: best 18 < 20" in out
    assert as_json(*EX1, "--set", "min_huxi=20")["rules"] == "hunan + min_huxi=20"


def test_example_4_kan_cannot_be_split():
    out = ok(*EX4)
    assert "no win: cannot be split into 7 门子" in out
    assert "坎六 cannot be split" in out
    d = as_json(*EX4)
    assert d["win"] is False and d["reason"] == "no_split" and d["huxi"] is None
    assert d["groups"] == []


def test_example_3_with_its_jiang_wins():
    d = as_json("壹贰叁四五六七八九贰柒捌捌", "-m", "chi:一,二,三", "-m", "pao:伍", "--card", "拾")
    assert (d["huxi"], d["deng"], d["score"]) == (24, 4, 4)


def test_example_8_haidi_names_its_mingtang():
    d = as_json(*EX8, "--card", "六")
    assert d["mingtang"] == [{"name": "红胡", "fan": 2}] and d["score"] == 6
    out = ok(*EX8, "--card", "六", "--haidi")
    assert "名堂 红胡 2 + 海底 2" in out and "score 12" in out
    assert "haidi" in out  # the card line says so


def test_example_7_own_draw_onto_pair_is_no_hu():
    args = [
        "四五六陆柒捌肆伍陆九九",
        "-m",
        "chi:壹,贰,叁",
        "-m",
        "chi:贰,柒,拾",
        "-m",
        "chi:一,二,三",
    ]
    assert as_json(*args, "--card", "九")["score"] == 1
    d = as_json(*args, "--card", "九", "--source", "own")
    assert d["win"] is False and d["reason"] == "own_pair"


def test_example_15_liang_is_tianhu():
    d = as_json("壹贰叁贰柒拾一二三二七十四五六七八九肆伍", "--card", "陆", "--source", "liang")
    assert (d["huxi"], d["deng"], d["score"], d["tianhu"]) == (18, 9, 9, True)


def test_example_15_liang_dealer():
    hand = "一一二七十贰柒拾壹贰叁四五六七八九肆伍陆"
    d = as_json(hand, "--card", "一", "--source", "liang-dealer")
    assert (d["huxi"], d["deng"], d["score"]) == (18, 9, 9)
    # The same 21 cards as a closed hand, scored as the dealer's 天胡.
    d = as_json(hand + "一", "--source", "liang-dealer")
    assert (d["huxi"], d["deng"], d["score"]) == (18, 9, 9)


def test_discard_is_no_hu_in_hunan():
    d = as_json(*EX1, "--source", "discard")
    assert d["win"] is False and d["reason"] == "discard"
    assert "hu_on_discards off" in d["reason_text"]


def test_example_25_luzhou_discard():
    args = ["四五六肆伍陆陆柒捌三四五八九", "-m", "peng:七", "-m", "chi:二,七,十", "--card", "十"]
    out = ok(*args, "--rules", "luzhou", "--source", "discard")
    assert "win: 胡 12 ≥ 10" in out and "score 3" in out
    assert "no win: below the 胡息 threshold: best 4 < 15" in ok(*args)


def test_wrong_card_count():
    d = as_json("壹贰叁四五六", "-m", "chi:一,二,三", "--card", "拾")
    assert d["reason"] == "card_count"
    assert d["reason_text"].endswith("10 cards with 0 跑/提, a win needs 21")


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["壹X"], "'X'"),
        (["三三三", "--meld", "pao:三"], "copies of 三"),
        (["三三", "--meld", "pao:三"], "6 copies of 三"),
        (["伍" + EX1[0], *EX1[1:-1], "伍"], "5 copies of 伍"),
        (["壹贰", "--meld", "peng:三四"], "'peng:三四'"),
        (["壹贰", "--meld", "foo:一"], "'foo:一'"),
        (["壹贰", "--rules", "nope"], "'nope'"),
        (["壹贰", "--set", "nosuch=1"], "'nosuch'"),
        (["壹贰", "--card", "Q"], "'Q'"),
        (["壹贰", "--source", "own"], "needs a hu card"),
        (["壹贰", "--source", "sideways"], "sideways"),
        (["壹贰", "--frobnicate"], "--frobnicate"),
        ([], "HAND"),
        (["--batch", "/nonexistent/hands.jsonl"], "/nonexistent/hands.jsonl"),
        (["--batch", "-", "--rules", "nope"], "'nope'"),
        (["壹贰", "--batch", "-"], "not both"),
        (["--batch", "-", "--card", "拾"], "--card"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, needle):
    r = run(*args, input="")
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0]
    assert "Traceback" not in r.stderr


# --------------------------------------------------------------------------- batch


def test_batch_stdin_in_order_with_bad_lines():
    r = run("--batch", "-", input="\n".join(BATCH_LINES) + "\n")
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    check_batch_output(r.stdout)


def test_batch_file(tmp_path):
    path = tmp_path / "hands.jsonl"
    path.write_text("\n".join(BATCH_LINES), encoding="utf-8")
    r = run("--batch", str(path))
    assert r.exit_code == 0, r.stderr
    check_batch_output(r.stdout)


def test_batch_default_rules_apply_to_lines_without_their_own():
    line = json.dumps(
        {"hand": EX1[0], "melds": ["chi:一,二,三", "peng:伍"], "card": "拾"}, ensure_ascii=False
    )
    r = run("--batch", "-", "--set", "min_huxi=20", input=line + "\n")
    assert json.loads(r.stdout)["reason"] == "below_min"


def test_batch_not_utf8_is_a_line_error():
    buf = io.BytesIO()
    stats = calculator.run_batch([b'{"hand": "\xff"}', b'{"hand": "\xe5\xa3\xb9"}'], buf)
    assert stats == calculator.BatchStats(lines=2, results=1, errors=1)
    first, second = buf.getvalue().decode().splitlines()
    assert json.loads(first) == {"line": 1, "error": "bad JSON: not UTF-8"}
    assert json.loads(second)["reason"] == "card_count"


def test_generated_batch_is_deterministic_and_mixed():
    lines = calculator.generate_batch_lines(300, seed=3)
    assert lines == calculator.generate_batch_lines(300, seed=3)
    buf = io.BytesIO()
    stats = calculator.run_batch(lines, buf)
    assert stats.errors == 0
    wins = [json.loads(s)["win"] for s in buf.getvalue().decode().splitlines()]
    assert 0 < sum(wins) < len(wins)


def test_bench_batch_reports_a_rate():
    from bench.calculator import bench_batch

    assert bench_batch(200, seed=1) > 0


# --------------------------------------------------------------------------- Python API and group


@pytest.mark.parametrize(
    "module", ["", ".request", ".render", ".protocol", ".batch", ".fast", ".samples"]
)
def test_calculator_doctests(module: str) -> None:
    mod = importlib.import_module("engine.calculator" + module)
    assert doctest.testmod(mod).failed == 0


def test_calculate_from_python():
    calc = calculator.calculate(EX1[0], ["chi:一,二,三", "peng:伍"], card="拾", source="own")
    assert (calc.result.huxi, calc.result.score, calc.settlement) == (18, 3, (6, -3, -3))
    assert calc.to_dict()["zimo"] is True


def test_group_help_and_version():
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0 and "score" in r.stdout
    r = CliRunner().invoke(main, ["--version"])
    assert r.exit_code == 0 and "paohuzi" in r.stdout
    r = CliRunner().invoke(main, ["score", "--help"])
    assert r.exit_code == 0 and "--batch" in r.stdout and "liang-dealer" in r.stdout


# --------------------------------------------------------------------------- installed script


@pytest.fixture(scope="module")
def script() -> Path:
    if not SCRIPT.exists():
        pytest.skip(f"console script {SCRIPT} is not installed (pip install -e .)")
    return SCRIPT


def test_console_script_issue_example(script):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    p = subprocess.run(
        [str(script), "score", *ISSUE, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["win"] is True and d["huxi"] == 19


def test_console_script_bad_input(script):
    p = subprocess.run([str(script), "score", "壹X"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.splitlines() == ["Error: bad hand: unknown card 'X' at position 1 in '壹X'"]


def test_console_script_batch_pipe(script, tmp_path):
    path = tmp_path / "hands.jsonl"
    path.write_text("\n".join(BATCH_LINES) + "\n", encoding="utf-8")
    p = subprocess.run(
        [str(script), "score", "--batch", "-"],
        stdin=path.open("rb"),
        capture_output=True,
        text=True,
        timeout=600,  # a bound, not a speed test: the scorer may compile on a busy machine
    )
    assert p.returncode == 0, p.stderr
    check_batch_output(p.stdout)


def test_error_line_quotes_a_short_prefix_bug():
    # `score "x"*100000` echoed the whole input into its one error line.
    hand = "壹" + "x" * 100_000
    r = CliRunner().invoke(main, ["score", hand])
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert len(r.output) < 300 and "(100000 characters)" in r.output
    r = CliRunner().invoke(main, ["score", "壹贰叁", "--meld", "peng:" + "三" * 5000])
    assert r.exit_code == 2 and len(r.output) < 300, r.output
