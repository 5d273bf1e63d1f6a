"""Where the winning 胡息 comes from: the group types of the winning reading (吃, 碰, 偎, 跑,
提 on the table; 坎, 一句话, 绞, 碰胡, 将 in the hand). No streamlit.

Every selected win of the runs with facts counts (docs/LOG_FORMAT.md §12: each hand's
winning reading, derived when the shard was recorded or indexed); nothing is replayed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from dashboard.services.cards import kind_label
from engine.groups import TABLE_KINDS
from replay.analysis.figures.facts import GROUP_TYPES

_TABLE = {k.name.lower() for k in TABLE_KINDS}

COLUMNS = [
    "group type",
    "where",
    "groups",
    "in hands",
    "胡息",
    "share of 胡息",
    "mean 胡息 per group",
]


def group_table(row: Mapping[str, Any]) -> tuple[pd.DataFrame, int]:
    """Per group type over the winning readings (one row of
    :func:`replay.analysis.figures.facts.group_sources`): how many groups, in how many of the
    wins, their total 胡息 and its share of all winning 胡息; and the number of wins. Types
    with no group are left out.

    >>> t, wins = group_table({"wins": 2, **{f"{k}_{c}": 0 for k in GROUP_TYPES
    ...     for c in ("groups", "hands", "huxi")}, "kan_groups": 3, "kan_hands": 2,
    ...     "kan_huxi": 12})
    >>> wins, t["group type"].tolist(), float(t["share of 胡息"][0])
    (2, ['坎'], 1.0)
    """
    wins = int(row.get("wins") or 0)
    groups = {t: int(row.get(f"{t}_groups") or 0) for t in GROUP_TYPES}
    hands = {t: int(row.get(f"{t}_hands") or 0) for t in GROUP_TYPES}
    huxi = {t: int(row.get(f"{t}_huxi") or 0) for t in GROUP_TYPES}
    total = sum(huxi.values())
    rows = [
        {
            "group type": kind_label(t),
            "where": "table" if t in _TABLE else "hand",
            "groups": groups[t],
            "in hands": hands[t],
            "胡息": huxi[t],
            "share of 胡息": huxi[t] / total if total else 0.0,
            "mean 胡息 per group": huxi[t] / groups[t],
        }
        for t in sorted(GROUP_TYPES, key=lambda t: (-huxi[t], t))
        if groups[t]
    ]
    return pd.DataFrame(rows, columns=COLUMNS), wins
