"""Where the winning 胡息 comes from: the group types of the winning reading (吃, 碰, 偎, 跑,
提 on the table; 坎, 一句话, 绞, 碰胡, 将 in the hand). No streamlit.

The hands table stores the winning 胡息 but not its groups, so a sample of winning hands is
replayed (``replay.replayer.hand``) and the final reading's groups are counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from dashboard.services.cards import kind_label
from engine.errors import PaohuziError
from engine.rules import RuleSet
from replay.replayer.hand import HandLog, log_from_rows, replay_hand
from replay.replayer.views import outcome_view

TABLE_KINDS = {"chi", "peng", "wei", "chouwei", "pao", "ti"}


def sample_logs(
    hands: pd.DataFrame, events: pd.DataFrame, rules: Mapping[str, RuleSet]
) -> list[HandLog]:
    """Hand logs from ``sql.win_sample`` rows and ``sql.sample_events`` lists."""
    ev = {(str(r["run"]), int(r["hand_id"])): r for r in events.to_dict("records")}
    out = []
    for h in hands.to_dict("records"):
        key = (str(h["run"]), int(h["hand_id"]))
        if key[0] not in rules:
            continue
        e = ev.get(key)
        cols = (
            {"seat": [], "action": []}
            if e is None
            else {
                "seat": [int(x) for x in e["seat"]],
                "action": [int(x) for x in e["action"]],
            }
        )
        row = dict(h)
        row["deck"] = bytes(row["deck"])
        out.append(log_from_rows(key[0], rules[key[0]], row, cols))
    return out


def group_sources(logs: Iterable[HandLog]) -> tuple[pd.DataFrame, int, int]:
    """Per group type over the replayed winning readings: how many groups, in how many of
    the hands, their total 胡息 and its share of all winning 胡息. Also the number of hands
    used and of those whose replay failed."""
    groups: dict[str, int] = defaultdict(int)
    hands_with: dict[str, int] = defaultdict(int)
    huxi: dict[str, int] = defaultdict(int)
    used = failed = 0
    for log in logs:
        try:
            o = outcome_view(replay_hand(log))
        except PaohuziError:
            failed += 1
            continue
        if not o or not o.get("decomposition"):
            continue
        used += 1
        seen = set()
        for g in o["decomposition"]:
            k = str(g["kind"])
            groups[k] += 1
            huxi[k] += int(g["huxi"])
            seen.add(k)
        for k in seen:
            hands_with[k] += 1
    total = sum(huxi.values())
    rows: list[dict[str, Any]] = []
    for k in sorted(groups, key=lambda k: (-huxi[k], k)):
        rows.append(
            {
                "group type": kind_label(k),
                "where": "table" if k in TABLE_KINDS else "hand",
                "groups": groups[k],
                "in hands": hands_with[k],
                "胡息": huxi[k],
                "share of 胡息": huxi[k] / total if total else 0.0,
                "mean 胡息 per group": huxi[k] / groups[k] if groups[k] else 0.0,
            }
        )
    cols = [
        "group type",
        "where",
        "groups",
        "in hands",
        "胡息",
        "share of 胡息",
        "mean 胡息 per group",
    ]
    return pd.DataFrame(rows, columns=cols), used, failed
