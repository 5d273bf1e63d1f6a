"""The service tests' store (tests/helpers/service_helpers.py: runs ``a`` and ``dup``),
recorded once per test module, and a client of ``create_app`` over it."""

from __future__ import annotations

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

    from replay.service.app import create_app

    with TestClient(create_app(store), raise_server_exceptions=False) as c:
        yield c
