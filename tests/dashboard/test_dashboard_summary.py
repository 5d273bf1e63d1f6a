"""The dashboard from the summary tables equals the dashboard from the hands: every query of
``dashboard.queries.summary_sql`` against its namesake in ``dashboard.queries.sql``, and the
services' numbers (rates, Wilson and cluster-robust intervals, quantiles) built on them, over
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

from dashboard.queries import sql
from dashboard.queries import summary_sql as ssql
from dashboard.queries.sql import Filters
from dashboard.services import filters as fsvc
from dashboard.services import stats as svc
from replay.analysis import summary
from replay.cli.main import main
from replay.store.catalog import open_catalog
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


def _frame(con: Any, q: tuple[str, list[Any]]) -> pd.DataFrame:
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


def _filters(state: Any) -> list[Filters]:
    names = [r.name for r in state.usable_runs]
    runs_sets = [names, ["dup"], ["dup4"], ["base", "dup"], ["four", "luzhou", "min10"]]
    seat_sets: list[tuple[int, ...]] = [(), (1, 2), (3,)]
    pol_sets: list[tuple[str, ...]] = [(), ("random",)]
    choices = [*itertools.product(runs_sets, seat_sets, pol_sets)]
    choices += [(["dup4"], (0, 3), ("greedy", "heuristic")), (names, (0,), ("greedy",))]
    out = []
    for runs, seats, pols in choices:
        f = fsvc.resolve(state, runs, (), pols, seats)
        if f not in out:
            out.append(f)
    return out


def test_every_query_equal(summary_store: Path) -> None:
    state = scan_store(summary_store)
    assert all(summary.summarized(r) for r in state.usable_runs)
    con = open_catalog(state)
    n = 0
    for f in _filters(state):
        p = ssql.plan(state, f)
        assert p is not None
        pairs = {
            "headline": (sql.headline(f), ssql.headline(p)),
            "winning_moments": (sql.winning_moments(f), ssql.winning_moments(p)),
            "groups": (
                sql.group_rates_by(f, ("seat", "dealer", "policy", "all", "run")),
                ssql.group_rates_by(p, ("seat", "dealer", "policy", "all", "run")),
            ),
            "paired": (sql.paired(f), ssql.paired(p)),
            "value_counts": (sql.value_counts(f), ssql.value_counts(p)),
            "by_source": (sql.by_source(f), ssql.by_source(p)),
            "by_mingtang": (sql.by_mingtang(f), ssql.by_mingtang(p)),
            "huang_by": (
                sql.huang_by_keys(f, ("all", "rules", "policies", "players", "run")),
                ssql.huang_by_keys(p, ("all", "rules", "policies", "players", "run")),
            ),
            "retention": (sql.retention(f), ssql.retention(p)),
        }
        for key in ("rules", "policies", "run"):
            pairs[f"survival {key}"] = (sql.survival(f, key), ssql.survival(p, key))
        width = fsvc.convergence_width(state, f)
        for key in ("seat", "policy"):
            assert ssql.convergence_ok(state, p, key, width)
            pairs[f"convergence {key}"] = (
                sql.convergence(f, key, width),
                ssql.convergence(p, key, width),
            )
        for cond, value in [
            ("huxi_ge", 20), ("huxi_eq", 15), ("deng_eq", 2), ("fan_eq", 0), ("score_ge", 4),
            ("score_eq", 2), ("mingtang", 0), ("mingtang", 10), ("pinghu", None),
            ("source", 0), ("source", 255), ("zimo", None), ("dealer_win", None),
            ("tianhu_auto", None), ("huang", None), ("huang_retained", None),
            ("stock_left", 0), ("retained_dealer", None),
        ]:  # fmt: skip
            pairs[f"hand_count {cond}"] = (
                sql.hand_count(f, cond, value),
                ssql.hand_count(p, cond, value),
            )
        frames = {k: (_frame(con, a), _frame(con, b)) for k, (a, b) in pairs.items()}
        for k, (a, b) in frames.items():
            _same(a, b, f"{k} {f}")
            n += 1
        # and the numbers the pages show, built on them
        for i in (0, 1):
            hl = frames["headline"][i].to_dict("records")[0]
            wm = frames["winning_moments"][i].to_dict("records")[0]
            frames[f"h{i}"] = (svc.headline_table(svc.headline(hl, wm)),) * 2
        _same(frames["h0"][0], frames["h1"][0], f"headline table {f}")
        g0, g1 = (svc.rate_table(svc.group_rows(frames["groups"][i])) for i in (0, 1))
        _same(g0, g1, f"rate table {f}")
        p0, p1 = (svc.paired_table(svc.paired_rows(frames["paired"][i])) for i in (0, 1))
        _same(p0, p1, f"paired table {f}")
        for m in ("huxi", "deng", "fan", "score"):
            d0, d1 = (svc.distribution(frames["value_counts"][i], m) for i in (0, 1))
            assert d0.quantiles == d1.quantiles and d0.n == d1.n, f"{m} {f}"
        s0, s1 = (svc.source_table(frames["by_source"][i]) for i in (0, 1))
        _same(s0, s1, f"source table {f}")
        codes = _frame(con, sql.mingtang_codes())
        m0, m1 = (svc.mingtang_table(frames["by_mingtang"][i], codes) for i in (0, 1))
        _same(m0, m1, f"mingtang table {f}")
        r0, r1 = (svc.retention_table(frames["retention"][i]) for i in (0, 1))
        _same(r0, r1, f"retention table {f}")
    assert n > 300


def test_duplicate_intervals_are_cluster_robust(summary_store: Path) -> None:
    """The duplicate run's mean intervals rest on deals, not hands, on both paths."""
    state = scan_store(summary_store)
    con = open_catalog(state)
    f = fsvc.resolve(state, ["dup"], (), (), ())
    p = ssql.plan(state, f)
    assert p is not None
    wm = _frame(con, ssql.winning_moments(p)).to_dict("records")[0]
    hl = _frame(con, ssql.headline(p)).to_dict("records")[0]
    assert int(hl["clusters"]) == 30 and int(hl["n"]) == 90
    assert int(wm["clusters"]) < int(wm["wins"])
    h = svc.headline(hl, wm)
    assert not math.isnan(h.huxi.lo)


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
    assert ssql.plan(state, fsvc.resolve(state, [], (), (), ())) is None
