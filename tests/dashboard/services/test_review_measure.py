"""The dashboard's review speaks the review's one language (issue 60): its summary line, its
costliest decisions and its graph read the winning chance given up — no "accuracy 100.0 · 0
blunders" above a decision listed at −0.69 — the list says what it ranks by, each option
chart marks its own measure's best, and the graph's step axis ticks whole steps."""

from __future__ import annotations

from typing import Any

from dashboard import charts
from dashboard.services import review as rv
from engine.judge import HandReview, judge
from engine.search import option_values

PASS, PENG, THREE, FIVE, SI = 0, 2, 12, 14, 23


def _values(cols: dict[int, tuple[list[int], list[int]]]):  # type: ignore[no-untyped-def]
    return option_values(
        list(cols),
        [([float(x) for x in d], [float(x) for x in w], [0.0] * len(d), []) for d, w in
         cols.values()],
    )  # fmt: skip


#: 碰 scores 0.875 more than the 过 played, and wins no more often.
SCORE_ONLY = judge(5, 0, "CLAIM_TAKE", PASS, _values({
    PASS: ([0, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0]),
    PENG: ([1, 1, 1, 1, 1, 1, 1, 0], [1, 0, 0, 0, 0, 0, 0, 0]),
}))  # fmt: skip
#: 打 三 played; 打 五 the likeliest to win, 打 肆 the best score.
TWO_BESTS = judge(14, 0, "DISCARD", THREE, _values({
    THREE: ([0, 0, -1, 0, -2, 0, -1, 0], [0, 0, 0, 0, 0, 0, 0, 1]),
    FIVE: ([1, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0, 0, 1]),
    SI: ([6, 0, 0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0, 0, 1]),
}))  # fmt: skip


def _hand(*ds: Any) -> HandReview:
    return HandReview("run t hand 0", (0,), 8, "heuristic", 0, "stored", tuple(ds), len(ds))


def test_no_costliest_decision_beside_a_perfect_accuracy() -> None:
    hand = _hand(SCORE_ONLY)
    line = rv.summary_line(hand)
    assert "by win chance: accuracy 100.0, 0 blunders" in line, line
    assert rv.costliest(hand) == []
    hand = _hand(SCORE_ONLY, TWO_BESTS)
    (d,) = rv.costliest(hand)
    assert d["step"] == 14 and d["win_loss"] == 50.0 and d["class"] == "blunder"
    assert d["verdict"].startswith("played 打 三 · by win chance best 打 五, −50.0 pts ·"
                                   " by score best 打 肆, −1.38")  # fmt: skip
    assert "accuracy 100.0" not in rv.summary_line(hand) and "1 blunder," in rv.summary_line(hand)
    assert "win chance" in rv.COSTLIEST_HEADING


def test_the_graph_and_the_bars_name_each_measures_best() -> None:
    hand = _hand(SCORE_ONLY, TWO_BESTS)
    curve = rv.curve_frame(hand).set_index("step")
    assert (curve.loc[14, "best_win"], curve.loc[14, "lost"]) == ("打 五", 50.0)
    assert (curve.loc[14, "best"], curve.loc[14, "score_loss"]) == ("打 肆", 1.38)
    bars = rv.options_frame(hand, 14)
    assert bars is not None
    marks = {r.option: (r.mark_win, r.mark_score, r.mark) for r in bars.itertuples()}
    assert marks == {
        "打 五": ("best", "other", "best by win chance"),
        "打 肆": ("other", "best", "best by score"),
        "打 三": ("played", "played", "played"),
    }


def test_the_step_axis_ticks_whole_steps_and_the_specs_are_valid() -> None:
    from altair.utils.schemapi import validate_jsonschema
    from altair.vegalite.v6.schema import core

    spec = charts.win_curve(40)
    for layer in spec["layer"]:
        assert layer["encoding"]["x"]["axis"] == {"tickMinStep": 1, "format": "d"}
    hand = _hand(SCORE_ONLY, TWO_BESTS)
    schema = dict(core.load_schema())
    curve = rv.curve_frame(hand).to_dict("records")
    validate_jsonschema({**spec, "data": {"values": curve}}, schema)
    bars = rv.options_frame(hand, 14)
    assert bars is not None
    for value in ("win", "score"):
        bar = charts.option_bars(value, value)
        assert bar["layer"][0]["encoding"]["color"]["field"] == f"mark_{value}"
        validate_jsonschema({**bar, "data": {"values": bars.to_dict("records")}}, schema)
