"""The service tests' store (tests/helpers/service_helpers.py: runs ``a`` and ``dup``),
recorded once per test module, a client of ``create_app`` over it, and run ``a``'s hands
as JSON replay files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from service_helpers import record

    return record(tmp_path_factory.mktemp("service"))


@pytest.fixture(scope="module")
def client(store: Path) -> Any:
    from fastapi.testclient import TestClient

    from paohuzi.service.app import create_app

    with TestClient(create_app(store), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def replay_lines(store: Path) -> list[str]:
    """Every hand of run ``a`` (40) as a JSON replay file on one line, in hand order."""
    from replay.replayer import replay_file

    return [
        json.dumps(
            json.loads(replay_file.export_hand(store, "a", i, "json")[0]), ensure_ascii=False
        )
        for i in range(40)
    ]
