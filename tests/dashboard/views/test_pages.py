"""Every dashboard page through Streamlit's AppTest on the fixture store, and the stores
that must give a clear message instead of a traceback: missing, empty, being written,
corrupt. A page opens on the store's main run (the most hands: ``base``) unless the URL asks
for others (``runs=*``: all of them)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from dash_helpers import PAGES, copy_store, edit_manifest, run_page
from streamlit.testing.v1 import AppTest

from dashboard.services.replay import decisive_step
from replay.replayer.hand import load_hand
from replay.store.runs import open_store
from replay.store.summary_schema import SUMMARY_VERSION

#: the URL's selection of every run of the fixture store
ALL = {"runs": "*"}


def texts(at: AppTest) -> str:
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption]
    parts += [e.value for e in at.title] + [e.value for e in at.subheader]
    parts += [str(e.value) for e in at.info] + [str(e.value) for e in at.warning]
    return "\n".join(str(p) for p in parts)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.fixture()
def fixture_store(store_dir: Path, use_store) -> Path:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    return store_dir


def test_overview_lists_runs_and_headline_rates(fixture_store: Path) -> None:
    at = run_page("overview")
    assert_clean(at)
    assert at.title[0].value.startswith("跑胡子")
    runs = at.table[0].value
    assert set(runs["run"]) == {"base", "dup", "four", "min10", "mixed"}
    assert list(runs[runs["selected"]]["run"]) == ["base"]
    # the first view: the main run (the most hands), one rule set, and so in the URL
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["runs"] == "1" and metrics["hands"] == "240"
    assert "Headline rates · hunan" in [s.value for s in at.subheader]
    assert at.query_params["runs"] == "base"
    headline = at.table[1].value
    assert {"win (hand ends in a 胡)", "荒庄", "mean winning 胡息"} <= set(headline["measure"])
    assert all("–" in x or "%" in x or "." in x for x in headline["95 % interval"])
    # every run (AppTest does not keep the entry script's sidebar widgets across reruns, so
    # the filter is set through its state): three rule sets, a row each, never pooled
    at.session_state["f_runs"] = []
    at.run()
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["runs"] == "5"
    assert metrics["hands"] == f"{240 + 180 + 80 + 100 + 90:,}"
    assert at.query_params["runs"] == "*"
    assert "Headline rates by rule set (3 rule sets)" in [s.value for s in at.subheader]
    assert any("mixes 3 rule sets" in str(i.value) for i in at.info)
    per_rules = at.table[1].value.set_index("rules")
    assert list(per_rules.index) == ["hunan", "hunan-4p", "hunan min_huxi=10"]
    assert per_rules.loc["hunan", "runs"] == 3 and per_rules.loc["hunan", "hands"] == 510
    assert per_rules.loc["hunan-4p", "hands"] == 80
    assert all(" % [" in x for x in per_rules["荒庄"])
    every = at.table[2].value  # every headline number, per rule set
    assert len(every) == 3 * len(headline) and set(every["rules"]) == set(per_rules.index)
    at.session_state["f_runs"] = ["base"]
    at.run()
    assert_clean(at)
    assert {m.label: m.value for m in at.metric}["hands"] == "240"


def test_win_rates_by_seat_dealer_policy_paired_and_convergence(fixture_store: Path) -> None:
    at = run_page("win_rates", ALL)
    assert_clean(at)
    assert any("pools 3 rule sets" in str(i.value) for i in at.info)
    frames = [d.value for d in at.table]
    seat = frames[0]
    assert list(seat["seat"]) == ["seat 0", "seat 1", "seat 2", "seat 3"]
    assert set(frames[1]["seat role"]) == {"dealer", "non-dealer"}
    assert set(frames[2]["policy"]) == {"greedy", "random"}
    paired = frames[3]
    assert list(paired["policy a − policy b"]) == ["greedy − random"]
    assert int(paired["paired deals"].iloc[0]) == 60
    assert "Convergence" in texts(at)


def test_huxi_page_distributions_sources_groups(fixture_store: Path) -> None:
    at = run_page("huxi", ALL)
    assert_clean(at)
    labels = [m.label for m in at.metric]
    assert "mean winning 胡息" in labels
    quantiles = at.table[0].value
    assert list(quantiles["measure"]) == ["胡息", "等", "番", "score"]
    assert (quantiles["min"].iloc[0]) >= 10  # the 10-胡息 run is in the selection
    groups = at.table[-1].value
    assert "group type" in groups.columns and len(groups) > 0
    assert abs(groups["share of 胡息"].sum() - 1.0) < 1e-9
    # every win of the selection, from the facts (no sample)
    wins = (
        open_store(fixture_store)
        .connect()
        .execute("SELECT count(*) FROM hands WHERE winner IS NOT NULL")
        .fetchone()[0]
    )
    assert f"The winning readings of all {wins:,} selected wins" in texts(at)
    links = [p.proto.label for p in at.get("page_link")]
    assert "Wins by 破跑胡" in links


def test_huangzhuang_page(fixture_store: Path) -> None:
    at = run_page("huang", ALL)
    assert_clean(at)
    assert "荒庄 rate" in [m.label for m in at.metric]
    by_rules = at.table[0].value
    assert set(by_rules["rules"]) == {"hunan", "hunan-4p", "hunan min_huxi=10"}
    assert "3 vs 4 players" in texts(at)
    retention = at.table[-1].value
    assert list(retention.columns[:3]) == ["荒庄 before (same dealer)", "hands", "荒庄 rate"]
    at.radio(key="huang_curve_key").set_value("run").run()
    assert_clean(at)


def test_mingtang_page(fixture_store: Path) -> None:
    at = run_page("mingtang")
    assert_clean(at)
    assert any("花样 half" in s.value for s in at.subheader)
    t = at.dataframe[0].value
    assert "平胡" in set(t["名堂"])


def test_compare_page(fixture_store: Path) -> None:
    at = run_page("compare")
    assert_clean(at)
    at.multiselect(key="cmp_A_runs").set_value(["base"])
    at.multiselect(key="cmp_B_runs").set_value(["min10"]).run()
    assert_clean(at)
    assert (at.query_params["a"], at.query_params["b"]) == ("base", "min10")
    t = at.table[0].value
    assert list(t.columns[:4]) == ["measure", "A", "A 95 %", "A n"]
    row = t[t["measure"] == "win (hand ends in a 胡)"].iloc[0]
    assert int(row["A n"]) == 240 and int(row["B n"]) == 100
    assert row["differs"] in ("yes", "no")


def test_replay_steps_forward_and_back(fixture_store: Path, store_dir: Path) -> None:
    at = run_page("replay", {"run": "base", "hand": "7", "at": "decisive"})
    assert_clean(at)
    log = load_hand(store_dir, "base", 7)
    step = at.slider(key="rp_step").value
    assert step == decisive_step(log)
    html = "".join(h.proto.body for h in at.get("html"))
    assert "phz-card" in html
    at.button[2].click().run()  # forward
    assert at.slider(key="rp_step").value == min(step + 1, log.n_steps)
    at.button[1].click().run()  # back
    at.button[1].click().run()
    assert at.slider(key="rp_step").value == max(0, min(step + 1, log.n_steps) - 2)
    at.button[0].click().run()  # start
    assert at.slider(key="rp_step").value == 0
    at.button[3].click().run()  # end
    assert at.slider(key="rp_step").value == log.n_steps
    assert "Result" in texts(at)
    # one seat's view hides the other hands
    at.selectbox(key="rp_seat").set_value(1).run()
    assert_clean(at)
    html = "".join(h.proto.body for h in at.get("html"))
    assert "phz-back" in html


def test_replay_of_an_unknown_hand_is_a_message(fixture_store: Path) -> None:
    at = run_page("replay", {"run": "nope", "hand": "3"})
    assert not at.exception
    assert any("No run 'nope'" in e.value for e in at.error)
    assert not at.get("html")  # no other run's hand in its place


def test_drilldown_lists_hands_and_links_into_the_replay(fixture_store: Path) -> None:
    at = run_page("drilldown", {"cond": "huxi_ge", "value": "20"})
    assert_clean(at)
    t = at.dataframe[0].value
    assert len(t) > 0 and (t["胡息"] >= 20).all()
    links = [p for p in at.get("page_link") if "replay" in p.proto.page]
    assert links and "at=decisive" in links[0].proto.query_string
    # 荒庄 with the dealer retained
    at.selectbox(key="dd_cond").set_value("huang_retained").run()
    assert_clean(at)
    t = at.dataframe[0].value
    assert (t["outcome"] == "荒庄").all()


def test_drilldown_popao_is_exact(fixture_store: Path) -> None:
    at = run_page("drilldown", {"cond": "popao", **ALL})
    assert_clean(at)
    con = open_store(fixture_store).connect()
    k, n = con.execute(
        "SELECT count(*) FILTER (WHERE popao), count(*) FILTER (WHERE option IS NOT NULL)"
        " FROM facts"
    ).fetchone()
    assert "破跑胡" in texts(at) and f"**{k:,}** of {n:,} selected wins" in texts(at)
    if k:
        assert len(at.dataframe[0].value) == min(k, 500)
        links = [p for p in at.get("page_link") if "replay" in p.proto.page]
        assert links and "at=decisive" in links[0].proto.query_string


def test_sql_page_runs_a_select_and_refuses_the_rest(fixture_store: Path) -> None:
    at = run_page("sql")
    assert_clean(at)
    assert len(at.dataframe[0].value) == 5  # 荒庄 rate per run
    at.text_area(key="sql_text").set_value("COPY hands TO '/tmp/x.csv'").run()
    assert any("Not run" in e.value for e in at.error)
    at.text_area(key="sql_text").set_value("SELECT * FROM read_csv('/etc/passwd')").run()
    assert any(
        "Not run: the table function read_csv() is not available" in e.value for e in at.error
    )
    at.text_area(key="sql_text").set_value("SELECT * FROM range(5000)")
    at.number_input(key="sql_limit").set_value(100).run()
    assert len(at.dataframe[0].value) == 100
    assert any("stopped at the limit" in c.value for c in at.caption)
    # the sidebar's selection as named parameters
    at.session_state["f_runs"] = ["base", "dup"]
    at.text_area(key="sql_text").set_value(
        "SELECT DISTINCT run FROM hands WHERE list_contains($runs, run) ORDER BY run"
    )
    at.number_input(key="sql_limit").set_value(1000).run()
    assert list(at.dataframe[0].value["run"]) == ["base", "dup"]
    at.text_area(key="sql_text").set_value(
        "SELECT count(*) FROM range(100000000) a, range(100000000) b"
    )
    at.number_input(key="sql_timeout").set_value(1).run()
    assert any("stopped after 1 s" in e.value for e in at.error)


def test_a_page_keeps_its_widgets_when_the_user_comes_back(fixture_store: Path) -> None:
    """Streamlit drops the value of a widget that a run does not show: without ui.keep, the
    SQL page came back with an empty query and the error "Not run: empty query"."""
    at = run_page("sql")
    at.selectbox(key="sql_example").set_value("runs").run()
    at.text_area(key="sql_text").set_value("SELECT 41 + 1 AS answer")
    at.number_input(key="sql_limit").set_value(7).run()
    at.switch_page(PAGES["huxi"]).run()
    at.radio(key="huxi_metric").set_value("score").run()
    at.switch_page(PAGES["overview"]).run()
    at.switch_page(PAGES["sql"]).run()
    assert_clean(at)
    assert at.selectbox(key="sql_example").value == "runs"
    assert at.text_area(key="sql_text").value == "SELECT 41 + 1 AS answer"
    assert at.number_input(key="sql_limit").value == 7
    assert at.dataframe[0].value["answer"].tolist() == [42]
    at.switch_page(PAGES["huxi"]).run()
    assert at.radio(key="huxi_metric").value == "score"


# ---------------------------------------------------------------------------------------------
# Stores that cannot be shown as they are: a message each, never a traceback
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", list(PAGES))
def test_missing_store(page: str, tmp_path: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    use_store(tmp_path / "nothing-here")
    at = run_page(page)
    assert not at.exception
    assert any("No store at" in e.value for e in at.error)


def test_empty_store(tmp_path: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "runs").mkdir()
    use_store(tmp_path)
    for page in PAGES:
        at = run_page(page)
        assert not at.exception
        assert any("has no runs yet" in e.value for e in at.error)


def test_run_still_being_written(store_dir: Path, tmp_path: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    data = copy_store(store_dir, tmp_path / "d", ["base", "dup"])
    run = data / "runs" / "run=base"
    edit_manifest(run, status="running")
    (run / ".lock").write_text(str(os.getpid()))  # a live writer
    use_store(data)
    for page in ("overview", "win_rates", "huxi", "replay"):
        at = run_page(page)
        assert_clean(at)
        assert any("still being written" in str(w.value) for w in at.warning)


def test_truncated_shard_leaves_the_run_out(store_dir: Path, tmp_path: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    data = copy_store(store_dir, tmp_path / "d", ["base", "dup"])
    shard = data / "runs" / "run=base" / "hands" / "part-00000.parquet"
    shard.write_bytes(shard.read_bytes()[:500])
    use_store(data)
    at = run_page("overview")
    assert not at.exception
    assert any("Run base is left out" in e.value and "corrupt" in e.value for e in at.error)
    assert {m.label: m.value for m in at.metric}["hands"] == "180"  # the other run


def test_corrupt_footer_of_listed_size_leaves_the_run_out(
    store_dir: Path, tmp_path: Path, use_store
) -> None:  # type: ignore[no-untyped-def]
    data = copy_store(store_dir, tmp_path / "d", ["base", "dup"])
    shard = data / "runs" / "run=base" / "hands" / "part-00000.parquet"
    raw = bytearray(shard.read_bytes())
    raw[-8:] = b"\0" * 8  # footer length and magic gone, same size
    shard.write_bytes(bytes(raw))
    use_store(data)
    at = run_page("win_rates")
    assert not at.exception, [e.value for e in at.exception]
    assert any("Run base is left out" in e.value and "corrupt" in e.value for e in at.error)


def test_corrupt_data_pages_are_a_message(store_dir: Path, tmp_path: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    data = copy_store(store_dir, tmp_path / "d", ["base"])
    shard = data / "runs" / "run=base" / "hands" / "part-00000.parquet"
    raw = bytearray(shard.read_bytes())
    for i in range(100, len(raw) // 2):  # garble the column chunks, keep the footer
        raw[i] = (raw[i] * 7 + 13) % 256
    shard.write_bytes(bytes(raw))
    use_store(data)
    for page in ("overview", "win_rates", "huang"):
        at = run_page(page)
        assert not at.exception, [e.value for e in at.exception]
        # The integrity scan leaves the edited run out, naming the shard (never its numbers).
        assert any(
            "left out" in e.value and "hands/part-00000.parquet" in e.value and "SHA-256" in e.value
            for e in at.error
        ), [e.value for e in at.error]


def test_a_bad_duckdb_limit_is_a_message(
    fixture_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAOHUZI_DUCKDB_MEMORY", "lots")  # `streamlit run` without the CLI's check
    at = run_page("overview")
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == [
        "PAOHUZI_DUCKDB_MEMORY='lots' is not a size such as 4GiB or 512MB: the dashboard cannot"
        " open the store's catalog with it."
    ]


def _strip_facts(run: Path) -> None:
    """Make ``run`` look recorded before the facts existed: no facts files listed, and its
    summaries of an older version (which summarised no facts, and which no reader uses)."""
    m = json.loads((run / "manifest.json").read_text())
    for s in m["shards"]:
        s["files"].pop("facts", None)
        if "summary" in s["files"]:
            s["files"]["summary"]["version"] = SUMMARY_VERSION - 1
    (run / "manifest.json").write_text(json.dumps(m))
    shutil.rmtree(run / "facts")


def test_a_run_without_facts_opens_and_the_pages_name_index(
    store_dir: Path, tmp_path: Path, use_store
) -> None:  # type: ignore[no-untyped-def]
    data = copy_store(store_dir, tmp_path / "d", ["base", "dup"])
    _strip_facts(data / "runs" / "run=base")
    use_store(data)
    at = run_page("huxi", ALL)
    assert_clean(at)
    assert any("paohuzi index base" in str(w.value) for w in at.warning)
    dup_wins = (
        open_store(data)
        .connect()
        .execute("SELECT count(*) FROM hands WHERE run = 'dup' AND winner IS NOT NULL")
        .fetchone()[0]
    )
    assert f"all {dup_wins:,} selected wins of the runs with facts" in texts(at)
    at = run_page("drilldown", {"cond": "popao", **ALL})
    assert_clean(at)
    assert any("paohuzi index base" in str(w.value) for w in at.warning)
    assert f"of {dup_wins:,} selected wins of the runs with facts" in texts(at)
