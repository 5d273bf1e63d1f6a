"""``paohuzi play`` (docs: docs/PLAY.md): whole hands from standard input, recorded,
verified and in the statistics; a hand killed mid-way and resumed equals the hand played at
once; bad moves refused with the options again; bad options one line, nothing written; two
players into one run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main

MOVES = "1\n" * 300  # the first option at every decision: always legal


def _cli(*args: str, stdin: str = "") -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), input=stdin)
    return r.exit_code, r.stdout, r.stderr


def _play(data: Path, *extra: str, stdin: str = MOVES) -> tuple[int, str, str]:
    if "--compare" not in extra:
        extra = (*extra, "--compare", "none")
    if "--review" not in extra:
        extra = (*extra, "--no-review")
    return _cli("play", "--data", str(data), "--seed", "21", "--name", "ann", *extra, stdin=stdin)


def _exported(data: Path) -> dict:
    code, out, err = _cli("export", "play", "0", "--data", str(data), "--format", "json", "-o", "-")
    assert code == 0, out + err
    doc = json.loads(out)
    doc.pop("title"), doc.pop("source")
    return doc


def test_a_whole_hand_from_standard_input_is_stored_verified_and_counted(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, out, err = _play(data, "--opponents", "heuristic,greedy", "--review")
    assert code == 0, out + err
    assert "stored as run play hand 0 (ann, seat 0)" in out
    # the review of the person's decisions, stored: `review` shows it again, not recomputed
    assert "your decisions, reviewed (256 rollouts per option" in out
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("seat 0: ") and "accuracy" in summary, out
    code, again_out, _ = _cli("review", "play", "0", "--seat", "0", "--data", str(data))
    assert code == 0 and summary in again_out
    stored = json.loads((data / "runs" / "run=play" / "manifest.json").read_text())["reviews"]
    assert len(stored) == 1
    assert "your options:" in out and "seat 1 (heuristic):" in out and "seat 2 (greedy):" in out
    assert not list((data / "play").glob("*.jsonl"))  # the table is gone once stored
    code, out, _ = _cli("verify", "--data", str(data))
    assert code == 0 and "all good" in out, out
    code, out, _ = _cli("stats", "play", "--data", str(data), "--json")
    doc = json.loads(out)
    assert doc["runs"][0]["hands"] == 1
    assert "policy human:ann" in _cli("stats", "play", "--data", str(data))[1]
    # the same deal and the same moves: the same hand
    again = tmp_path / "again"
    code, out_again, _ = _play(again, "--opponents", "heuristic,greedy", "--review")
    assert code == 0 and out_again.strip().splitlines()[-1] == summary  # the same review
    assert _exported(again) == _exported(data)


def test_end_of_input_saves_the_hand_and_resume_finishes_it_alike(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    assert _play(whole)[0] == 0
    cut = tmp_path / "cut"
    code, out, _ = _play(cut, stdin="1\n" * 3)
    assert code == 130 and "paohuzi play --resume" in out
    (table,) = (cut / "play").glob("*.jsonl")
    assert len(table.read_text().splitlines()) == 1 + 3
    code, out, err = _cli(
        "play", "--data", str(cut), "--resume", "--compare", "none", "--no-review", stdin=MOVES
    )
    assert code == 0, out + err
    assert "resuming table" in out and "stored as run play hand 0" in out
    assert _exported(cut) == _exported(whole)
    code, _, err = _cli("play", "--data", str(cut), "--resume")
    assert code == 2 and err.startswith("Error: no unfinished hand")


def test_a_killed_session_resumes(tmp_path: Path) -> None:
    """SIGKILL while the bots think or the person is asked: at most that decision is lost."""
    data = tmp_path / "data"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "paohuzi", "play", "--data", str(data), "--seed", "21",
           "--name", "ann", "--compare", "none", "--no-review"]  # fmt: skip
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
    assert p.stdin is not None and p.stdout is not None
    moves = 0
    for line in p.stdout:
        if line.startswith("your options:"):
            if moves == 4:
                break
            p.stdin.write("1\n")
            p.stdin.flush()
            moves += 1
    time.sleep(0.2)
    p.send_signal(signal.SIGKILL)
    p.wait(30)
    (table,) = (data / "play").glob("*.jsonl")
    assert len(table.read_text().splitlines()) == 1 + 4
    code, out, err = _cli(
        "play", "--data", str(data), "--resume", "--compare", "none", "--no-review", stdin=MOVES
    )
    assert code == 0, out + err
    whole = tmp_path / "whole"
    assert _play(whole)[0] == 0
    assert _exported(data) == _exported(whole)


def test_bad_moves_are_refused_with_the_options_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, out, err = _play(data, stdin="99\nxyz\n胡\n" + MOVES)
    assert code == 0, out + err
    assert "no option 99" in out
    assert "not a move" in out
    assert "'胡' is not one of your options now" in out  # no 天胡 in this deal
    assert out.count("; your options:") == 3  # each refusal lists the options again


def test_bad_options_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for args, why in [
        (("--opponents", "nosuchbot"), "unknown policy"),
        (("--rules", "nosuch"), "nosuch"),
        (("--seat", "5"), "--seat 5"),
        (("--opponents", "greedy,greedy,greedy"), "3 bots for 2 seats"),
        (("--daily",), "--daily and --seed"),
        (("--name", "a b"), "player name"),
        (("--run", "../x"), "../x"),
        (("--compare", "heuristic,nosuch"), "unknown policy"),
    ]:
        code, out, err = _play(data, *args)
        assert code == 2 and err.startswith("Error: ") and err.count("\n") == 1, (args, err)
        assert why in err, (args, err)
        assert not data.exists(), args


def test_two_players_into_one_run(tmp_path: Path) -> None:
    data = tmp_path / "data"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "paohuzi",
                "play",
                "--data",
                str(data),
                "--seed",
                str(s),
                "--name",
                name,
                "--compare",
                "none",
                "--no-review",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for s, name in ((1, "ann"), (2, "bob"))
    ]
    for p in procs:
        _, err = p.communicate(MOVES, timeout=120)
        assert p.returncode == 0, err
    code, out, _ = _cli("hands", "play", "--data", str(data), "--json")
    assert code == 0, out
    code, out, _ = _cli("verify", "--data", str(data))
    assert code == 0 and "all good" in out, out
    code, out, _ = _cli("stats", "play", "--data", str(data), "--json")
    assert json.loads(out)["runs"][0]["hands"] == 2


def test_the_same_deal_played_by_the_bots_in_your_seat(tmp_path: Path) -> None:
    """After the hand: each bot of --compare plays the same deal in the person's seat (the
    other seats and every seed unchanged); its score is the reference engine's play of it. A
    bare search@N is compared as its preset's new runs play it: hunan's rollouts are
    learned@hunan's (engine.policies.search_policy.PRESET_ROLLOUTS)."""
    from engine.play import play_to_end
    from engine.policies import load_policy
    from engine.state import Game
    from replay.play.table import Deal

    data = tmp_path / "data"
    code, out, err = _play(data, "--compare", "heuristic,search@4")
    assert code == 0, out + err
    line = next(x for x in out.splitlines() if x.startswith("the same deal: "))
    cells = dict(c.rsplit(" ", 1) for c in line.removeprefix("the same deal: ").split(" · "))
    search = "search@4/learned@hunan"
    assert set(cells) == {"you", "heuristic", search}
    deal = Deal.new("hunan", (), 0, ("human:ann", "heuristic", "heuristic"), seed=21)
    for bot in ("heuristic", search):
        seats = [load_policy(s) for s in (bot, "heuristic", "heuristic")]
        state = play_to_end(Game(deal.rules), deal.deck, 0, seats, 21)
        assert int(cells[bot]) == state.outcome.deltas[0], bot  # type: ignore[union-attr]
    assert _play(tmp_path / "again", "--compare", "heuristic,search@4")[1].count(line) == 1
    # kept with the hand (LOG_FORMAT §15): `review` shows it again, in text and JSON
    m = json.loads((data / "runs" / "run=play" / "manifest.json").read_text())
    assert m["comparisons"] == [{"hand": 0, "seat": 0, "scores": [
        {"policy": "heuristic", "score": int(cells["heuristic"])},
        {"policy": search, "score": int(cells[search])}]}]  # fmt: skip
    code, out, err = _cli("review", "play", "0", "--data", str(data), "-N", "2", "-q")
    assert code == 0 and f"seat 0, {line}" in out, out + err
    code, out, err = _cli("review", "play", "0", "--data", str(data), "-N", "2", "-q", "-f", "json")
    assert code == 0 and json.loads(out)["comparison"] == {
        **m["comparisons"][0],
        "you": int(cells["you"]),
    }
    code, out, _ = _cli("verify", "--data", str(data))
    assert code == 0 and "all good" in out, out
    # an entry for a hand the run does not hold is named by verify
    m["comparisons"].append({"hand": 5, "seat": 0, "scores": []})
    (data / "runs" / "run=play" / "manifest.json").write_text(json.dumps(m))
    code, out, _ = _cli("verify", "--data", str(data))
    assert code != 0 and "comparison of hand 5: the run holds 1 hand" in out, out


def test_the_deal_of_the_day_and_its_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--daily deals the same cards to everyone on a UTC date (another date, another deal);
    --daily --results lists the recorded hands of that deal in the run, and no other."""
    import datetime as dt

    from replay.play import table

    monkeypatch.setattr(table, "today", lambda: dt.date(2026, 12, 5))
    data = tmp_path / "data"
    for name in ("ann", "bob"):
        code, out, err = _cli("play", "--data", str(data), "--daily", "--name", name,
                              "--compare", "none", "--no-review", stdin=MOVES)  # fmt: skip
        assert code == 0, out + err
    assert _play(data)[0] == 0  # a seeded deal, in the same run
    code, out, err = _cli("play", "--data", str(data), "--daily", "--results")
    assert code == 0, out + err
    lines = out.strip().splitlines()
    assert lines[0] == "the deal of 2026-12-05 in run play:" and len(lines) == 3, out
    assert {ln.split()[0] for ln in lines[1:]} == {"ann", "bob"}
    monkeypatch.setattr(table, "today", lambda: dt.date(2026, 12, 6))
    code, out, _ = _cli("play", "--data", str(data), "--daily", "--results")
    assert code == 0 and out.startswith("no hand of the deal of 2026-12-06"), out
    code, _, err = _cli("play", "--data", str(data), "--results")
    assert code == 2 and "add --daily" in err


def test_a_run_the_hand_could_not_go_into_is_refused_before_the_hand(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert _play(data)[0] == 0  # run play: hunan hands
    code, _, err = _play(data, "--rules", "luzhou")
    assert (
        code == 2 and "run 'play' holds hands of other rules" in err and "--run play-luzhou" in err
    )
    code, out, err = _cli("simulate", "--data", str(data), "-n", "6", "--run", "sim", "-q")
    assert code == 0, out + err
    code, _, err = _play(data, "--run", "sim")
    assert code == 2 and "run 'sim' holds simulated hands" in err
    assert not list((data / "play").glob("*.jsonl"))  # no table was opened
    assert _play(data, "--rules", "luzhou", "--run", "play-luzhou")[0] == 0


def test_a_hand_won_at_the_deal_is_shown_and_stored(tmp_path: Path) -> None:
    """Seed 3972 deals seat 2 a 3提 天胡: the hand is over before anyone acts (no step), and
    is shown, stored and compared like any other (it was a traceback)."""
    data = tmp_path / "data"
    code, out, err = _cli("play", "--data", str(data), "--seed", "3972", "--name", "ann",
                          "--compare", "heuristic", "--no-review", stdin="")  # fmt: skip
    assert code == 0, out + err
    assert "天胡" in out and "seat 2 wins" in out and "your move>" not in out
    assert "stored as run play hand 0 (ann, seat 0)" in out
    assert "the same deal: you -17 · heuristic -17" in out
