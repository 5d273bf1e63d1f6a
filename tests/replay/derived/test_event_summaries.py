"""The event figures (replay.analysis.figures.events) from the per-shard event summaries equal
the same figures by SQL over the raw ``events`` table — one layer, two sources — on 3-player,
--duplicate, 4-player, Luzhou and ``--set min_huxi=10`` runs of several shards, for every
selection of seats and policies; the paired differences of a --duplicate run equal a plain
Python count; a run summarised by an older version reads its events until ``paohuzi index``
rebuilds its summaries, and verifies all along."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from catalog_helpers import assert_close, ok_output

from replay.analysis.event_stats import KIND_NAMES, EventStats, summarize_events
from replay.store import open_store
from replay.store import summary_schema as summary
from replay.store.scan import scan_store

RUNS = [
    ("three", ["-n", "90", "--seed", "51", "-p", "heuristic,random,greedy"]),
    ("dup", ["-n", "30", "--seed", "52", "-p", "greedy,random,heuristic", "--duplicate"]),
    ("four", ["-n", "60", "--seed", "53", "--rules", "hunan-4p", "-p", "greedy,random"]),
    ("luzhou", ["-n", "60", "--seed", "54", "--rules", "luzhou", "-p", "heuristic"]),
    ("min10", ["-n", "60", "--seed", "55", "--set", "min_huxi=10", "-p", "random"]),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("event-summaries") / "data"
    for name, args in RUNS:
        if name == "four":  # 4 seats, 2 policies
            args = [a if a != "greedy,random" else "greedy,random,random,greedy" for a in args]
        ok_output(["simulate", "--data", str(d), "--run", name, "-q", "-w", "1",
              "--shard-hands", "24", *args])  # fmt: skip
    return d


def _both(store: Path, run: str, seats: tuple[int, ...], policies: tuple[str, ...]) -> tuple[EventStats, EventStats]:  # fmt: skip
    st = open_store(store)
    state = scan_store(store)
    con = st.connect(state)
    try:
        fast = summarize_events(con, run, seats, policies, state)
        raw = summarize_events(con, run, seats, policies)
    finally:
        con.close()
    return fast, raw


def _selections(run: Any) -> list[tuple[tuple[int, ...], tuple[str, ...]]]:
    players = int(run.manifest["rules"]["players"])
    pols = sorted(set(run.manifest["params"]["policies"]))
    out: list[tuple[tuple[int, ...], tuple[str, ...]]] = [((), ()), ((1,), ()), ((0, 2), ())]
    out += [((), (p,)) for p in pols]
    out += [((players - 1,), (pols[0],)), ((0, 1), tuple(pols[:2]))]
    return out


@pytest.mark.parametrize("name", [r[0] for r in RUNS])
def test_summaries_equal_raw_events(store: Path, name: str) -> None:
    run = open_store(store).run(name)
    assert all(summary.has_summary(s) for s in run.shards) and len(run.shards) > 1
    for seats, policies in _selections(run):
        fast, raw = _both(store, name, seats, policies)
        assert (fast.source, raw.source) == ("summaries", "events")
        a, b = fast.to_dict(), raw.to_dict()
        a.pop("source"), b.pop("source")
        assert_close(a, b, f"{name} seats={seats} policies={policies}")
        if not seats and not policies:
            assert a["hands"] == sum(s["hands"] for s in run.shards)
            assert a["actions"] and a["declines"] and a["options"]


def test_paired_equals_plain_python(store: Path) -> None:
    """Per pair of policies and kind: the mean over the deals of (events per seat-hand of
    a) − (events per seat-hand of b), counted row by row."""
    run = open_store(store).run("dup")
    hands = run.read_table("hands").to_pylist()
    events = run.read_table("events").to_pylist()
    by_hand = {h["hand_id"]: h for h in hands}
    m: dict[tuple[int, str], int] = defaultdict(int)  # (deal, policy) → seat-hands
    for h in hands:
        for s in range(3):
            m[(h["deal_id"], h[f"policy_{s}"])] += 1
    y: dict[tuple[int, str, int, bool], int] = defaultdict(int)
    for e in events:
        h = by_hand[e["hand_id"]]
        y[(h["deal_id"], h[f"policy_{e['seat']}"], e["kind"], e["forced"])] += 1
    deals = sorted({h["deal_id"] for h in hands})
    kinds = sorted({(k, f) for _, _, k, f in y})
    fast, raw = _both(store, "dup", (), ())
    got = {(r.a, r.b, r.kind, r.forced): r for r in fast.paired}
    assert got and len(got) == len(raw.paired)
    for a, b in (("greedy", "heuristic"), ("greedy", "random"), ("heuristic", "random")):
        for k, f in kinds:
            diffs = [y[(d, a, k, f)] / m[(d, a)] - y[(d, b, k, f)] / m[(d, b)] for d in deals]
            row = got.get((a, b, KIND_NAMES[k], f))
            if row is None:
                assert not any(diffs)
                continue
            assert row.deals == len(deals)
            assert math.isclose(row.diff.mean, sum(diffs) / len(diffs), abs_tol=1e-12)
            assert row.diff.lo < row.diff.mean < row.diff.hi or not any(diffs)


def test_an_older_summary_reads_the_events_until_index(store: Path, tmp_path: Path) -> None:
    """A run whose summaries are of an older version (recorded before the event kinds) is
    read from its events, verifies, and after ``paohuzi index`` (which rebuilds them) gives
    the same figures from its summaries."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(store, data)
    mpath = data / "runs" / "run=three" / "manifest.json"
    doc = json.loads(mpath.read_text())
    for s in doc["shards"]:
        s["files"]["summary"]["version"] = summary.SUMMARY_VERSION - 1
    mpath.write_text(json.dumps(doc))
    assert not summary.summarized(scan_store(data).run("three"))
    before, raw = _both(data, "three", (), ())
    assert before.source == "events"
    ok_output(["verify", "--data", str(data), "three"])
    out = ok_output(["index", "--data", str(data), "three"])
    assert "4 shard(s) summarised" in out
    assert summary.summarized(scan_store(data).run("three"))
    after, _ = _both(data, "three", (), ())
    assert after.source == "summaries"
    a, b = after.to_dict(), before.to_dict()
    a.pop("source"), b.pop("source")
    assert_close(a, b)
    ok_output(["verify", "--data", str(data), "three"])


def test_stats_events_json_is_the_same_from_either_source(store: Path) -> None:
    fast = json.loads(ok_output(["stats", "--events", "--data", str(store), "--json"]))
    raw = json.loads(
        ok_output(
            ["stats", "--events", "--data", str(store), "--json"], env={"PAOHUZI_SUMMARY": "0"}
        )
    )
    for r in fast["runs"] if isinstance(fast, dict) else fast:
        assert r.pop("source") == "summaries"
    for r in raw["runs"] if isinstance(raw, dict) else raw:
        assert r.pop("source") == "events"
    assert_close(fast, raw)


def test_an_impossible_event_is_refused_before_counting(store: Path) -> None:
    """The compiled count does not check its indices: an event with a seat or kind the run
    cannot have (a shard rewritten by hand) is refused with a ValueError first."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from replay.derived.summarize_events import summarize_events

    run = open_store(store).run("three")
    shard = run.shards[0]
    hands, events = run.read_shard(shard, "hands"), run.read_shard(shard, "events")
    shape = {"rules": run.manifest["rules"], "params": run.manifest["params"]}
    assert summarize_events(hands, events, shape)["ev_actions"].num_rows
    for col, bad in (("seat", 3), ("kind", 200)):
        i = events.schema.get_field_index(col)
        f = events.schema.field(i)
        t = events.set_column(i, f, pc.add(events[col], pa.scalar(bad, f.type)).cast(f.type))
        with pytest.raises(ValueError, match="seat or an action kind"):
            summarize_events(hands, t, shape)


@pytest.mark.parametrize("name", ["dup", "four"])
def test_events_in_any_row_order_give_the_same_summaries(store: Path, name: str) -> None:
    """The compiled pass reads a hand's events from its rows in hand order; events stored
    in another order (or not ``n_events`` rows a hand) are found by their hand ids, and give
    the same rows; an event of a hand the shard does not hold is refused."""
    import numpy as np
    import pyarrow as pa

    from engine.rules import RuleSet
    from replay.derived.facts import shard_facts
    from replay.derived.summarize_events import summarize_events

    run = open_store(store).run(name)
    shard = run.shards[0]
    hands, events = run.read_shard(shard, "hands"), run.read_shard(shard, "events")
    shape = {"rules": run.manifest["rules"], "params": run.manifest["params"]}
    facts = shard_facts(hands, events, RuleSet.from_dict(shape["rules"]))  # by replay, in order
    want = summarize_events(hands, events, shape, facts=facts)
    shuffled = events.take(np.random.default_rng(7).permutation(events.num_rows))
    got = summarize_events(hands, shuffled, shape, facts=facts)
    assert set(got) == set(want)
    for kind, table in want.items():
        assert got[kind].equals(table), kind
    i = events.schema.get_field_index("hand_id")
    ids = events["hand_id"].to_numpy().copy()
    ids[-1] = ids.max() + 1000
    stray = events.set_column(i, events.schema.field(i), pa.array(ids, events["hand_id"].type))
    with pytest.raises(ValueError, match="not in the shard"):
        summarize_events(hands, stray, shape, facts=facts)
