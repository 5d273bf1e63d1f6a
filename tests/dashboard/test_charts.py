"""The pages' chart specifications (dashboard.charts) are valid Vega-Lite: each is checked
against the Vega-Lite JSON schema that Altair ships (Altair comes with streamlit)."""

from __future__ import annotations

from typing import Any

import pytest

from dashboard import charts
from dashboard.charts import field, tip

SPECS = {
    "rate_bars": charts.rate_bars("group", "win rate"),
    "rate_bars, longest first": charts.rate_bars("group", "share", pct=False, sort="-x"),
    "histogram": charts.histogram("v:O", "胡息", "share of wins", [tip("v:O")], pick="pick"),
    "grouped_bars": charts.grouped_bars("v:O", "胡息", "side:N", "share", [tip("side:N")]),
    "band_line": charts.band_line(
        field("s:Q", title="cards left", scale={"reverse": True}),
        "share:Q",
        "share of hands",
        field("key:N", title="rules"),
        [tip("share:Q", ".2%")],
        points=True,
    ),
    "stacked_hbars": charts.stacked_hbars("x:Q", "%", "kind:N", "where:N", [tip("x:Q")]),
}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    from altair.vegalite.v6.schema import core  # streamlit's own dependency

    return dict(core.load_schema())


@pytest.mark.parametrize("name", list(SPECS))
def test_a_chart_is_valid_vega_lite(name: str, schema: dict[str, Any]) -> None:
    from altair.utils.schemapi import validate_jsonschema

    spec = {**SPECS[name], "data": {"values": [{"group": "a", "p": 0.5, "lo": 0.4, "hi": 0.6}]}}
    validate_jsonschema(spec, schema)


def test_an_invalid_chart_is_refused(schema: dict[str, Any]) -> None:
    """The check can fail: a mark Vega-Lite does not have."""
    from altair.utils.schemapi import validate_jsonschema

    bad = {**charts.histogram("v:O", "胡息", "share", []), "mark": {"type": "pillar"}}
    with pytest.raises(Exception, match="pillar"):
        validate_jsonschema({**bad, "data": {"values": []}}, schema)
