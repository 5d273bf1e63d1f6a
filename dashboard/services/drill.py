"""Drill-down: the catalogue of hand conditions, their labels, the hand list as shown, the
破跑胡 check by replay, and the drill-down URL parameters. No streamlit.

>>> label("huxi_ge", 30)
'winning 胡息 ≥ 30'
>>> parse_params({"cond": "huxi_ge", "value": "30"})
('huxi_ge', 30)
>>> parse_params({"cond": "DROP TABLE", "value": "x"})
(None, None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from dashboard.services.stats import OUTCOME_LABELS, SOURCE_LABELS, card_text
from replay.analysis.figures.drill import CONDITIONS

#: How each condition reads; ``{v}`` is its value, ``{name}`` a 名堂 or source name.
LABELS: dict[str, str] = {
    "huxi_ge": "winning 胡息 ≥ {v}",
    "huxi_eq": "winning 胡息 = {v}",
    "deng_eq": "等 = {v}",
    "fan_eq": "番 = {v}",
    "score_ge": "score ≥ {v}",
    "score_eq": "score = {v}",
    "mingtang": "wins carrying the 名堂 {name}",
    "pinghu": "平胡 (wins without a 名堂)",
    "source": "wins on a card from: {name}",
    "zimo": "自摸 wins",
    "dealer_win": "wins by the dealer",
    "tianhu_auto": "3提/5坎 天胡 (dealt)",
    "huang": "荒庄",
    "huang_retained": "荒庄 with the dealer retained",
    "stock_left": "hands that ended with {v} cards left in the stock",
    "retained_dealer": "hands dealt by a dealer kept after 荒庄",
    "popao": "won by 破跑胡 (free hu while a 跑 of the card was possible)",
    "chouhu": "hands with a 臭胡 (a 胡 declined)",
    "renpeng": "hands with a 忍碰 (a 碰 declined)",
    "bakuai": "hands with a 八块 (a seat's second 跑 or 提)",
}

#: Conditions offered in the page's picker, in this order.
MENU = [
    "huxi_ge",
    "score_ge",
    "popao",
    "huang_retained",
    "huang",
    "mingtang",
    "pinghu",
    "source",
    "zimo",
    "dealer_win",
    "tianhu_auto",
    "retained_dealer",
    "stock_left",
    "huxi_eq",
    "deng_eq",
    "fan_eq",
    "score_eq",
    "chouhu",
    "renpeng",
    "bakuai",
]

DEFAULT_VALUES = {"huxi_ge": 30, "score_ge": 10, "stock_left": 0, "mingtang": 0, "source": 0}


def takes_value(cond: str) -> bool:
    return CONDITIONS[cond][1]


def label(cond: str, value: int | None, mingtang_names: Mapping[int, str] | None = None) -> str:
    name = ""
    if cond == "mingtang" and value is not None:
        name = (mingtang_names or {}).get(int(value), f"bit {value}")
    elif cond == "source" and value is not None:
        name = SOURCE_LABELS.get(int(value), str(value))
    return LABELS[cond].format(v=value, name=name)


def parse_params(qp: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """``(cond, value)`` from URL parameters ``cond`` and ``value``; unknown ones are
    dropped (they only ever select among :data:`CONDITIONS`, never reach SQL as text)."""
    cond = qp.get("cond")
    if not isinstance(cond, str) or cond not in CONDITIONS:
        return None, None
    raw = qp.get("value")
    if not takes_value(cond):
        return cond, None
    try:
        value = int(str(raw))
    except (TypeError, ValueError):
        value = DEFAULT_VALUES.get(cond, 0)
    return cond, value


def mingtang_names(codes: pd.DataFrame) -> dict[int, str]:
    return {int(r["bit"]): str(r["name"]) for r in codes.to_dict("records")}


def _names(mask: Any, names: Mapping[int, str]) -> str:
    try:
        m = int(mask)
    except (TypeError, ValueError):
        return ""
    return " ".join(names[b] for b in sorted(names) if m >> b & 1)


def _opt_int(x: Any) -> Any:
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA:
        return None
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


def hand_table(df: pd.DataFrame, names: Mapping[int, str]) -> pd.DataFrame:
    """The hand list as shown: codes as words, cards as characters, 名堂 by name."""
    rows = []
    for r in df.to_dict("records"):
        winner = _opt_int(r.get("winner"))
        source = _opt_int(r.get("source"))
        rows.append(
            {
                "run": r["run"],
                "hand": int(r["hand_id"]),
                "dealer": int(r["dealer"]),
                "outcome": OUTCOME_LABELS.get(int(r["outcome"]), str(r["outcome"])),
                "winner": "–" if winner is None else str(winner),
                "source": "–"
                if winner is None
                else SOURCE_LABELS.get(255 if source is None else source, str(source)),
                "hu card": card_text(_opt_int(r.get("hu_card"))),
                "胡息": _opt_int(r.get("huxi")),
                "等": _opt_int(r.get("deng")),
                "番": _opt_int(r.get("fan")),
                "score": _opt_int(r.get("score")),
                "名堂": _names(r.get("mingtang"), names),
                "stock left": int(r["stock_left"]),
                "steps": int(r["n_events"]),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "run",
            "hand",
            "dealer",
            "outcome",
            "winner",
            "source",
            "hu card",
            "胡息",
            "等",
            "番",
            "score",
            "名堂",
            "stock left",
            "steps",
        ],
    )
