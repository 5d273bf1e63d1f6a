"""The dashboard's catalog, SQL and services without Streamlit: numbers checked against
``paohuzi stats`` (replay.analysis.stats) and against pandas over the Parquet shards; the read-only
fences; the shaping of the replay, drill-down and 胡息 group views."""

from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from dash_helpers import copy_store, edit_manifest

from dashboard.services import drill, filters, huxi, replay, stats
from dashboard.services.cards import card_html, cards_html, kind_label
from dashboard.services.sqlguard import RefusedSQL, check_select
from engine.cards import RED_KINDS
from engine.hu import Source
from paohuzi import demo_data
from paohuzi.cli.dashboard import app_path, streamlit_command
from replay.analysis.figures import drill as fdrill
from replay.analysis.figures import facts as ffacts
from replay.analysis.figures import groups, huang, outcomes, values
from replay.analysis.figures.selection import Selection, plan
from replay.analysis.stats import run_stats
from replay.derived.facts import run_possible
from replay.replayer.hand import load_hand, log_from_rows, replay_hand
from replay.replayer.views import outcome_view
from replay.store.catalog import open_catalog
from replay.store.runs import open_store
from replay.store.scan import scan_store


@pytest.fixture(scope="module")
def state(store_dir: Path) -> Any:
    return scan_store(store_dir)


@pytest.fixture(scope="module")
def con(state: Any) -> Any:
    c = open_catalog(state)
    yield c
    c.close()


def q(con: Any, built: tuple[str, Any]) -> pd.DataFrame:
    return con.cursor().execute(*built).df()


def hands_pd(store_dir: Path, run: str) -> pd.DataFrame:
    return open_store(store_dir).run(run).read_table("hands").to_pandas()


# ---------------------------------------------------------------------------------------------
# Catalog: what it holds, and what it refuses
# ---------------------------------------------------------------------------------------------


def test_catalog_holds_the_listed_shards(con: Any, state: Any) -> None:
    counts = dict(con.execute("SELECT run, count(*) FROM hands GROUP BY run").fetchall())
    assert counts == {r.name: r.hands for r in state.runs}
    events = dict(con.execute("SELECT run, count(*) FROM events GROUP BY run").fetchall())
    assert events == {r.name: r.events for r in state.runs}
    runs = q(con, ("SELECT run, rules, players, duplicate, level FROM runs ORDER BY run", {}))
    assert list(runs["run"]) == ["base", "dup", "four", "min10", "mixed"]
    assert dict(zip(runs["run"], runs["rules"]))["min10"] == "hunan min_huxi=10"
    # seat rows: 3 per hand, 3 of 4 seats at the 4-player table (the sitter sits out)
    seats = dict(con.execute("SELECT run, count(*) FROM seats GROUP BY run").fetchall())
    assert seats == {"base": 720, "dup": 540, "four": 240, "min10": 300, "mixed": 270}


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE TABLE t AS SELECT 1",
        "INSERT INTO runs SELECT * FROM runs",
        "COPY (SELECT 1) TO '{tmp}/x.csv'",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "ATTACH '{tmp}/other.duckdb'",
        "SET enable_external_access = true",
        "INSTALL httpfs",
        "SELECT * FROM read_parquet('https://example.com/x.parquet')",
    ],
)
def test_catalog_connection_is_read_only_and_locked(
    con: Any, statement: str, tmp_path: Path
) -> None:
    with pytest.raises(duckdb.Error):
        con.cursor().execute(statement.format(tmp=tmp_path))
    assert not any(tmp_path.iterdir())


def test_empty_store_catalog(tmp_path: Path) -> None:
    c = open_catalog(scan_store(tmp_path))
    assert c.execute("SELECT count(*) FROM hands").fetchone() == (0,)
    assert c.execute("SELECT count(*) FROM seats").fetchone() == (0,)
    assert c.execute("SELECT count(*) FROM runs").fetchone() == (0,)


# ---------------------------------------------------------------------------------------------
# SQL builders: parameterised, never formatting a value into the text
# ---------------------------------------------------------------------------------------------

HOSTILE = "x'); DROP TABLE runs; --"


def all_builders(f: Selection) -> list[tuple[str, dict[str, Any]]]:
    out = [
        outcomes.headline(f, None),
        outcomes.winning_moments(f, None),
        groups.paired(f, None),
        values.value_counts(f, None),
        values.by_source(f, None),
        values.by_mingtang(f, None),
        huang.retention(f, None),
        fdrill.events_for([(HOSTILE, 0, 10)]),
        groups.convergence(f, None, "policy", 7),
    ]
    out += [groups.group_rates_by(f, None, (k,)) for k in groups.GROUP_KEYS]
    out += [huang.huang_by_keys(f, None, (k,)) for k in huang.HAND_KEYS]
    out += [huang.survival(f, None, k) for k in huang.HAND_KEYS]
    for cond, (_, takes, _) in fdrill.CONDITIONS.items():
        v = 3 if takes else None
        out += [fdrill.hand_count(f, None, cond, v), fdrill.hand_list(f, cond, v, 50, True)]
    return out


def test_builders_are_parameterised(con: Any) -> None:
    f = Selection(runs=(HOSTILE, "base"), seats=(0, 2), policies=(HOSTILE, "greedy"))
    for text, params in all_builders(f):
        assert HOSTILE not in text and "DROP" not in text
        assert set(re.findall(r"\$([a-z][a-z0-9_]*)", text)) == set(params), text
        assert all(HOSTILE not in str(k) for k in params)
        con.cursor().execute(text, params).fetchall()  # valid SQL, runs, changes nothing
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (5,)


def test_known_duplicate_runs_give_the_same_numbers(con: Any, state: Any) -> None:
    runs = tuple(r.name for r in state.runs)
    known = Selection(runs=runs, duplicate=("dup",), seats=(0, 1), policies=("greedy",))
    unknown = Selection(runs=runs, seats=(0, 1), policies=("greedy",))
    for build in (
        lambda f: groups.group_rates_by(f, None, ("seat", "dealer", "policy", "run", "all")),
        lambda f: outcomes.winning_moments(f, None),
        lambda f: outcomes.headline(f, None),
    ):
        a, b = q(con, build(known)), q(con, build(unknown))
        pd.testing.assert_frame_equal(a, b)


def test_unknown_group_key_is_refused() -> None:
    with pytest.raises(KeyError):
        groups.group_rates_by(Selection(runs=("base",)), None, ("seat; DROP TABLE runs",))
    with pytest.raises(ValueError):
        Selection(runs=("base",), seats=(7,))


# ---------------------------------------------------------------------------------------------
# The numbers: the same as `paohuzi stats`, and as pandas
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("run", ["base", "dup", "four", "min10", "mixed"])
def test_rates_agree_with_paohuzi_stats(con: Any, store_dir: Path, run: str) -> None:
    (ref,) = run_stats(open_store(store_dir), [run])
    f = Selection(runs=(run,))
    h = stats.headline(
        q(con, outcomes.headline(f, None)).iloc[0],
        q(con, outcomes.winning_moments(f, None)).iloc[0],
    )
    assert h.win == ref.outcomes["win"]
    assert h.huang == ref.outcomes["huangzhuang"]
    for key, rows in (("seat", ref.seats), ("dealer", ref.dealer)):
        mine = {g.key: g for g in stats.group_rows(q(con, groups.group_rates_by(f, None, (key,))))}
        for g in rows:
            assert mine[g.key].win == g.win
            assert _close(mine[g.key].score, g.score)
    if ref.policy:
        mine = {
            g.key: g for g in stats.group_rows(q(con, groups.group_rates_by(f, None, ("policy",))))
        }
        for g in ref.policy:
            assert mine[g.key].win == g.win and _close(mine[g.key].score, g.score)
    if ref.paired:
        mine_p = {(p.a, p.b): p for p in stats.paired_rows(q(con, groups.paired(f, None)))}
        for p in ref.paired:
            assert mine_p[(p.a, p.b)].deals == p.deals
            assert _close(mine_p[(p.a, p.b)].win_diff, p.win_diff)
            assert _close(mine_p[(p.a, p.b)].score_diff, p.score_diff)
    vc = q(con, values.value_counts(f, None))
    for col, d in ref.winning.items():
        mine_d = stats.distribution(vc, col)
        assert tuple(mine_d.quantiles.values()) == d.quantiles
        assert (mine_d.min, mine_d.max) == (d.min, d.max)
        assert _close(getattr(h, col), d.mean)
    if ref.zimo is not None:
        assert h.zimo == ref.zimo
    mt = stats.mingtang_table(q(con, values.by_mingtang(f, None)), q(con, values.mingtang_codes()))
    got = {r["id"]: (r["wins with it"], r["of wins"]) for r in mt.to_dict("records")}
    for row in ref.mingtang:
        k, n = got.get(row.pinyin, (0, row.share.n))
        assert (k, n) == (row.share.k, row.share.n), row.pinyin


def _close(a: Any, b: Any) -> bool:
    pairs = [(a.mean, b.mean), (a.lo, b.lo), (a.hi, b.hi)]
    return all((math.isnan(x) and math.isnan(y)) or math.isclose(x, y) for x, y in pairs)


@pytest.mark.parametrize("run", ["dup", "mixed"])
def test_seat_and_policy_filters_match_pandas(con: Any, store_dir: Path, run: str) -> None:
    h = hands_pd(store_dir, run)
    f = Selection(runs=(run,), seats=(1, 2), policies=("random",))
    # seat level: seats 1 and 2 when played by random
    rows = stats.group_rows(q(con, groups.group_rates_by(f, None, ("all",))))
    n = won = 0
    for s in (1, 2):
        mask = h[f"policy_{s}"] == "random"
        n += int(mask.sum())
        won += int((h.loc[mask, "winner"] == s).sum())
    assert (rows[0].win.k, rows[0].win.n) == (won, n)
    # winning-hand level: wins by seat 1 or 2 while random played it
    wins = h[h["outcome"] != 1]
    pol = [wins[f"policy_{int(w)}"].iloc[i] for i, w in enumerate(wins["winner"])]
    sel = wins[wins["winner"].isin([1, 2]) & (pd.Series(pol, index=wins.index) == "random")]
    wm = q(con, outcomes.winning_moments(f, None)).iloc[0]
    assert int(wm["wins"]) == len(sel)
    # hand level: hands in which seat 1 or 2 was random
    hand_mask = (h["policy_1"] == "random") | (h["policy_2"] == "random")
    hl = q(con, outcomes.headline(f, None)).iloc[0]
    assert int(hl["n"]) == int(hand_mask.sum())
    assert int(hl["huang"]) == int((h.loc[hand_mask, "outcome"] == 1).sum())


def test_survival_and_convergence_curves(con: Any, store_dir: Path) -> None:
    h = hands_pd(store_dir, "base")
    f = Selection(runs=("base",))
    curve = stats.survival_curve(q(con, huang.survival(f, None, "run")))
    shares = list(curve["share"])
    assert shares == sorted(shares) and shares[-1] == 1.0
    assert math.isclose(shares[0], float((h["stock_left"] == 0).mean()))
    s5 = curve[curve["stock_left"] == 5].iloc[0]
    assert math.isclose(s5["share"], float((h["stock_left"] <= 5).mean()))
    assert s5["lo"] <= s5["share"] <= s5["hi"]
    by_seat = q(
        con, groups.convergence(Selection(runs=("base", "four"), seats=(0, 3)), None, "seat", 30)
    )
    by_view = q(
        con,
        (
            "SELECT 'seat ' || seat AS key, hand_id // 30 AS bin, count(*) AS n,"
            " sum(won::INT) AS won FROM seats WHERE run IN ('base', 'four') AND seat IN (0, 3)"
            " GROUP BY 1, 2 ORDER BY 1, 2",
            [],
        ),
    )
    pd.testing.assert_frame_equal(by_seat, by_view, check_dtype=False)
    conv = stats.convergence_curve(q(con, groups.convergence(f, None, "all", 50)), 50)
    last = conv.iloc[-1]
    assert int(last["seat_hands"]) == 3 * len(h)
    assert math.isclose(last["rate"], float((h["outcome"] != 1).sum()) / (3 * len(h)))


def test_huang_groups_add_up(con: Any, state: Any) -> None:
    f = Selection(runs=tuple(r.name for r in state.runs))
    by = q(con, huang.huang_by_keys(f, None, ("all", "rules", "policies", "players", "run")))
    hl = q(con, outcomes.headline(f, None)).iloc[0]
    for g, part in by.groupby("g"):
        assert int(part["n"].sum()) == int(hl["n"]), g
        assert int(part["huang"].sum()) == int(hl["huang"]), g
        assert int(part["d"].sum()) == int(hl["clusters"]), g
    assert set(by[by["g"] == "players"]["key"]) == {"3 players", "4 players"}
    surv = q(con, huang.survival(f, None, "rules"))
    assert int(surv["n"].sum()) == int(hl["n"])


def test_retention(con: Any, store_dir: Path) -> None:
    h = hands_pd(store_dir, "base")
    df = q(con, huang.retention(Selection(runs=("base",)), None))
    assert int(df["n"].sum()) == len(h)
    kept, fresh, diff = stats.retention_effect(df)
    assert kept.n == int((h["huang_streak"] > 0).sum())
    assert fresh.k == int(((h["huang_streak"] == 0) & (h["winner"] == h["dealer"])).sum())
    assert math.isnan(diff.mean) or diff.lo <= diff.mean <= diff.hi


def test_quantiles_and_differences() -> None:
    d = stats.Distribution.of("huxi", [(15, 5), (16, 3), (18, 2)])
    assert (d.quantiles[0.5], d.quantiles[0.9]) == (15.0, 18.0)
    d = stats.rate_diff(stats.Rate.of(56, 70), stats.Rate.of(48, 80))
    assert (round(d.lo, 4), round(d.hi, 4)) == (0.0524, 0.3339)  # Newcombe 1998, method 10
    m = stats.mean_diff(stats.Mean(2.0, 1.0, 3.0, 10), stats.Mean(1.0, 0.0, 2.0, 10))
    assert math.isclose(m.mean, 1.0) and math.isclose(m.hi - m.mean, math.sqrt(2))


# ---------------------------------------------------------------------------------------------
# Selection, store scan, SQL guard
# ---------------------------------------------------------------------------------------------


def test_filter_resolution(state: Any) -> None:
    f = filters.resolve(state, [], ["hunan-4p"], ["greedy", "nope"], [3, 9])
    assert f == Selection(runs=("four",), seats=(3,), policies=("greedy",), duplicate=())
    assert filters.resolve(state, ["gone"], [], [], []).runs == ()
    ch = filters.choices(state)
    assert ch.runs == ("base", "dup", "four", "min10", "mixed") and ch.seats == (0, 1, 2, 3)


def test_scan_notes_running_stopped_and_broken_runs(store_dir: Path, tmp_path: Path) -> None:
    data = copy_store(store_dir, tmp_path / "d", ["base", "dup", "four"])
    edit_manifest(data / "runs" / "run=base", status="running")
    (data / "runs" / "run=base" / ".lock").write_text(str(os.getpid()))
    edit_manifest(data / "runs" / "run=dup", status="running")
    (data / "runs" / "run=dup" / ".lock").write_text("999999999")  # gone
    (data / "runs" / "run=four" / "events" / "part-00000.parquet").unlink()
    s = scan_store(data)
    by = {r.name: r for r in s.runs}
    assert by["base"].state == "being written" and by["dup"].state == "stopped"
    assert by["four"].problem and "missing" in by["four"].problem
    notes = " ".join(t for _, t in s.messages())
    assert "still being written" in notes and "Run four is left out" in notes


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("SELECT 1", True),
        ("with t as (select 1) select * from t", True),
        ("FROM hands LIMIT 3", True),
        ("/* note */ SELECT 1;", True),
        ("SELECT 1; SELECT 2", False),
        ("select 1; drop table runs", False),
        ("DESCRIBE hands", False),
        ("PRAGMA database_list", False),
        ("EXPLAIN SELECT 1", False),
        ("COPY hands TO 'x.csv'", False),
        ("ATTACH 'x.db'", False),
        ("SET threads = 1", False),
        ("CALL pragma_version()", False),
        ("", False),
        ("SELEC 1", False),
    ],
)
def test_sql_guard(text: str, ok: bool) -> None:
    if ok:
        assert check_select(text)
    else:
        with pytest.raises(RefusedSQL):
            check_select(text)


# ---------------------------------------------------------------------------------------------
# Replay, drill-down, 胡息 groups, cards
# ---------------------------------------------------------------------------------------------


def test_cards_red_in_red() -> None:
    for k in range(20):
        assert ("phz-red" in card_html(k)) == (k in RED_KINDS)
    assert cards_html([1, 6, 9]).count("#c62828") == 3


def test_replay_view_shaping(store_dir: Path) -> None:
    h = hands_pd(store_dir, "base")
    won = int(h[h["outcome"] == 0]["hand_id"].iloc[0])
    log = load_hand(store_dir, "base", won)
    k = replay.decisive_step(log)
    assert log.events[k] == (int(h.loc[h["hand_id"] == won, "winner"].iloc[0]), 1)  # 胡
    v = replay.view_at(log, k, None)
    opts = replay.options_frame(v)
    assert (opts["taken"] == "✔ taken").sum() == 1
    assert "胡" in set(opts[opts["taken"] != ""]["option"])
    end = replay.view_at(log, log.n_steps, 0)
    out = replay.outcome_frames(end)
    assert out is not None and int(out["decomposition"]["胡息"].sum()) == int(
        h.loc[h["hand_id"] == won, "huxi"].iloc[0]
    )
    assert out["settlement"]["score change"].sum() == 0
    blocks = replay.seat_blocks(replay.view_at(log, 0, 1))
    assert "phz-back" in blocks[0]["hand"] and "phz-back" not in blocks[1]["hand"]
    assert replay.step_caption(v).startswith(f"step {k} of {log.n_steps}")


def _replayed_wins(con: Any, state: Any, runs: tuple[str, ...]) -> list[tuple[str, int, Any]]:
    """(run, hand id, outcome view) of every win of ``runs``, by a full Python replay."""
    rules = {r.name: r.ruleset_obj() for r in state.runs}
    hands = con.execute(
        "SELECT * FROM hands WHERE winner IS NOT NULL AND list_contains(?, run)"
        " ORDER BY run, hand_id",
        [list(runs)],
    ).df()
    ev = q(con, fdrill.events_for([(r, 0, 10**6) for r in runs]))
    by = {(str(e["run"]), int(e["hand_id"])): e for e in ev.to_dict("records")}
    out = []
    for h in hands.to_dict("records"):
        key = (str(h["run"]), int(h["hand_id"]))
        e = by.get(key, {"seat": [], "action": []})
        h["deck"] = bytes(h["deck"])
        cols = {"seat": [int(x) for x in e["seat"]], "action": [int(x) for x in e["action"]]}
        state_ = replay_hand(log_from_rows(key[0], rules[key[0]], h, cols))
        out.append((key[0], key[1], state_))
    return out


def test_drilldown_hand_table_and_popao(con: Any, state: Any, store_dir: Path) -> None:
    f = Selection(runs=tuple(r.name for r in state.runs))
    names = drill.mingtang_names(q(con, values.mingtang_codes()))
    t = drill.hand_table(q(con, fdrill.hand_list(f, "huxi_ge", 25, 20)), names)
    assert (t["胡息"] >= 25).all() and set(t["outcome"]) <= {"胡", "天胡", "3提/5坎 天胡"}
    # 破跑胡 is exact: the hands listed are those a full replay of every win finds
    rows = q(con, fdrill.hand_list(f, "popao", None, 10**6))
    count = q(con, fdrill.hand_count(f, None, "popao", None)).to_dict("records")[0]
    expected = set()
    wins = _replayed_wins(con, state, f.runs)
    for run, h, st in wins:
        o = st.outcome
        if o.card is None or o.source == Source.LIANG_DEALER or o.result.option != "F":
            continue
        if run_possible(st.melds[o.winner], st.hands[o.winner], o.card, o.source):
            expected.add((run, h))
    got = {(str(r), int(h)) for r, h in zip(rows["run"], rows["hand_id"])}
    assert got == expected and len(expected) > 0
    assert (int(count["k"]), int(count["n"])) == (len(expected), len(wins))
    assert drill.parse_params({"cond": "mingtang", "value": "x"}) == ("mingtang", 0)
    assert drill.parse_params({"cond": "pinghu", "value": "5"}) == ("pinghu", None)


@pytest.mark.parametrize("source", ["summaries", "facts"])
def test_huxi_group_sources_count_every_win(con: Any, state: Any, source: str) -> None:
    f = Selection(runs=("base", "four"))
    pl = plan(state, f) if source == "summaries" else None
    assert (pl is not None) == (source == "summaries")
    table, wins = huxi.group_table(q(con, ffacts.group_sources(f, pl)).to_dict("records")[0])
    replayed = _replayed_wins(con, state, f.runs)
    assert wins == len(replayed) > 0
    groups: dict[str, int] = {}
    values_: dict[str, int] = {}
    for _, _, st in replayed:
        for g in outcome_view(st)["decomposition"]:
            groups[kind_label(g["kind"])] = groups.get(kind_label(g["kind"]), 0) + 1
            values_[kind_label(g["kind"])] = values_.get(kind_label(g["kind"]), 0) + g["huxi"]
    assert dict(zip(table["group type"], table["groups"])) == groups
    assert dict(zip(table["group type"], table["胡息"])) == values_
    assert int(table["胡息"].sum()) == sum(int(st.outcome.result.huxi) for _, _, st in replayed)
    assert math.isclose(table["share of 胡息"].sum(), 1.0)


# ---------------------------------------------------------------------------------------------
# The command and the demo data
# ---------------------------------------------------------------------------------------------


def test_dashboard_command_line(tmp_path: Path) -> None:
    cmd, env = streamlit_command(tmp_path, 8765, "127.0.0.1")
    assert app_path().is_file() and str(app_path()) in cmd
    assert "--server.headless=true" in cmd and "--server.port=8765" in cmd
    assert env["PAOHUZI_DATA"] == str(tmp_path.resolve())


def test_demo_data_commands(tmp_path: Path) -> None:
    cmds = demo_data.commands(tmp_path, 2)
    names = [c[4] for c in cmds]
    assert len(set(names)) == len(names) == len(demo_data.DEMO_RUNS)
    assert any("--duplicate" in c for c in cmds)
    assert {c[c.index("--policies") + 1] for c in cmds} >= {
        "learned@hunan",
        "heuristic,greedy,random",
    }
    assert not demo_data.is_complete(tmp_path, names[0])
    assert all(re.fullmatch(r"[a-z0-9-]+", n) for n in names)
    # the first run has the most hands: the dashboard's first view (filters.default_runs)
    hands = [int(args[args.index("--hands") + 1]) for _, args in demo_data.DEMO_RUNS]
    assert hands[0] == max(hands) > max(hands[1:])


def test_demo_data_reviews(tmp_path: Path) -> None:
    """make demo stores a small review of the main run and of the --duplicate run, once."""
    cmds = demo_data.review_commands(tmp_path, 2)
    assert [c[1] for c in cmds] == ["demo-hunan", "demo-dup"]
    assert {c[1] for c in cmds} <= {name for name, _ in demo_data.DEMO_RUNS}
    assert all("--sample" in c and "--rollouts" in c for c in cmds)
    assert not demo_data.has_review(tmp_path, "demo-hunan")
    run = tmp_path / "runs" / "run=demo-hunan"
    run.mkdir(parents=True)
    entry = {"rollouts": 32, "rollout_policy": "heuristic", "seed": 0}
    (run / "manifest.json").write_text(json.dumps({"reviews": [{**entry, "rollouts": 64}]}))
    assert not demo_data.has_review(tmp_path, "demo-hunan")  # another review's
    (run / "manifest.json").write_text(json.dumps({"reviews": [entry]}))
    assert demo_data.has_review(tmp_path, "demo-hunan")


def test_dashboard_signature_sees_every_change(
    store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dashboard.db.current_signature (the store's generation, kept by one LiveStore): steady
    on an unchanged store and when a file no manifest lists comes and goes; a shard replaced
    (a rename) changes it at once; an edit in place once the background recheck ran
    ($PAOHUZI_REFRESH); a render keeps the state it took first."""
    from dashboard import db

    monkeypatch.setenv("PAOHUZI_REFRESH", "0.2")
    data = copy_store(store_dir, tmp_path / "d", ["base"])
    root = str(data.resolve())
    hands = data / "runs" / "run=base" / "hands"

    def tick() -> None:  # file times move in kernel ticks (a few ms): one between changes
        time.sleep(0.05)

    first = db.current_signature(root)
    assert db.current_signature(root) == first
    extra = hands / "part-99999.parquet"
    tick()
    extra.write_bytes(b"x")  # listed by no manifest: not the store's content
    assert db.current_signature(root) == first
    tick()
    extra.unlink()
    assert db.current_signature(root) == first
    shard = hands / "part-00000.parquet"
    raw = shard.read_bytes()
    tmp = hands / ".part-00000.tmp"
    tmp.write_bytes(raw[:-1] + bytes([raw[-1] ^ 1]))
    tick()
    os.replace(tmp, shard)  # how every writer of the store replaces a file
    replaced = db.current_signature(root)
    assert replaced != first
    state = db.live_store(root).state()
    assert state.run("base") is not None and state.run("base").problem is not None  # damaged
    tmp.write_bytes(raw)
    tick()
    os.replace(tmp, shard)  # back as it was
    repaired = db.current_signature(root)
    assert repaired != replaced and db.live_store(root).state().run("base").problem is None
    with shard.open("r+b") as fh:  # an edit in place: the folder's mtime stays
        fh.seek(10)
        fh.write(b"\0")
    os.utime(shard, ns=(shard.stat().st_atime_ns, shard.stat().st_mtime_ns))
    deadline = time.monotonic() + 30
    while db.current_signature(root) == repaired:  # the background recheck finds it
        assert time.monotonic() < deadline, "the edit in place was never seen"
        time.sleep(0.1)
    assert db.live_store(root).state().run("base").problem is not None
    with db.one_signature():  # one render: one state, whatever happens meanwhile
        monkeypatch.setenv("PAOHUZI_DATA", root)
        s1 = db.store_state().signature
        tick()
        tmp.write_bytes(raw)
        os.replace(tmp, shard)
        assert db.store_state().signature == s1
    assert db.store_state().signature != s1
