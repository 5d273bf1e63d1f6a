"""The statistics layer over its two sources: every statement of :mod:`replay.analysis.figures`
gives the same rows from the summary tables as from the hands, and so do the figures shaped
from them (rates, Wilson and cluster-robust intervals, paired differences, quantiles), over
runs of 3 and 4 players, Luzhou, ``--duplicate`` (3 and 4 seats) and ``--set min_huxi=10``,
for many seat and policy selections."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.analysis.figures import drill, effects, groups, huang, outcomes, results, values
from replay.analysis.figures.selection import Plan, Selection, plan
from replay.store import summary_schema as summary
from replay.store.catalog import open_catalog
from replay.store.runs import open_store
from replay.store.scan import scan_store

RUNS: list[tuple[str, list[str]]] = [
    ("base", ["-n", "90", "--seed", "21", "--policies", "greedy,random,greedy"]),
    ("dup", ["-n", "30", "--seed", "22", "--policies", "greedy,random,random", "--duplicate"]),
    ("dup4", ["-n", "16", "--seed", "23", "--rules", "hunan-4p", "--duplicate",
              "--policies", "greedy,random,greedy,heuristic"]),
    ("four", ["-n", "60", "--seed", "24", "--rules", "hunan-4p", "--policies", "random"]),
    ("luzhou", ["-n", "60", "--seed", "25", "--rules", "luzhou", "--policies", "greedy"]),
    ("min10", ["-n", "60", "--seed", "26", "--set", "min_huxi=10", "--policies", "greedy"]),
]  # fmt: skip


def _cli(args: list[str]) -> None:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output


@pytest.fixture(scope="module")
def summary_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("summary") / "data"
    for name, args in RUNS:
        _cli(["simulate", "--data", str(data), "-w", "1", "-q", "--run", name,
              "--shard-hands", "64", *args])  # fmt: skip
    _cli(["index", "--data", str(data), "-q"])
    return data


def _frame(con: Any, q: tuple[str, dict[str, Any]]) -> pd.DataFrame:
    return con.cursor().execute(q[0], q[1]).df()


def _same(a: pd.DataFrame, b: pd.DataFrame, what: str) -> None:
    assert list(a.columns) == list(b.columns), what
    assert len(a) == len(b), f"{what}: {len(a)} rows from hands, {len(b)} from summaries\n{a}\n{b}"
    for col in a.columns:
        for i, (x, y) in enumerate(zip(a[col], b[col])):
            if isinstance(x, str) or isinstance(y, str):
                assert x == y, f"{what} row {i} {col}: {x!r} != {y!r}"
                continue
            # a sum over no rows is NULL on one side, 0 on the other: the same for the pages
            fx = 0.0 if x is None or pd.isna(x) else float(x)
            fy = 0.0 if y is None or pd.isna(y) else float(y)
            if math.isnan(fx) or math.isnan(fy):
                assert math.isnan(fx) and math.isnan(fy), f"{what} row {i} {col}: {x!r} != {y!r}"
            else:
                assert fx == pytest.approx(fy, rel=1e-9, abs=1e-9), f"{what} row {i} {col}"


def _selection(
    state: Any, runs: list[str], seats: tuple[int, ...], pols: tuple[str, ...]
) -> Selection:
    """A selection as a front end makes it: the runs' duplicate flags known, policies and
    seats those the runs have."""
    picked = [r for r in state.usable_runs if r.name in runs]
    known = {p for r in picked for p in r.policies}
    players = max(r.players for r in picked)
    return Selection(
        runs=tuple(r.name for r in picked),
        seats=tuple(s for s in seats if s < players),
        policies=tuple(sorted(p for p in pols if p in known)),
        duplicate=tuple(r.name for r in picked if r.duplicate),
    )


def _width(state: Any, sel: Selection, bins: int = 100) -> int:
    """The convergence bin width of a selection: a power of two near 1/100 of its longest run
    (so the summaries' bins, powers of two too, nest in it)."""
    longest = max(r.hands for r in state.usable_runs if r.name in sel.runs)
    want = max(1, -(-longest // bins))
    return 1 << (want - 1).bit_length()


#: The selections compared: runs x seats x policies, and two narrow ones.
CHOICES: list[tuple[tuple[str, ...] | None, tuple[int, ...], tuple[str, ...]]] = [
    *itertools.product(
        [None, ("dup",), ("dup4",), ("base", "dup"), ("four", "luzhou", "min10")],
        [(), (1, 2), (3,)],
        [(), ("random",)],
    ),
    (("dup4",), (0, 3), ("greedy", "heuristic")),
    (None, (0,), ("greedy",)),
]


def _filter(state: Any, choice: tuple[Any, ...]) -> Selection:
    """One selection of :data:`CHOICES` (``None`` for every run)."""
    runs, seats, pols = choice
    names = [r.name for r in state.usable_runs]
    return _selection(state, list(runs) if runs is not None else names, seats, pols)


#: Every statement of the layer that has two sources, as ``name: build(selection, plan)``.
KEYS = ("seat", "dealer", "policy", "all", "run")
HAND_KEYS = ("all", "rules", "policies", "players", "run")
STATEMENTS: dict[str, Any] = {
    "headline": outcomes.headline,
    "winning_moments": outcomes.winning_moments,
    "auto_tianhu": outcomes.auto_tianhu,
    "groups": lambda f, p: groups.group_rates_by(f, p, KEYS),
    "paired": groups.paired,
    "value_counts": values.value_counts,
    "by_source": values.by_source,
    "by_mingtang": values.by_mingtang,
    "huang_by": lambda f, p: huang.huang_by_keys(f, p, HAND_KEYS),
    "retention": huang.retention,
    "survival rules": lambda f, p: huang.survival(f, p, "rules"),
    "survival policies": lambda f, p: huang.survival(f, p, "policies"),
    "survival run": lambda f, p: huang.survival(f, p, "run"),
}

COUNTED = [
    ("huxi_ge", 20), ("huxi_eq", 15), ("deng_eq", 2), ("fan_eq", 0), ("score_ge", 4),
    ("score_eq", 2), ("mingtang", 0), ("mingtang", 10), ("pinghu", None),
    ("source", 0), ("source", 255), ("zimo", None), ("dealer_win", None),
    ("tianhu_auto", None), ("huang", None), ("huang_retained", None),
    ("stock_left", 0), ("retained_dealer", None), ("popao", None),
]  # fmt: skip


def test_every_condition_is_counted() -> None:
    assert {c for c, _ in COUNTED} == set(drill.SUMMARY_CONDITIONS)


@pytest.mark.parametrize("choice", CHOICES, ids=[str(i) for i in range(len(CHOICES))])
def test_every_statement_equal(summary_store: Path, choice: tuple[Any, ...]) -> None:
    """One selection (split so that the workers share them): every statement's rows from
    the hands equal those from the summaries, and so do the figures shaped from them."""
    state = scan_store(summary_store)
    assert all(summary.summarized(r) for r in state.usable_runs)
    con = open_catalog(state)
    n = 0
    for f in [_filter(state, choice)]:
        p: Plan | None = plan(state, f)
        assert p is not None
        pairs = {name: (build(f, None), build(f, p)) for name, build in STATEMENTS.items()}
        width = _width(state, f)
        for key in ("seat", "policy"):
            assert groups.convergence_plan(state, p, key, width) == p
            pairs[f"convergence {key}"] = (
                groups.convergence(f, None, key, width),
                groups.convergence(f, p, key, width),
            )
        for cond, value in COUNTED:
            pairs[f"hand_count {cond} {value}"] = (
                drill.hand_count(f, None, cond, value),
                drill.hand_count(f, p, cond, value),
            )
        frames = {k: (_frame(con, a), _frame(con, b)) for k, (a, b) in pairs.items()}
        for k, (a, b) in frames.items():
            _same(a, b, f"{k} {f}")
            n += 1
        # and the figures shaped from them
        rec = {k: tuple(fr.to_dict("records") for fr in v) for k, v in frames.items()}
        for col in values.VALUE_COLS:
            m0, m1 = (results.cluster_mean(rec["winning_moments"][i][0], col) for i in (0, 1))
            _same_mean(m0, m1, f"mean {col} {f}")
            d0, d1 = (results.distribution(rec["value_counts"][i], col) for i in (0, 1))
            assert (d0.quantiles, d0.n, d0.min, d0.max) == (d1.quantiles, d1.n, d1.min, d1.max)
        g0, g1 = (results.group_rows(rec["groups"][i]) for i in (0, 1))
        assert [g.win for g in g0] == [g.win for g in g1], f"groups {f}"
        for a, b in zip(g0, g1):
            _same_mean(a.score, b.score, f"group {a.key} {f}")
        p0, p1 = (results.paired_rows(rec["paired"][i]) for i in (0, 1))
        assert [(r.a, r.b, r.deals) for r in p0] == [(r.a, r.b, r.deals) for r in p1]
        for a, b in zip(p0, p1):
            _same_mean(a.win_diff, b.win_diff, f"paired {f}")
            _same_mean(a.score_diff, b.score_diff, f"paired {f}")
    assert n == len(STATEMENTS) + 2 + len(COUNTED)


def _same_mean(a: results.Mean, b: results.Mean, what: str) -> None:
    assert a.n == b.n, what
    for x, y in ((a.mean, b.mean), (a.lo, b.lo), (a.hi, b.hi)):
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-9), what


def test_duplicate_intervals_are_cluster_robust(summary_store: Path) -> None:
    """The duplicate run's mean intervals rest on deals, not hands, on both paths."""
    state = scan_store(summary_store)
    con = open_catalog(state)
    f = _selection(state, ["dup"], (), ())
    p = plan(state, f)
    assert p is not None
    wm = _frame(con, outcomes.winning_moments(f, p)).to_dict("records")[0]
    hl = _frame(con, outcomes.headline(f, p)).to_dict("records")[0]
    assert int(hl["clusters"]) == 30 and int(hl["n"]) == 90
    assert int(wm["clusters"]) < int(wm["wins"])
    assert not math.isnan(results.cluster_mean(wm, "huxi").lo)


def test_unindexed_run_falls_back(summary_store: Path, tmp_path: Path) -> None:
    """A run without summaries: the plan is None and the pages read the hands."""
    data = tmp_path / "data"
    _cli(["simulate", "--data", str(data), "-w", "1", "-q", "--run", "x", "-n", "16",
          "--seed", "1", "--policies", "greedy"])  # fmt: skip
    # A run recorded before summaries existed: its manifest lists no summary files.
    mpath = data / "runs" / "run=x" / "manifest.json"
    m = json.loads(mpath.read_text())
    for shard in m["shards"]:
        shard["files"].pop("summary", None)
    mpath.write_text(json.dumps(m))
    state = scan_store(data)
    assert state.run("x") is not None and state.run("x").problem is None
    assert plan(state, _selection(state, ["x"], (), ())) is None


@pytest.mark.parametrize("runs", [("base",), ("four",), ("luzhou",), ("base", "min10")])
def test_run_moments_from_the_summaries(summary_store: Path, runs: tuple[str, ...]) -> None:
    """The per-hand figures of runs without --duplicate (the dashboard's Reference page):
    effects.summary_moments gives run_moments's row, column for column, and the same means
    and intervals."""
    state = scan_store(summary_store)
    con = open_catalog(state)
    f = _selection(state, list(runs), (), ())
    assert not f.duplicate
    (active,) = {open_store(summary_store).run(r).rules.active_players for r in runs}
    p = effects.moments_plan(state, f.runs)
    assert p is not None and p == plan(state, f)
    a = _frame(con, effects.run_moments(f.runs, active))
    b = _frame(con, effects.summary_moments(p, active))
    _same(a, b, f"moments {runs}")
    names = [name for name, _ in effects.METRICS]
    ma, mb = (results.run_means(x.to_dict("records")[0], names) for x in (a, b))
    for name in names:
        _same_mean(ma[name], mb[name], f"{name} {runs}")


def test_moments_of_duplicate_runs_come_from_the_hands(summary_store: Path) -> None:
    state = scan_store(summary_store)
    assert effects.moments_plan(state, ("base",)) is not None
    for runs in (("dup",), ("base", "dup4"), ("base", "no-such-run")):
        assert effects.moments_plan(state, runs) is None, runs
