"""The dashboard tests' fixtures: a small store, and pointing the app at a store (the builders
are in dash_helpers.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from dash_helpers import FIXTURE_RUNS, simulate


@pytest.fixture(scope="session")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("dash") / "data"
    for name, args in FIXTURE_RUNS:
        simulate(data, name, args)
    return data


@pytest.fixture()
def use_store(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Point the app at a store: ``use_store(path)`` (the app reads ``$PAOHUZI_DATA``)."""

    def use(path: Path) -> None:
        monkeypatch.setenv("PAOHUZI_DATA", str(path))

    return use
