"""Reviewing many hands (issue 23, replay.review.many and rates): the same rates for any
worker count, the hands drawn by the seed, the rates counted as documented, and bad
selections one error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.errors import InvalidNotation
from paohuzi.cli.main import main
from replay.analysis.review_rates import DecisionRow, rates
from replay.review.many import parse_ids, sample_ids


def _review(store: Path, *args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["review", "m", "--data", str(store), "-q", *args])
    return r.exit_code, r.stdout, r.stderr


def test_the_same_rates_for_any_worker_count(store: Path) -> None:
    args = ("--sample", "2", "-N", "2", "--rollout-policy", "greedy", "--format", "json")
    code, one, err = _review(store, *args, "-w", "1")
    assert code == 0, err
    code, two, err = _review(store, *args, "-w", "2")
    assert code == 0, err
    assert one == two
    doc = json.loads(one)
    assert len(doc["hands"]) == 2 and set(doc["hands"]) <= set(range(6))
    kinds = {(r["policy"], r["kind"]) for r in doc["rates"]}
    assert {("heuristic", "all"), ("random", "all"), ("greedy", "all")} <= kinds
    total = sum(r["decisions"] for r in doc["rates"] if r["kind"] == "all")
    assert total == sum(s["decisions"] for s in doc["hand_summaries"].values())
    code, text, err = _review(store, "--hands", "0-1", "-N", "2")
    assert code == 0, err
    assert text.startswith("review of run m: 2 hands, 2 rollouts") and "blunders" in text


def test_hands_are_drawn_by_the_seed_from_the_run() -> None:
    ranges = [(0, 9), (20, 24)]
    a = sample_ids(ranges, 5, seed=1)
    assert a == sample_ids(ranges, 5, seed=1) and a != sample_ids(ranges, 5, seed=2)
    assert len(set(a)) == 5 and all(0 <= x <= 9 or 20 <= x <= 24 for x in a)
    assert sample_ids(ranges, 50, seed=1) == [*range(10), *range(20, 25)]
    assert parse_ids("4,1-2, 2") == [1, 2, 4]
    for bad in ("x", "3-1", "-2", "1,,2"):
        with pytest.raises(InvalidNotation, match="--hands"):
            parse_ids(bad)


def test_rates_count_the_classes_per_policy_and_kind() -> None:
    rows = [
        DecisionRow(0, 1, 0, "p", "discard", "blunder", 2.0, 20.0, False),
        DecisionRow(0, 4, 0, "p", "discard", None, 0.0, 0.0, True),
        DecisionRow(1, 2, 0, "p", "碰", "mistake", 1.0, 11.0, False),
        DecisionRow(1, 3, 1, "q", "pass", None, 0.0, 0.0, True),
    ]
    got = {(r.policy, r.kind): r for r in rates(rows)}
    assert list(got) == [("p", "discard"), ("p", "碰"), ("p", "all"), ("q", "pass"), ("q", "all")]
    d = got[("p", "discard")]
    assert (d.decisions, d.hands, d.blunder.k, d.best.k, d.score_loss.mean) == (2, 1, 1, 1, 1.0)
    a = got[("p", "all")]
    assert (a.decisions, a.hands, a.blunder.k, a.mistake.k, a.inaccuracy.k) == (3, 2, 1, 1, 0)
    assert 0 < a.blunder.lo < 1 / 3 < a.blunder.hi < 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("0", "--sample", "2"), "give one of HAND, --hands IDS or --sample K"),
        ((), "give one of HAND, --hands IDS or --sample K"),
        (("--hands", "2,99"), "run m has no hand 99"),
        (("--hands", "a-b"), "'a-b' is no hand id or range"),
        (("--sample", "0"), "0 is not in the range 1<=x<=100000"),
        (("--sample", "2", "--seat", "5"), "seat 5 out of range"),
    ],
)
def test_bad_selection_is_one_error_line(store: Path, args: tuple[str, ...], message: str) -> None:
    code, _, err = _review(store, *args)
    assert code == 2 and err.startswith("Error: ") and err.count("\n") == 1, err
    assert message in err, err
