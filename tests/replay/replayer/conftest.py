"""The verifier's fixtures: a pristine store per module, and a private copy of it to damage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from verify_helpers import make_store


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("verify"))


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of the store to damage."""
    d = tmp_path / "store"
    shutil.copytree(pristine, d)
    return d
