"""The doctests of the dashboard's pure modules (``make test`` collects doctests of engine
and replay only, so the dashboard's are run from here)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "dashboard.charts",
    "dashboard.services.cards",
    "dashboard.services.drill",
    "dashboard.services.filters",
    "dashboard.services.links",
    "dashboard.services.paths",
    "dashboard.services.replay",
    "dashboard.services.sqlguard",
    "dashboard.services.sqllimits",
    "dashboard.services.sqlprocess",
    "dashboard.services.sqlworker",
    "dashboard.services.stats",
    "dashboard.ui",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
