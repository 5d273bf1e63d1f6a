"""One review language (issue 60): a review line names the best option of each measure it
speaks of and measures the loss against that option — "best 打 肆; lost 19.5 win points"
measured the points against 打 五 (the likeliest to win) while naming 打 肆 (the best
score) — and the accuracy, the classes and the costliest decisions read one measure, the
winning chance given up, so a decision listed as costly has lost some of it."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from click.testing import CliRunner

from engine.actions import action_str
from engine.judge import DecisionReview, HandReview, judge
from engine.search import option_values
from paohuzi.cli.main import main
from paohuzi.cli.review import render_decision, render_summary

THREE, FIVE, SI = 12, 14, 23  # 打 三, 打 五, 打 肆


def _values(cols: dict[int, tuple[list[int], list[int]]]):  # type: ignore[no-untyped-def]
    """Option values from each option's score deltas and wins, rollout by rollout."""
    return option_values(
        list(cols),
        [([float(x) for x in d], [float(x) for x in w], [0.0] * len(d), []) for d, w in
         cols.values()],
    )  # fmt: skip


def _two_bests() -> DecisionReview:
    """打 三 played; 打 五 wins most often (5 of 8), 打 肆 scores most (a big win, 2 of 8)."""
    vals = _values(
        {
            THREE: ([0, 0, -1, 0, -2, 0, -1, 0], [0, 0, 0, 0, 0, 0, 0, 1]),
            FIVE: ([1, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0, 0, 1]),
            SI: ([6, 0, 0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0, 0, 1]),
        }
    )
    return judge(14, 0, "DISCARD", THREE, vals)


def test_the_line_names_each_best_with_the_loss_measured_against_it() -> None:
    d = _two_bests()
    head = render_decision(d)[0]
    # 50 points of winning chance given up against 打 五, 1.38 of score against 打 肆 — never
    # the 50 points beside 打 肆's name
    assert head.startswith("step 14 · seat 0 · DISCARD: played 打 三 · by win chance best 打 五,"
                           " −50.0 ±"), head  # fmt: skip
    assert " pts · by score best 打 肆, −1.38 ±" in head and head.endswith("BLUNDER"), head
    # the option table marks each measure's best
    table = "\n".join(render_decision(d)[1:])
    assert re.search(r"打 五 .*best by win chance", table) and re.search(
        r"打 肆 .*best by score", table
    ), table


def test_one_best_is_named_once_and_a_tie_with_it_is_the_played_option() -> None:
    vals = _values(
        {
            THREE: ([0, 0, 1, 0, 2, 0, 1, 0], [0, 0, 1, 0, 1, 0, 1, 0]),
            FIVE: ([1, 1, 1, 1, 2, 1, 1, 0], [1, 1, 1, 1, 1, 0, 1, 0]),
        }
    )
    d = judge(3, 1, "DISCARD", THREE, vals)
    assert render_decision(d)[0].startswith(
        "step 3 · seat 1 · DISCARD: played 打 三 · best 打 五: −37.5 ±"
    ), render_decision(d)[0]
    # the same score and win chance as the best: the played option is the best
    vals = _values({SI: ([1, 0, 2, 0], [1, 0, 1, 0]), FIVE: ([0, 2, 1, 0], [1, 1, 0, 0])})
    d = judge(4, 1, "DISCARD", SI, vals)  # (打 五 has the lower action code)
    assert (d.best, d.score_loss, d.win_loss, d.kind) == (SI, 0.0, 0.0, None)
    assert render_decision(d)[0].endswith("played 打 肆, the best by win chance and by score")


def test_accuracy_classes_and_the_costliest_read_one_measure() -> None:
    """A decision that gave up score but no winning chance (the dashboard's "accuracy 100.0
    · 0 blunders" above a costliest decision at −0.69) is not costly; one that gave up win
    chance is, the accuracy below 100 says so, and the list names its measure."""
    PASS, PENG = 0, 2
    no_win_lost = judge(5, 0, "CLAIM_TAKE", PASS, _values({
        PASS: ([0, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0]),
        PENG: ([1, 1, 1, 1, 1, 1, 1, 0], [1, 0, 0, 0, 0, 0, 0, 0]),
    }))  # fmt: skip
    assert no_win_lost.score_loss > 0.5 and no_win_lost.win_loss == 0
    hand = HandReview("run t hand 0", (0,), 8, "heuristic", 0, "fast", (no_win_lost,))
    s = hand.summary()["all"]
    assert (s["accuracy"], s["blunder"], s["costliest"]) == (100.0, 0, [])
    assert "win chance" in render_summary(hand)[0] and "costliest none" in render_summary(hand)[0]
    lost = dataclasses.replace(_two_bests(), seat=0)
    hand = dataclasses.replace(hand, decisions=(no_win_lost, lost))
    s = hand.summary()["all"]
    assert s["costliest"] == [14] and s["accuracy"] < 100 and s["blunder"] == 1
    assert hand.to_dict()["summary"]["all"]["measure"] == "win_loss"
    assert "costliest step 14 (−50.0 pts)" in render_summary(hand)[0], render_summary(hand)


def test_an_accuracy_below_100_is_never_shown_as_100() -> None:
    """One win in 4,096 rollouts given up among 30 decisions: a mean accuracy of 99.996."""
    n = 4096
    lost = judge(9, 0, "CLAIM_TAKE", 0, _values({
        0: ([0] * n, [0] * n), 2: ([0] * (n - 1) + [1], [0] * (n - 1) + [1]),
    }))  # fmt: skip
    none = [dataclasses.replace(lost, step=k, played=2, best=2, best_win=2, score_loss=0.0,
                                win_loss=0.0) for k in range(10, 39)]  # fmt: skip
    hand = HandReview("run t hand 0", (0,), n, "heuristic", 0, "fast", (lost, *none))
    assert hand.summary()["all"]["accuracy"] > 99.95
    assert "accuracy 99.9," in render_summary(hand)[0], render_summary(hand)


def test_the_review_command_names_the_best_its_loss_is_measured_against(store: Path) -> None:
    """Every decision of a recorded hand, in JSON and text: ``best`` has the highest mean
    score and ``score_loss`` is its gain; ``best_win`` the highest win chance and
    ``win_loss`` its gain; the text line names them with those losses; the costliest steps
    lost winning chance."""
    args = ["review", "m", "1", "-N", "16", "-q", "--no-store", "--data", str(store)]
    r = CliRunner().invoke(main, [*args, "-f", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    text = CliRunner().invoke(main, args).stdout
    heads = {int(x.split(" ")[0]): x for x in text.split("\nstep ")[1:]}
    for d in doc["decisions"]:
        by = {o["action"]: o for o in d["options"]}
        top_score = max(o["score"]["mean"] for o in d["options"])
        top_win = max(o["win_pct"]["mean"] for o in d["options"])
        assert by[d["best"]]["score"]["mean"] == top_score
        assert by[d["best_win"]]["win_pct"]["mean"] == top_win
        assert by[d["best"]]["gain"]["score"]["mean"] == d["score_loss"]
        assert abs(by[d["best_win"]]["gain"]["win_pct"]["mean"] - d["win_loss"]) < 1e-9
        head = heads[d["step"]].split("\n")[0]
        if d["best"] == d["best_win"] == d["played"]:
            assert "the best by win chance and by score" in head
        elif d["best"] == d["best_win"]:
            assert f"best {action_str(d['best'])}: −{d['win_loss']:.1f} ±" in head, head
        else:
            for name, key, loss in (("win chance", "best_win", f"{d['win_loss']:.1f}"),
                                    ("score", "best", f"{d['score_loss']:.2f}")):  # fmt: skip
                named = action_str(d[key])
                assert (f"the best by {name}" if d[key] == d["played"]
                        else f"by {name} best {named}, −{loss} ±") in head, head  # fmt: skip
    steps = {d["step"]: d for d in doc["decisions"]}
    s = doc["summary"]["all"]
    assert s["measure"] == "win_loss" and s["costliest"]
    assert all(steps[k]["win_loss"] > 0 for k in s["costliest"])
    worst = sorted(doc["decisions"], key=lambda d: (-d["win_loss"], d["step"]))[:3]
    assert s["costliest"] == [d["step"] for d in worst if d["win_loss"] > 0]
