"""``paohuzi stats --events`` (replay.analysis.event_stats, issue 24 first step): every figure
the SQL of replay.analysis.figures.events gives equals the same figure counted in plain Python
over the raw ``events`` and ``hands`` tables of each run — 3 players, --duplicate, 4 players,
Luzhou, ``--set min_huxi=10`` — and the command prints it (text, JSON) or one error line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.actions import ActionKind
from paohuzi.cli.main import main
from replay.analysis.event_stats import KIND_NAMES, event_stats
from replay.analysis.intervals import ClusterSums, cluster_mean_ci
from replay.replayer.hand import load_hand, replay_hand
from replay.store import open_store

RUNS = [
    ("three", ["-n", "60", "--seed", "41", "-p", "heuristic,random,greedy"]),
    ("dup", ["-n", "20", "--seed", "42", "-p", "greedy,random,heuristic", "--duplicate"]),
    ("four", ["-n", "40", "--seed", "43", "--rules", "hunan-4p", "-p", "greedy"]),
    ("luzhou", ["-n", "40", "--seed", "44", "--rules", "luzhou", "-p", "heuristic"]),
    ("min10", ["-n", "40", "--seed", "45", "--set", "min_huxi=10", "-p", "random"]),
]
PASS, HU, PENG, TI, PAO = (int(k) for k in (ActionKind.PASS, ActionKind.HU, ActionKind.PENG,
                                            ActionKind.TI, ActionKind.PAO))  # fmt: skip
OFFERED = {"胡": int(ActionKind.HU), "碰": int(ActionKind.PENG), "吃": int(ActionKind.CHI)}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("events") / "data"
    for name, args in RUNS:
        r = CliRunner().invoke(main, ["simulate", "--data", str(d), "--run", name, "-q", "-w",
                                      "1", *args])  # fmt: skip
        assert r.exit_code == 0, r.output
    return d


def _python(run, store: Path) -> dict:  # type: ignore[no-untyped-def]
    """The figures counted row by row from the run's tables."""
    hands = run.read_table("hands").to_pylist()
    events = run.read_table("events").to_pylist()
    dup = bool(run.manifest["params"].get("duplicate"))
    cluster = {h["hand_id"]: h["deal_id"] if dup else h["hand_id"] for h in hands}
    by_hand = {h["hand_id"]: h for h in hands}

    def policy(e: dict) -> str:
        return by_hand[e["hand_id"]][f"policy_{e['seat']}"]

    out: dict = {"hands": len(hands), "clusters": len(set(cluster.values()))}
    per_hand: dict[int, list[dict]] = {h["hand_id"]: [] for h in hands}
    for e in events:
        per_hand[e["hand_id"]].append(e)
    out["decisions"] = Counter(len(v) for v in per_hand.values())
    choice = [e for e in events if e["n_legal"] >= 2]

    def declined(e: dict, bit: int) -> bool:
        return e["kind"] == PASS and (e["options"] >> bit) & 1 == 1 and e["n_legal"] >= 2

    out["chouhu"] = sum(any(declined(e, HU) for e in v) for v in per_hand.values())
    out["renpeng"] = sum(any(declined(e, PENG) for e in v) for v in per_hand.values())
    out["bakuai"] = sum(
        any(c >= 2 for c in Counter(e["seat"] for e in v if e["kind"] in (TI, PAO)).values())
        for v in per_hand.values()
    )
    out["declines"] = {}
    for name, bit in OFFERED.items():
        for e in choice:
            if (e["options"] >> bit) & 1:
                k, n, cs = out["declines"].setdefault((policy(e), name), [0, 0, set()])
                out["declines"][(policy(e), name)][0] += e["kind"] == PASS
                out["declines"][(policy(e), name)][1] += 1
                cs.add(cluster[e["hand_id"]])
    out["forced"] = Counter()
    out["events"] = Counter()
    for e in events:
        out["events"][policy(e)] += 1
        out["forced"][policy(e)] += bool(e["forced"])
    seat_hands: Counter = Counter()
    for h in hands:
        four = h["policy_3"] is not None
        for s in range(4):
            if h[f"policy_{s}"] is not None and not (four and (h["dealer"] + 2) % 4 == s):
                seat_hands[h[f"policy_{s}"]] += 1
    out["actions"] = Counter((policy(e), KIND_NAMES[e["kind"]], bool(e["forced"])) for e in events)
    out["seat_hands"] = seat_hands
    out["options"] = Counter(
        (policy(e), e["n_legal"]) for e in events if e["n_legal"] >= 2 and not e["forced"]
    )
    # hand length: decisions are the hand's events; draws are counted by the reference
    # engine replaying the hand (State.n_draws), not from stock_left
    draws = {h["hand_id"]: replay_hand(load_hand(store, run.name, h["hand_id"])).n_draws
             for h in hands}  # fmt: skip
    by_cluster: dict[int, list[int]] = {}
    for h in hands:
        by_cluster.setdefault(cluster[h["hand_id"]], []).append(h["hand_id"])
    for what, per in (("decisions", {k: len(v) for k, v in per_hand.items()}), ("draws", draws)):
        out[f"{what}_sums"] = ClusterSums.of([per[i] for i in g] for g in by_cluster.values())
    out["win_stock"] = Counter(h["stock_left"] for h in hands if h["outcome"] != 1)
    out["huang"] = sum(h["outcome"] == 1 for h in hands)
    return out


@pytest.mark.parametrize("name", [n for n, _ in RUNS])
def test_every_figure_equals_a_count_over_the_raw_tables(store: Path, name: str) -> None:
    st = open_store(store)
    (s,) = event_stats(st, [name])
    want = _python(st.run(name), store)
    assert (s.hands, s.clusters) == (want["hands"], want["clusters"])
    assert dict(zip(s.decisions["values"], s.decisions["counts"])) == dict(want["decisions"])
    assert (s.chouhu.k, s.renpeng.k, s.bakuai.k) == (want["chouhu"], want["renpeng"],
                                                     want["bakuai"])  # fmt: skip
    assert s.chouhu.n == want["hands"]
    for what, m in (("decisions", s.decisions_per_hand), ("draws", s.draws_per_hand)):
        assert m is not None
        mean, lo, hi = cluster_mean_ci(want[f"{what}_sums"])
        assert (m.n, m.mean, m.lo, m.hi) == pytest.approx((want["hands"], mean, lo, hi)), what
        assert m.lo < m.mean < m.hi
    got = {(d.policy, d.offered): (d.declined.k, d.declined.n) for d in s.declines}
    assert got == {k: (v[0], v[1]) for k, v in want["declines"].items()}
    assert {f.policy: (f.rate.k, f.rate.n) for f in s.forced} == {
        p: (want["forced"][p], want["events"][p]) for p in want["events"]
    }
    assert {(a.policy, a.kind, a.forced): a.events for a in s.actions} == dict(want["actions"])
    for a in s.actions:  # the mean per seat-hand is events over the policy's seat-hands
        assert a.per_seat_hand.mean == pytest.approx(a.events / want["seat_hands"][a.policy])
    got_opts = {(o.policy, v): c for o in s.options for v, c in zip(o.values, o.counts)}
    assert got_opts == dict(want["options"])
    ws = s.win_stock
    assert dict(zip(ws["values"], ws["counts"])) == dict(want["win_stock"])
    assert ws["huang"] == want["huang"]


def test_the_command_prints_text_and_json(store: Path) -> None:
    r = CliRunner().invoke(main, ["stats", "--events", "--data", str(store), "dup"])
    assert r.exit_code == 0, r.output
    assert "臭胡" in r.output and "declined when offered" in r.output and "win timing" in r.output
    assert "hand length:" in r.output and "draws from the stock" in r.output
    r = CliRunner().invoke(main, ["stats", "--events", "--json", "--data", str(store)])
    assert r.exit_code == 0, r.output
    runs = json.loads(r.stdout)["runs"]
    assert [x["run"] for x in runs] == sorted(n for n, _ in RUNS)
    assert {"k", "n", "p", "lo", "hi"} <= set(runs[0]["renpeng"])


def test_bad_input_is_one_line(store: Path) -> None:
    r = CliRunner().invoke(main, ["stats", "--events", "--data", str(store), "nope"])
    assert r.exit_code == 2 and r.stderr.startswith("Error: ") and "nope" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
