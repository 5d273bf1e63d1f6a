"""Never silently wrong (issue 10), through AppTest: a replay link to no hand of the store is
a message, not hand 0; the SQL page's query is bounded (memory, value and result size) and
says so; no page shows an absolute path of the server (the store's location, the temporary
catalog, the home directory)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from dash_helpers import PAGES, copy_store, run_page
from streamlit.testing.v1 import AppTest

from dashboard import db


@pytest.fixture()
def fixture_store(store_dir: Path, use_store) -> Path:  # type: ignore[no-untyped-def]
    use_store(store_dir)
    return store_dir


def _hand_shown(at: AppTest) -> bool:
    return bool(at.get("html")) or bool(at.slider) or bool(at.get("number_input"))


# --- the replay's URL parameters -----------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"run": "base", "hand": "999999"}, "Run base has no hand 999999: its hands are 0 – 239."),
        ({"run": "base", "hand": "-3"}, "hand '-3' is not a hand id"),
        ({"run": "base", "hand": "seven"}, "hand 'seven' is not a hand id"),
        ({"run": "nope", "hand": "3"}, "No run 'nope' in the store"),
        ({"run": "base", "hand": "7", "step": "99999"}, "the link's step 99999 is beyond them"),
    ],
)
def test_replay_link_to_no_hand_is_a_message_not_hand_0(
    fixture_store: Path, query: dict[str, str], expected: str
) -> None:
    at = run_page("replay", query)
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert any(expected in e for e in errors), errors
    assert not _hand_shown(at)  # neither hand 0 nor any other
    # the way out: clear the link, then pick a hand
    at.button(key="rp_clear_link").click().run()
    assert not at.exception and not at.error
    assert _hand_shown(at)


# --- the SQL page's limits -----------------------------------------------------------------


def _sql(at: AppTest, text: str) -> AppTest:
    at.text_area(key="sql_text").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_sql_huge_value_is_cut_with_a_note(fixture_store: Path) -> None:
    at = _sql(run_page("sql"), "SELECT repeat('x', 150000000) AS big, 7 AS n")
    assert not at.error, [e.value for e in at.error]
    frame = at.dataframe[0].value
    big = frame["big"].iloc[0]
    assert big.endswith("…") and len(big.encode()) <= 100_000 + 3  # the default cell limit
    assert int(frame["n"].iloc[0]) == 7
    assert any("1 value longer than 100 KB" in str(w.value) for w in at.warning)


def test_sql_result_stops_at_its_byte_limit(fixture_store: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("PAOHUZI_SQL_MAX_RESULT", "1MB")
    monkeypatch.setenv("PAOHUZI_SQL_MAX_CELL", "10KB")
    at = _sql(run_page("sql"), "SELECT range AS i, repeat('y', 50000) AS s FROM range(1000)")
    assert not at.error, [e.value for e in at.error]
    frame = at.dataframe[0].value
    assert 0 < len(frame) < 1000 and list(frame["i"]) == list(range(len(frame)))
    assert all(len(s.encode()) <= 10_000 + 3 for s in frame["s"])
    warnings = " ".join(str(w.value) for w in at.warning)
    assert "larger than the limit of 1 MB" in warnings and "cut there" in warnings


def test_sql_bad_limit_setting_is_a_message(fixture_store: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("PAOHUZI_SQL_MEMORY", "lots")
    at = run_page("sql")
    assert not at.exception
    assert any("PAOHUZI_SQL_MEMORY='lots' is not a size" in e.value for e in at.error)


def test_sql_connection_has_the_configured_settings(fixture_store: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("PAOHUZI_SQL_MEMORY", "300MiB")
    monkeypatch.setenv("PAOHUZI_SQL_TEMP", "700MiB")
    monkeypatch.setenv("PAOHUZI_SQL_THREADS", "1")
    at = _sql(run_page("sql"), "SELECT 41 + 1 AS x")
    assert not at.error and not at.warning, [w.value for w in at.warning]
    # the query's own process (duckdb_settings() itself is refused on the page: it names
    # the server's directories)
    res = db.run_user_sql("SELECT 1 AS x", 10, 10, limits=db.sql_limits())
    assert dict(res.settings) == {
        "max_temp_directory_size": "700.0 MiB",
        "memory_limit": "300.0 MiB",
        "threads": "1",
    }


def test_sql_memory_hungry_query_is_a_message(fixture_store: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("PAOHUZI_SQL_MEMORY", "64MiB")
    monkeypatch.setenv("PAOHUZI_SQL_TEMP", "0")
    monkeypatch.setenv("PAOHUZI_SQL_THREADS", "1")
    at = _sql(run_page("sql"), "SELECT list(range) AS l FROM range(50000000)")
    errors = [e.value for e in at.error]
    assert any("Out of Memory" in e and "PAOHUZI_SQL_MEMORY" in e for e in errors), errors
    # the dashboard goes on: the next query runs
    at = _sql(at, "SELECT 41 + 1 AS x")
    assert int(at.dataframe[0].value["x"].iloc[0]) == 42


# --- no absolute path on any page ------------------------------------------------------------


def rendered_text(at: AppTest) -> str:
    """Everything the run put on the page: each element's message (text, markdown, alerts,
    captions, widgets, charts) and each table's cells."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if getattr(node, "type", None) in ("dataframe", "arrow_data_frame", "table"):
            out.append(node.value.to_csv())
        elif getattr(node, "proto", None) is not None:
            out.append(str(node.proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    out += [str(e.value) for e in at.exception]
    return "\n".join(out)


def assert_no_server_path(text: str, store: Path) -> None:
    forbidden = {
        str(store),
        os.path.realpath(store),
        str(store.parent),
        str(Path.home()) + "/",
        tempfile.gettempdir().rstrip("/") + "/",
        "paohuzi-dashboard-",
    }
    for f in forbidden:
        assert f not in text, (f, text[max(0, text.find(f) - 200) : text.find(f) + 200])


def test_no_page_shows_an_absolute_path(store_dir: Path, tmp_path: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    data = copy_store(store_dir, tmp_path / "data", ["base", "dup"])
    use_store(data)
    for page in PAGES:
        assert_no_server_path(rendered_text(run_page(page)), data)
    # a replay link to no hand, and the SQL page asked for the server's own files
    assert_no_server_path(rendered_text(run_page("replay", {"run": "x", "hand": "1"})), data)
    at = run_page("sql")
    for q in (
        "SELECT * FROM duckdb_databases()",
        "SELECT name, value FROM duckdb_settings()",
        "SELECT current_setting('temp_directory') AS t",
        "SELECT * FROM read_parquet('runs/run=base/hands/part-00000.parquet')",
    ):
        assert_no_server_path(rendered_text(_sql(at, q)), data)
    # a shard that went missing, and one that is corrupt: the run is left out, its file named
    # relative to the store or its run (a fresh copy: the scan of a store is cached on its manifests)
    data = copy_store(store_dir, tmp_path / "damaged", ["base", "dup"])
    use_store(data)
    (data / "runs" / "run=dup" / "events" / "part-00000.parquet").unlink()
    shard = data / "runs" / "run=base" / "hands" / "part-00000.parquet"
    shard.write_bytes(shard.read_bytes()[:500])
    at = run_page("overview")
    text = rendered_text(at)
    assert_no_server_path(text, data)
    assert "Run base is left out" in text and "hands/part-00000.parquet" in text
    assert "Run dup is left out" in text and "events/part-00000.parquet" in text


def test_missing_store_is_named_without_its_path(tmp_path: Path, use_store) -> None:  # type: ignore[no-untyped-def]
    use_store(tmp_path / "nothing-here")
    at = run_page("overview")
    text = rendered_text(at)
    assert_no_server_path(text, tmp_path / "nothing-here")
    assert any("No store at …/nothing-here" in e.value for e in at.error)
