"""``paohuzi stats`` of a run of imported hands whose hands carry policies (issue 40): it
has per-policy rows, as ``stats --events`` has, equal to a plain SQL count over the run's
hands files, from its summaries and from its hands alike."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from catalog_helpers import ok_output

from replay.store.layout import run_dir


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run ``imp``: 12 hands of a simulated run (heuristic, random, random) and 4 whose
    replay files name no policy (their seats play "import")."""
    tmp = tmp_path_factory.mktemp("imported_policies")
    d = tmp / "data"
    ok_output(["simulate", "--data", str(d), "--run", "s", "-n", "30", "--seed", "7", "-w", "1",
               "-q", "-p", "heuristic,random,random"])  # fmt: skip
    lines = []
    for hand in range(16):
        doc = json.loads(ok_output(["export", "s", str(hand), "--data", str(d), "-f", "json"]))
        if hand >= 12:
            doc["policies"] = None
        lines.append(json.dumps(doc, ensure_ascii=False))
    batch = tmp / "hands.jsonl"
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ok_output(["import", "--jsonl", str(batch), "--data", str(d), "--run", "imp"])
    return d


def _sql_policy_rows(data: Path) -> dict[str, tuple[int, int, float]]:
    """Per policy: wins, seat-hands and the mean score change per seat-hand, counted
    straight from the run's hands files."""
    files = str(run_dir(data, "imp") / "hands" / "*.parquet")
    seats = " UNION ALL ".join(
        f"SELECT policy_{s} AS policy, winner = {s} AS won, delta_{s} AS delta"
        f" FROM read_parquet('{files}') WHERE policy_{s} IS NOT NULL"
        for s in range(4)
    )
    rows = duckdb.sql(
        "SELECT policy, count(*) FILTER (WHERE won) AS k, count(*) AS n, avg(delta) AS mean"
        f" FROM ({seats}) GROUP BY policy"
    ).fetchall()
    return {p: (k, n, mean) for p, k, n, mean in rows}


@pytest.mark.parametrize("summaries", ["1", "0"])
def test_imported_run_has_policy_rows_bug(data: Path, summaries: str) -> None:
    # stats listed seats and dealer only for a run of imported hands: its manifest lists no
    # policies, while its hands (and stats --events) carry them
    expected = _sql_policy_rows(data)
    assert set(expected) == {"heuristic", "random", "import"}
    env = {"PAOHUZI_SUMMARY": summaries}
    out = ok_output(["stats", "imp", "--data", str(data), "--json"], env=env)
    (run,) = json.loads(out)["runs"]
    got = {r["key"]: (r["win"]["k"], r["win"]["n"], r["score"]["mean"]) for r in run["policy"]}
    assert set(got) == set(expected)
    for policy, (k, n, mean) in expected.items():
        assert got[policy][:2] == (k, n), policy
        assert got[policy][2] == pytest.approx(mean, rel=1e-12), policy
    text = ok_output(["stats", "imp", "--data", str(data)], env=env)
    # the header named them "?": the policies the hands carry
    assert " · policies heuristic,import,random · " in text.splitlines()[0]
    assert [line.split()[1] for line in text.splitlines() if line.startswith("  policy ")] == [
        "heuristic",
        "import",
        "random",
    ]
    events = ok_output(["stats", "imp", "--data", str(data), "--events", "--json"], env=env)
    (ev,) = json.loads(events)["runs"]
    assert {r["policy"] for r in ev["forced"]} == set(expected)


def test_imported_run_of_one_policy_has_no_policy_rows(data: Path, tmp_path: Path) -> None:
    # as for a simulated run of one policy: one policy row would repeat the totals
    d = tmp_path / "data"
    hand = tmp_path / "h.json"
    doc = json.loads(ok_output(["export", "s", "0", "--data", str(data), "-f", "json"]))
    hand.write_text(json.dumps(dict(doc, policies=None)), encoding="utf-8")  # all "import"
    ok_output(["import", str(hand), "--data", str(d), "--run", "one"])
    for summaries in ("1", "0"):
        out = ok_output(["stats", "one", "--data", str(d), "--json"],
                        env={"PAOHUZI_SUMMARY": summaries})  # fmt: skip
        (run,) = json.loads(out)["runs"]
        assert run["policy"] == [], summaries


def test_the_per_hand_moments_of_imported_hands_come_from_the_hands(data: Path) -> None:
    """Imported hands keep the deal ids of the run they were played in, while the summaries
    count each hand apart: the Reference page's per-hand figures of such a run are read from
    its hands (effects.moments_plan gives no summary plan), those of a simulated run from
    the summaries."""
    from replay.analysis.figures import effects
    from replay.store.scan import scan_store

    state = scan_store(data)
    assert state.run("imp") is not None and state.run("imp").policy_classes
    assert effects.moments_plan(state, ("imp",)) is None
    assert effects.moments_plan(state, ("s",)) is not None
    assert effects.moments_plan(state, ("s", "imp")) is None
