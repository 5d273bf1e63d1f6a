"""Stored reviews (replay.store.reviews, docs/LOG_FORMAT.md §11): a review asked again is read,
equal to a fresh one; other parameters are stored beside; seats reviewed before are reused;
a damaged review file is named, left out and computed again; ``verify`` checks them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store import reviews as S


@pytest.fixture
def data(store: Path, tmp_path: Path) -> Path:
    """A copy of the review tests' store (run m, six hands): these tests write into it."""
    d = tmp_path / "d"
    shutil.copytree(store, d)
    return d


def review(data: Path, *args: str) -> dict:
    r = CliRunner().invoke(main, ["review", "m", *args, "--data", str(data), "-N", "6", "-q",
                                  "--format", "json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def manifest(data: Path) -> dict:
    return json.loads((data / "runs" / "run=m" / "manifest.json").read_text(encoding="utf-8"))


def decisions(doc: dict) -> list:
    return doc["decisions"]


def test_second_review_is_read_and_equals_a_fresh_one(data: Path) -> None:
    first = review(data, "2")
    assert first["stored_decisions"] == 0
    (entry,) = manifest(data)["reviews"]
    assert entry["hands"] == [[2, 2, 7]] and entry["rollouts"] == 6 and entry["seed"] == 0
    assert entry["rows"] == sum(len(d["options"]) for d in decisions(first))
    again = review(data, "2")
    assert again["stored_decisions"] == len(decisions(first)) > 0
    assert decisions(again) == decisions(first) and again["summary"] == first["summary"]
    fresh = review(data, "2", "--no-store")
    assert fresh["stored_decisions"] == 0 and decisions(fresh) == decisions(first)
    assert len(manifest(data)["reviews"]) == 1  # nothing stored twice


def test_other_parameters_are_stored_beside(data: Path) -> None:
    a = review(data, "1")
    b = review(data, "1", "--seed", "5")
    c = review(data, "1", "--rollout-policy", "random")
    keys = [(e["seed"], e["rollout_policy"]) for e in manifest(data)["reviews"]]
    assert keys == [(0, "heuristic"), (5, "heuristic"), (0, "random")]
    assert decisions(b) != decisions(a)
    for args, doc in (((), a), (("--seed", "5"), b), (("--rollout-policy", "random"), c)):
        again = review(data, "1", *args)
        assert again["stored_decisions"] == len(decisions(doc))
        assert decisions(again) == decisions(doc)


def test_seats_reviewed_before_are_reused(data: Path) -> None:
    one = review(data, "3", "--seat", "1")
    both = review(data, "3")
    assert both["stored_decisions"] == len(decisions(one)) > 0
    assert decisions(both) == decisions(review(data, "3", "--no-store"))
    ranges = [e["hands"] for e in manifest(data)["reviews"]]
    assert ranges == [[[3, 3, 2]], [[3, 3, 5]]]  # seat 1, then seats 0 and 2


def test_many_hands_read_what_is_stored(data: Path) -> None:
    first = review(data, "--hands", "0-3", "-w", "2")
    again = review(data, "--hands", "0-3", "-w", "1")
    assert again["rates"] == first["rates"]
    assert again["hand_summaries"] == first["hand_summaries"]
    assert [e["hands"] for e in manifest(data)["reviews"]] == [[[0, 3, 7]]]
    single = review(data, "2")
    assert single["stored_decisions"] == len(decisions(single))


def test_stats_reports_the_stored_rates(data: Path) -> None:
    """``paohuzi stats`` gives, per key, the rates ``review --hands`` printed for the same
    decisions (one place computes them: replay.analysis.review_rates)."""
    many = review(data, "--hands", "0-5")
    review(data, "1", "--seed", "3")  # another key: its own table
    r = CliRunner().invoke(main, ["stats", "m", "--data", str(data), "--json"])
    assert r.exit_code == 0, r.output
    (first, other) = json.loads(r.stdout)["runs"][0]["reviews"]
    assert (first["rollouts"], first["seed"], first["hands"]) == (6, 0, 6)
    assert first["rates"] == many["rates"]
    assert other["seed"] == 3 and other["hands"] == 1
    text = CliRunner().invoke(main, ["stats", "m", "--data", str(data)]).output
    assert "stored review of run m: 6 hands, 6 rollouts per decision by heuristic" in text


def test_damaged_review_file_is_named_left_out_and_computed_again(data: Path) -> None:
    first = review(data, "4")
    part = data / "runs" / "run=m" / "reviews" / "part-00000.parquet"
    raw = bytearray(part.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    part.write_bytes(bytes(raw))
    r = CliRunner().invoke(main, ["verify", "--data", str(data), "-q"])
    assert r.exit_code == 1 and "review shard file reviews/part-00000.parquet" in r.output
    r = CliRunner().invoke(main, ["review", "m", "4", "--data", str(data), "-N", "6", "-q",
                                  "--format", "json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    warning = [x for x in r.stderr.splitlines() if x.startswith("Warning:")]
    assert len(warning) == 1 and "reviews/part-00000.parquet" in warning[0]
    assert "left out" in warning[0]
    doc = json.loads(r.stdout)
    assert doc["stored_decisions"] == 0 and decisions(doc) == decisions(first)
    (entry,) = manifest(data)["reviews"]  # stored anew; the damaged file replaced
    assert entry["path"] == "reviews/part-00001.parquet" and not part.exists()
    assert review(data, "4")["stored_decisions"] == len(decisions(first))
    r = CliRunner().invoke(main, ["verify", "--data", str(data), "-q"])
    assert r.exit_code == 0, r.output
    s = CliRunner().invoke(main, ["stats", "m", "--data", str(data)])
    assert s.exit_code == 0, s.output  # the run's hands are untouched


def test_verify_checks_stored_reviews(data: Path) -> None:
    review(data, "5")
    r = CliRunner().invoke(main, ["verify", "--data", str(data), "-q"])
    assert r.exit_code == 0, r.output
    m = manifest(data)
    m["reviews"][0]["hands"] = [[5, 5, 1]]  # claims seat 0 only; the file holds all three
    (data / "runs" / "run=m" / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    r = CliRunner().invoke(main, ["verify", "--data", str(data), "-q"])
    assert r.exit_code == 1 and "holds hand 5 seat " in r.output and ", not listed" in r.output


def test_a_bad_review_entry_is_one_line(data: Path) -> None:
    review(data, "0")
    m = manifest(data)
    m["reviews"][0]["rollouts"] = "6"
    (data / "runs" / "run=m" / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    r = CliRunner().invoke(main, ["review", "m", "0", "--data", str(data), "-q"])
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "Error: run m: manifest field reviews[0].rollouts: expected an integer, got '6'"
    )


def test_a_run_being_written_is_reviewed_not_stored(data: Path) -> None:
    from replay.store.manifest import RunLock

    with RunLock(data / "runs" / "run=m"):
        r = CliRunner().invoke(main, ["review", "m", "1", "--data", str(data), "-N", "4", "-q"])
    assert r.exit_code == 0, r.output
    assert "Note: the review is not stored" in r.stderr and "being written" in r.stderr
    assert "reviews" not in manifest(data)


def test_rows_round_trip() -> None:
    """What is stored is what is read: every estimate, the paired gains, and the judgement
    made from them."""
    from engine.judge import judge
    from engine.search import option_values

    deltas = {
        3: [1, 0, 2, 5, -1, 0, 3, 2],
        9: [0, 0, 1, 2, -2, 0, 1, 1],
        41: [4, 1, 2, 6, 0, 1, 3, 2],
    }
    wins = {3: [1, 0, 1, 1, 0, 0, 1, 1], 9: [0, 0, 1, 1, 0, 0, 0, 1], 41: [1, 1, 1, 1, 0, 1, 1, 1]}
    vals = option_values(
        [3, 9, 41],
        [([float(x) for x in deltas[a]], [float(x) for x in wins[a]], [0.0] * 8, [])
         for a in (3, 9, 41)],
    )  # fmt: skip
    d = judge(7, 1, "discard", 9, vals)
    table = S.table_of([(12, [d])])
    (got,) = S.decisions_of(table)[(12, 1)]
    assert (
        got.options[0].win_huxi.n == 0
        and got.options[0].win_huxi.mean != got.options[0].win_huxi.mean
    )
    assert (got.step, got.seat, got.played, got.best, got.kind) == (
        d.step,
        d.seat,
        d.played,
        d.best,
        d.kind,
    )
    assert got.score_loss == d.score_loss and got.win_loss == d.win_loss
    assert [v.delta for v in got.options] == [v.delta for v in d.options]
    assert got.gains == d.gains and got.win_loss_ci == d.win_loss_ci
    assert got.score_loss_ci == d.score_loss_ci and d.kind == "blunder"  # 41 wins 4 more of 8
