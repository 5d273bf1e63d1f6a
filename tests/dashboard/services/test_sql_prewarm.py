"""The SQL page's first query does not start a process (issue 65): the dashboard's warm-up
opens one on the prepared catalog (sqlprocess.prewarm) and the page's example query is
answered by it; a second warm-up keeps the one it has."""

from __future__ import annotations

from pathlib import Path

import pytest
from dash_helpers import copy_store

from dashboard.services import sqlprocess
from dashboard.services.sqllimits import SqlLimits
from replay.store.catalog import prepare_catalog
from replay.store.scan import scan_store


def test_the_first_query_finds_a_process_opened_by_the_warm_up(
    store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = copy_store(store_dir, tmp_path / "data", ["base"])
    state = scan_store(data)
    prepared = tmp_path / "catalog.duckdb"
    prepare_catalog(state, prepared)
    limits = SqlLimits()
    started: list[object] = []
    real = sqlprocess._Child.__init__

    def counting(self: object, key: object) -> None:
        started.append(key)
        real(self, key)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlprocess._Child, "__init__", counting)
    try:
        assert sqlprocess.prewarm(state=state, prepared=prepared, limits=limits)
        assert sqlprocess.prewarm(state=state, prepared=prepared, limits=limits)
        assert len(started) == 1  # the second warm-up found it kept
        res = sqlprocess.run_query(
            "SELECT count(*) AS n FROM hands",
            state=state,
            prepared=prepared,
            limits=limits,
            limit=10,
            timeout=60,
        )
        assert res.error is None and res.frame is not None and int(res.frame["n"][0]) == 240
        assert len(started) == 1  # answered by the warmed process
    finally:
        sqlprocess.close_all()
