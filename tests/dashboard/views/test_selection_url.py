"""The selection in the URL and the tables' downloads (issue 60), through AppTest on the
fixture store: the first view is the main run (one rule set); the sidebar's runs, rules,
policies and seats, and a page's own choices (a distribution, a curve, the compared sides, a
drill-down's condition, a replay's hand and step), are in the query string, so a link opens
the same view in a new session; a link naming runs the store lacks says so; every table of a
page has its CSV and Parquet buttons."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dash_helpers import APP, run_page
from streamlit.testing.v1 import AppTest


@pytest.fixture()
def fixture_store(store_dir: Path, use_store) -> Path:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    return store_dir


def _open(page_path: str, query: dict[str, Any]) -> AppTest:
    """A new session on ``page_path`` with the query string ``query`` (a link opened)."""
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params.update(query)
    at.run()
    if page_path:
        at.switch_page(page_path)
        at.query_params.update(query)
        at.run()
    return at


def _infos(at: AppTest) -> str:
    return "\n".join(str(i.value) for i in at.info)


def test_the_first_view_is_the_main_run_and_in_the_url(fixture_store: Path) -> None:
    at = run_page("huxi")
    assert not at.exception and not at.error
    assert at.session_state["f_runs"] == ["base"]
    assert at.query_params["runs"] == "base" and at.query_params["metric"] == "huxi"
    assert "pools" not in _infos(at)  # one rule set: nothing pooled


def test_a_link_reproduces_the_view(fixture_store: Path) -> None:
    at = run_page("huxi", {"runs": "base,min10", "metric": "score"})
    assert not at.exception and not at.error
    assert at.session_state["f_runs"] == ["base", "min10"]
    assert at.radio(key="huxi_metric").value == "score"
    assert "The selection pools 2 rule sets" in _infos(at)  # said on the page
    url = dict(at.query_params)
    assert url["runs"] == ["base", "min10"] and url["metric"] == "score"
    quantiles = at.table[0].value
    # the same link in another session: the same selection, the same numbers
    again = _open("views/huxi.py", url)
    assert not again.exception and not again.error
    assert again.session_state["f_runs"] == ["base", "min10"]
    assert again.radio(key="huxi_metric").value == "score"
    assert again.table[0].value.equals(quantiles)
    assert dict(again.query_params) == url


def test_rules_policies_and_seats_in_the_url(fixture_store: Path) -> None:
    at = run_page("overview", {"runs": "*", "rules": "hunan-4p", "seats": "3"})
    assert not at.exception and not at.error
    assert at.session_state["f_rules"] == ["hunan-4p"] and at.session_state["f_seats"] == [3]
    assert {m.label: m.value for m in at.metric}["hands"] == "80"  # run four
    assert "Headline rates · hunan-4p" in [s.value for s in at.subheader]
    url = dict(at.query_params)
    assert (url["runs"], url["rules"], url["seats"]) == ("*", "hunan-4p", "3")
    at.session_state["f_policies"] = ["greedy"]
    at.run()
    assert at.query_params["policies"] == "greedy"


def test_a_link_to_runs_the_store_lacks_says_so(fixture_store: Path) -> None:
    at = run_page("overview", {"runs": "gone,mixed"})
    assert not at.exception and not at.error
    assert any("not in the store: gone" in str(w.value) for w in at.sidebar.warning)
    assert at.session_state["f_runs"] == ["mixed"]
    at.session_state["f_runs"] = ["dup"]  # another choice: the link's note is gone
    at.run()
    assert not at.sidebar.warning
    at = run_page("overview", {"runs": "gone"})  # none left: the first view, said so
    assert any("not in the store: gone" in str(w.value) for w in at.sidebar.warning)
    assert at.session_state["f_runs"] == ["base"]


def test_a_page_link_carries_the_selection(fixture_store: Path) -> None:
    at = run_page("huxi", {"runs": "base,mixed"})
    links = {p.proto.label: p.proto.query_string for p in at.get("page_link")}
    assert links["Wins with 胡息 ≥ 30"] == "cond=huxi_ge&value=30&runs=base&runs=mixed"


def test_the_pages_own_choices_are_in_the_url(fixture_store: Path) -> None:
    at = run_page("huang")
    at.radio(key="huang_curve_key").set_value("run").run()
    assert at.query_params["curve"] == "run"
    at = _open("views/huangzhuang.py", {"runs": "base", "curve": "policies"})
    assert at.radio(key="huang_curve_key").value == "policies"
    # the drill-down's condition
    at = run_page("drilldown", {"cond": "huxi_ge", "value": "20"})
    at.selectbox(key="dd_cond").set_value("huang_retained").run()
    assert not at.exception and not at.error
    assert at.query_params["cond"] == "huang_retained" and "value" not in at.query_params
    # the replay: the hand and the step, the sidebar's selection kept beside them
    at = run_page("replay", {"run": "base", "hand": "7", "at": "decisive", "runs": "base,dup"})
    assert not at.exception and not at.error
    url = dict(at.query_params)
    assert url["runs"] == ["base", "dup"] and url["run"] == "base" and url["hand"] == "7"
    assert int(url["step"]) == at.slider(key="rp_step").value and "at" not in url
    # the compared sides
    at = _open("views/compare.py", {"runs": "base", "a": "dup", "b": "four,min10"})
    assert at.multiselect(key="cmp_A_runs").value == ["dup"]
    assert at.multiselect(key="cmp_B_runs").value == ["four", "min10"]


@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("overview", {"runs": "*"}),
        ("win_rates", {"runs": "*"}),
        ("huxi", {}),
        ("huang", {}),
        ("mingtang", {}),
        ("compare", {}),
        ("actions", {}),
        ("drilldown", {"cond": "huxi_ge", "value": "20"}),
        ("replay", {"run": "base", "hand": "7", "step": "9999"}),
        ("sql", {}),
    ],
)
def test_every_table_has_its_downloads(
    fixture_store: Path, page: str, query: dict[str, str]
) -> None:
    if page == "replay":  # the hand's end: its decomposition, 名堂 and settlement too
        at = run_page(page, {"run": "base", "hand": "7"})
        at.button[3].click().run()
    else:
        at = run_page(page, query)
    assert not at.exception and not at.error
    tables = len(at.table) + len(at.dataframe)
    assert tables > 0
    labels = [b.label for b in at.download_button]
    assert labels.count("CSV") == labels.count("Parquet") == tables, (page, labels)
