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

Colours of categories are the Okabe–Ito palette (:data:`PALETTE`), told apart with any
colour vision, with legends in full colour (:func:`colour`); distributions over whole numbers
are drawn on a quantitative axis (:func:`histogram`, :func:`grouped_bars`), so a value
nobody reached is an empty gap, not a bar the next value's width closer.
"""

from __future__ import annotations

import json
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


#: The Okabe–Ito palette (Okabe & Ito 2008), the colour-blind-safe categorical colours, in an
#: order for lines on white: the pale yellow last.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
           "#F0E442"]  # fmt: skip


def colour(shorthand: str, *, title: Any = _DEFAULT, **more: Any) -> Spec:
    """A colour channel over categories: :data:`PALETTE`, and a legend whose swatches are in
    full colour (not the band's faint fill) with labels long enough for a run's name.

    >>> colour("key:N", title="rules")["legend"]
    {'symbolOpacity': 1, 'symbolStrokeWidth': 3, 'labelLimit': 320, 'orient': 'bottom', 'columns': 2}
    """
    legend = {"symbolOpacity": 1, "symbolStrokeWidth": 3, "labelLimit": 320,
              "orient": "bottom", "columns": 2}  # fmt: skip
    return field(shorthand, title=title, scale={"range": PALETTE}, legend=legend, **more)


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


def _whole_axis(title: str) -> Spec:
    return {"title": title, "format": "d", "tickMinStep": 1}


def histogram(
    x: str, x_title: str, y_title: str, tooltip: Sequence[Spec], pick: str | None = None
) -> Spec:
    """Bars of ``share`` (a percentage) per whole number ``x`` (its field; any type letter
    is read as quantitative), each one wide and centred on its value on a quantitative axis:
    a value with no hands is a gap. ``pick``: the name of a click selection of one bar (by
    ``x``), which dims the others.

    >>> histogram("v:O", "胡息", "share", [])["encoding"]["x"]["type"]
    'quantitative'
    """
    by = _ref(x)["field"]
    aria = (
        f"{json.dumps(x_title + ': ', ensure_ascii=False)} + datum[{json.dumps(by)}] +"
        f" {json.dumps('; ' + y_title + ': ', ensure_ascii=False)} + format(datum.share, '.2%')"
    )
    enc: Spec = {
        "x": {
            "field": "_lo",
            "type": "quantitative",
            "axis": _whole_axis(x_title),
            "scale": {"zero": False},
        },
        "x2": {"field": "_hi"},
        "y": field("share:Q", title=y_title, fmt="%"),
        "y2": {"datum": 0},
        "tooltip": list(tooltip),
        "description": {"field": "_aria", "type": "nominal"},
    }
    spec: Spec = {
        "transform": [
            {"calculate": f"datum[{json.dumps(by)}] - 0.5", "as": "_lo"},
            {"calculate": f"datum[{json.dumps(by)}] + 0.5", "as": "_hi"},
            {"calculate": aria, "as": "_aria"},
        ],
        "mark": {"type": "bar", "stroke": "white", "strokeWidth": 0.5},
        "encoding": enc,
    }
    if pick:
        spec["params"] = [
            {"name": pick, "select": {"type": "point", "fields": [by], "on": "click"}}
        ]
        enc["opacity"] = {"condition": {"param": pick, "value": 1.0}, "value": 0.6}
    return spec


def grouped_bars(x: str, x_title: str, group: str, y_title: str, tooltip: Sequence[Spec]) -> Spec:
    """Bars of ``share`` per whole number ``x`` (its field, on a quantitative axis: a value
    no group reached is a gap), side by side per ``group`` (one colour each) within the
    value's unit.

    >>> grouped_bars("v:O", "胡息", "side:N", "share", [])["encoding"]["x"]["type"]
    'quantitative'
    """
    by, g = _ref(x)["field"], _ref(group)["field"]
    return {
        "transform": [
            {"window": [{"op": "dense_rank", "as": "_gi"}], "sort": [{"field": g}]},
            {"joinaggregate": [{"op": "max", "field": "_gi", "as": "_groups"}]},
            {
                "calculate": f"datum[{json.dumps(by)}] - 0.45 + 0.9 * (datum._gi - 1) / datum._groups",
                "as": "_lo",
            },
            {"calculate": "datum._lo + 0.9 / datum._groups", "as": "_hi"},
        ],  # fmt: skip
        "mark": {"type": "bar", "opacity": 0.85},
        "encoding": {
            "x": {
                "field": "_lo",
                "type": "quantitative",
                "axis": _whole_axis(x_title),
                "scale": {"zero": False},
            },
            "x2": {"field": "_hi"},
            "y": field("share:Q", title=y_title, fmt="%"),
            "y2": {"datum": 0},
            "color": colour(group),
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
    color = {**color, "scale": {"range": PALETTE}, "legend": colour("k:N")["legend"]}
    return _layers({"x": x, "color": color}, band, line)


def stacked_hbars(x: str, x_fmt: str, y: str, color: str, tooltip: Sequence[Spec]) -> Spec:
    """Horizontal bars of ``x`` per ``y`` (longest first), stacked by ``color``."""
    return {
        "mark": {"type": "bar"},
        "encoding": {
            "x": field(x, fmt=x_fmt),
            "y": field(y, title=None, sort="-x"),
            "color": colour(color),
            "tooltip": list(tooltip),
        },
    }


#: The review classes' colours (none: grey), mildest first: Okabe–Ito's yellow, orange and
#: vermillion, darker as the class is worse (told apart by lightness too).
CLASS_COLORS = {
    "none": "#999999",
    "inaccuracy": "#F0E442",
    "mistake": "#E69F00",
    "blunder": "#D55E00",
}


def win_curve(n_steps: int, pick: str = "pick") -> Spec:
    """The review's win-probability graph: per seat under review a line of the win chance
    (%) after each of its decisions, its 95 % band, and a point per decision coloured by its
    class (inaccuracy, mistake, blunder) and sized up when it has one; ``pick``: a click
    selection of one point (by ``step``), nearest to the pointer. Steps are whole: the
    axis ticks only integers. A point's tooltip names the best option by win chance with the
    points lost against it, and the best by score with the score lost against it."""
    x = field("step:Q", title="step", scale={"domain": [0, max(1, n_steps)]},
              axis={"tickMinStep": 1, "format": "d"})  # fmt: skip
    y = field("win:Q", title="win chance after the decision (%)", scale={"domain": [0, 100]})
    # the seats' lines in Okabe–Ito colours other than the classes' (yellow, orange, red)
    seat = field("seat:N", title="seat", scale={"range": ["#0072B2", "#009E73", "#CC79A7",
                 "#000000"]}, legend={"symbolOpacity": 1})  # fmt: skip
    band = {
        "mark": {"type": "area", "opacity": 0.15, "interpolate": "step-after"},
        "encoding": {"x": x, "y": field("lo:Q", title=y["title"]), "y2": {"field": "hi"},
                     "color": seat},
    }  # fmt: skip
    line = {
        "mark": {"type": "line", "interpolate": "step-after"},
        "encoding": {"x": x, "y": y, "color": seat},
    }
    points = {
        "mark": {"type": "point", "filled": True, "stroke": "#333", "strokeWidth": 0.5},
        "params": [
            {
                "name": pick,
                "select": {"type": "point", "fields": ["step"], "on": "click", "nearest": True},
            }
        ],  # fmt: skip
        "encoding": {
            "x": x,
            "y": y,
            "fill": field(
                "class:N",
                title="class",
                scale={"domain": list(CLASS_COLORS), "range": list(CLASS_COLORS.values())},
            ),
            "size": {"condition": {"test": "datum['class'] != 'none'", "value": 140}, "value": 45},
            "shape": field("seat:N", title="seat"),
            "tooltip": [
                tip("step:Q"),
                tip("seat:N"),
                tip("played:N"),
                tip("win:Q", ".1f", "win % after"),
                tip("best_win:N", title="best by win chance"),
                tip("lost:Q", ".1f", "win points lost to it"),
                tip("best:N", title="best by score"),
                tip("score_loss:Q", ".2f", "score lost to it"),
                tip("class:N"),
            ],  # fmt: skip
        },
    }
    return {"height": 300, "layer": [band, line, points]}


def option_bars(value: str, title: str) -> Spec:
    """One bar per option of a decision (``value``: ``win`` or ``score``, with ``value_lo``
    … ``value_hi``), its 95 % interval as an error bar, coloured by ``mark_<value>`` (played,
    and the best option by this measure: the win chart's best is the likeliest to win, the
    score chart's the best score); the tooltip's ``mark`` names both."""
    colors = {"played · best": "#009E73", "played": "#D55E00", "best": "#009E73",
              "other": "#BBBBBB"}  # fmt: skip
    y = field("option:N", title=None, sort=None)
    bars = {
        "mark": {"type": "bar", "opacity": 0.8},
        "encoding": {
            "x": field(f"{value}:Q", title=title),
            "color": field(
                f"mark_{value}:N",
                title="option",
                scale={"domain": list(colors), "range": list(colors.values())},
            ),  # fmt: skip
            "tooltip": [
                tip("option:N"),
                tip(f"{value}:Q", ".2f", title),
                tip(f"{value}_lo:Q", ".2f", "95 % low"),
                tip(f"{value}_hi:Q", ".2f", "95 % high"),
                tip("mark:N"),
            ],  # fmt: skip
        },
    }
    err = {
        "mark": {"type": "errorbar", "ticks": True, "color": "#333"},
        "encoding": {"x": field(f"{value}_lo:Q", title=title), "x2": {"field": f"{value}_hi"}},
    }
    return _layers({"y": y}, bars, err)
