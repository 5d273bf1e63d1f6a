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


def test_a_histogram_has_a_quantitative_axis_with_gaps() -> None:
    """Whole numbers on a quantitative axis, each bar one wide and centred on its value: a
    value nobody reached is a gap (an ordinal axis put 40 next to 42)."""
    spec = charts.histogram("v:Q", "胡息", "share of wins", [tip("v:Q")], pick="pick")
    enc = spec["encoding"]
    assert enc["x"]["type"] == "quantitative" and enc["x2"] == {"field": "_hi"}
    assert [t["calculate"] for t in spec["transform"][:2]] == [
        'datum["v"] - 0.5',
        'datum["v"] + 0.5',
    ]
    assert spec["params"][0]["select"]["fields"] == ["v"]  # a click still names the value
    bars = charts.grouped_bars("v:Q", "胡息", "side:N", "share", [])
    assert bars["encoding"]["x"]["type"] == "quantitative" and "xOffset" not in bars["encoding"]


def test_categories_are_coloured_for_every_colour_vision() -> None:
    """The Okabe–Ito palette on every chart of categories, legends in full colour."""
    band = SPECS["band_line"]["layer"][0]["encoding"]["color"]
    for color in (
        band,
        SPECS["grouped_bars"]["encoding"]["color"],
        SPECS["stacked_hbars"]["encoding"]["color"],
    ):
        assert color["scale"]["range"] == charts.PALETTE
        assert color["legend"]["symbolOpacity"] == 1
    assert charts.PALETTE[-1] == "#F0E442"  # the pale yellow only after seven others
