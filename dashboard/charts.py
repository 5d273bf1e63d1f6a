"""The pages' charts as Vega-Lite specifications (plain dicts; no streamlit, no Altair).

``st.vega_lite_chart(frame, spec)`` draws them (:func:`dashboard.ui.chart`). They were Altair
charts, and building those took about half of a chart page's server render, 30–40 ms a chart
(Altair wraps every channel through its JSON schema, then validates the whole chart against
it). The specifications below are what Altair wrote for those charts.

Shorthands as in Altair: a field with its type after a colon (``"v:O"``: ordinal,
``"p:Q"``: quantitative, ``"key:N"``: nominal).

>>> field("p:Q", title="win rate", fmt="%")
{'field': 'p', 'type': 'quantitative', 'title': 'win rate', 'axis': {'format': '%'}}
>>> rate_bars("seat", "win rate")["layer"][1]["mark"]
{'type': 'errorbar', 'ticks': True, 'color': '#333'}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Spec = dict[str, Any]

_TYPES = {"Q": "quantitative", "O": "ordinal", "N": "nominal", "T": "temporal"}
_DEFAULT: Any = object()  # no title given: Vega-Lite's own (the field's name)


def _ref(shorthand: str) -> Spec:
    """The field and type of ``"name:T"``."""
    name, _, t = shorthand.rpartition(":")
    return {"field": name, "type": _TYPES[t]}


def field(shorthand: str, *, title: Any = _DEFAULT, fmt: str | None = None, **more: Any) -> Spec:
    """One encoding channel: ``"name:T"``, a title (``None``: no title) and axis format if
    given, and any other Vega-Lite channel properties (``sort``, ``scale`` …; ``sort=None``
    keeps the data's order)."""
    out = _ref(shorthand)
    if title is not _DEFAULT:
        out["title"] = title
    if fmt is not None:
        out["axis"] = {"format": fmt}
    out.update(more)
    return out


def tip(shorthand: str, fmt: str | None = None, title: str | None = None) -> Spec:
    """One tooltip line."""
    out = _ref(shorthand)
    if fmt is not None:
        out["format"] = fmt
    if title is not None:
        out["title"] = title
    return out


def _layers(shared: Spec, *layers: Spec) -> Spec:
    """Layers drawn over each other, each with the ``shared`` channels (as Altair writes a
    layered chart)."""
    return {"layer": [{**la, "encoding": {**shared, **la["encoding"]}} for la in layers]}


def rate_bars(category: str, title: str, pct: bool = True, sort: str | None = None) -> Spec:
    """Horizontal bars of ``p`` with ``lo``–``hi`` error bars, one per ``category`` (in the
    data's order, or ``sort``: ``"-x"`` longest first)."""
    fmt = ".2%" if pct else ".2f"
    bars = {
        "mark": {"type": "bar", "opacity": 0.75},
        "encoding": {
            "x": field("p:Q", title=title, fmt="%" if pct else ""),
            "tooltip": [
                tip(f"{category}:N"),
                tip("p:Q", fmt, "value"),
                tip("lo:Q", fmt, "95 % low"),
                tip("hi:Q", fmt, "95 % high"),
            ],
        },
    }
    err = {
        "mark": {"type": "errorbar", "ticks": True, "color": "#333"},
        "encoding": {"x": field("lo:Q", title=title), "x2": {"field": "hi"}},
    }
    return _layers({"y": field(f"{category}:N", title=None, sort=sort)}, bars, err)


def histogram(
    x: str, x_title: str, y_title: str, tooltip: Sequence[Spec], pick: str | None = None
) -> Spec:
    """Bars of ``share`` (a percentage) per ``x``; ``pick``: the name of a click selection
    of one bar (by ``x``), which dims the others."""
    enc: Spec = {
        "x": field(x, title=x_title),
        "y": field("share:Q", title=y_title, fmt="%"),
        "tooltip": list(tooltip),
    }
    spec: Spec = {"mark": {"type": "bar"}, "encoding": enc}
    if pick:
        by = _ref(x)["field"]
        spec["params"] = [
            {"name": pick, "select": {"type": "point", "fields": [by], "on": "click"}}
        ]
        enc["opacity"] = {"condition": {"param": pick, "value": 1.0}, "value": 0.6}
    return spec


def grouped_bars(x: str, x_title: str, group: str, y_title: str, tooltip: Sequence[Spec]) -> Spec:
    """Bars of ``share`` per ``x``, side by side per ``group`` (one colour each)."""
    return {
        "mark": {"type": "bar", "opacity": 0.6},
        "encoding": {
            "x": field(x, title=x_title),
            "xOffset": field(group),
            "y": field("share:Q", title=y_title, fmt="%"),
            "color": field(group),
            "tooltip": list(tooltip),
        },
    }


def band_line(
    x: Spec, y: str, y_title: str, color: Spec, tooltip: Sequence[Spec], points: bool = False
) -> Spec:
    """One line of ``y`` per ``color`` over ``x``, with its ``lo``–``hi`` band."""
    band = {
        "mark": {"type": "area", "opacity": 0.2},
        "encoding": {"y": field("lo:Q", title=y_title, fmt="%"), "y2": {"field": "hi"}},
    }
    line = {
        "mark": {"type": "line", "point": True} if points else {"type": "line"},
        "encoding": {"y": field(y), "tooltip": list(tooltip)},
    }
    return _layers({"x": x, "color": color}, band, line)


def stacked_hbars(x: str, x_fmt: str, y: str, color: str, tooltip: Sequence[Spec]) -> Spec:
    """Horizontal bars of ``x`` per ``y`` (longest first), stacked by ``color``."""
    return {
        "mark": {"type": "bar"},
        "encoding": {
            "x": field(x, fmt=x_fmt),
            "y": field(y, title=None, sort="-x"),
            "color": field(color),
            "tooltip": list(tooltip),
        },
    }
