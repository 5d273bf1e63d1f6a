"""The SQL page through AppTest (issue 20, item 10): a query that builds one huge value is
stopped at the memory limit with one line, a query after the host's paths is not run, and
the page goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dash_helpers import run_page
from streamlit.testing.v1 import AppTest


@pytest.fixture()
def fixture_store(store_dir: Path, use_store) -> Path:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    return store_dir


def _sql(at: AppTest, text: str) -> AppTest:
    at.text_area(key="sql_text").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_sql_page_stops_a_huge_value_at_the_memory_limit_bug(
    fixture_store: Path, monkeypatch: Any
) -> None:
    # the dashboard's process grew to 3.2 GB under a 1 GiB limit, 15 s past its time limit
    monkeypatch.setenv("PAOHUZI_SQL_MEMORY", "64MiB")
    at = _sql(run_page("sql"), "SELECT length(repeat('x', 1500000000)) AS n")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert errors[0].startswith(
        "Query stopped at the memory limit of 64 MiB (PAOHUZI_SQL_MEMORY; 2 GiB to spill to"
        " disk, PAOHUZI_SQL_TEMP): Out of Memory Error"
    ), errors
    assert all("n" not in d.value.columns for d in at.dataframe)  # no result table
    at = _sql(at, "SELECT 41 + 1 AS x")
    assert not at.error and at.dataframe[0].value["x"].tolist() == [42]


def test_sql_page_refuses_the_hosts_settings_bug(fixture_store: Path) -> None:
    # reverse(current_setting('secret_directory')) showed the home directory backwards
    at = _sql(run_page("sql"), "SELECT reverse(current_setting('secret_directory')) AS s")
    assert [e.value for e in at.error] == [
        "Not run: current_setting() is not available here: it reads the server's settings"
    ]
    assert all("s" not in d.value.columns for d in at.dataframe)  # no result table
    at = _sql(at, "SELECT reverse(value) AS v FROM catalog_meta")
    assert [e.value for e in at.error] == [
        "Not run: catalog_meta is not available here: it is the catalog's own record and"
        " names the store's location"
    ]
