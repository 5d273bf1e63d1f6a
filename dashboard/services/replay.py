"""The Replay page's data: a hand's view at a step (from ``replay.replayer.hand`` and
``replay.replayer.views``), shaped into HTML blocks and tables. No streamlit.

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> from replay.replayer.hand import HandLog
>>> log = HandLog.from_history(find_rules("hunan"), shuffle_deck(4), 0, [])
>>> v = view_at(log, 0, None)
>>> v["step"], len(seat_blocks(v))
(0, 3)
>>> decisive_step(log)
0
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from dashboard.services.cards import hidden_html, kind_label, meld_html, view_cards_html
from replay.replayer.hand import HandLog, replay_hand
from replay.replayer.views import seen_text, state_view

HU_KIND = 1  # ActionKind.HU


def decisive_step(log: HandLog) -> int:
    """Where a drill-down opens a hand: the state before the winning 胡 decision (its options
    shown), else the end (荒庄) — or the deal for a hand without decisions."""
    kinds = log.event_rows.get("kind") or []
    seats = log.event_rows.get("seat") or []
    winner = log.hand.get("winner")
    for k, (kind, seat) in enumerate(zip(kinds, seats)):
        if kind == HU_KIND and (winner is None or seat == winner):
            return k
    return log.n_steps


def event_step(log: HandLog, at: str) -> int:
    """The first step at which ``at`` happened (the state before that decision, its options
    shown): a 胡 declined (``chouhu``), a 碰 declined (``renpeng``), a seat's second 跑 or 提
    (``bakuai``); the decisive step when the hand has none (as the figures define them,
    replay.analysis.figures.events)."""
    from replay.analysis.figures.events import FOUR, HU, PASS, PENG

    ev = log.event_rows
    kinds, seats = ev.get("kind") or [], ev.get("seat") or []
    opts, legal = ev.get("options") or [], ev.get("n_legal") or []
    fours: dict[int, int] = {}
    for k, (kind, seat) in enumerate(zip(kinds, seats)):
        if at in ("chouhu", "renpeng"):
            bit = HU if at == "chouhu" else PENG
            if kind == PASS and (opts[k] >> bit) & 1 and legal[k] >= 2:
                return k
        elif at == "bakuai" and kind in FOUR:
            fours[seat] = fours.get(seat, 0) + 1
            if fours[seat] == 2:
                return k
    return decisive_step(log)


def view_at(log: HandLog, step: int, seat: int | None) -> dict[str, Any]:
    """``replay.replayer.views.state_view`` of the state after ``step`` decisions, seen by ``seat``
    (``None``: everything)."""
    return state_view(replay_hand(log, step), seat, log=log)


def seat_name(view: dict[str, Any], s: int) -> str:
    seat = view["seats"][s]
    tags = []
    if seat["dealer"]:
        tags.append("庄 dealer")
    if seat["sits_out"]:
        tags.append("sits out")
    if seat["deciding"]:
        tags.append("to act")
    return f"seat {s}" + (f" ({', '.join(tags)})" if tags else "")


def seat_blocks(view: dict[str, Any]) -> list[dict[str, Any]]:
    """Per seat: a title and HTML for the hand, the melds (with 胡息), the cards placed to the
    right, and the discards."""
    out = []
    for seat in view["seats"]:
        hand = seat["hand"]
        if hand.get("hidden"):
            hand_html = hidden_html(int(hand.get("count") or 0))
        else:
            hand_html = view_cards_html(hand)
        melds = (
            "".join(meld_html(m) for m in seat["melds"]) or '<span style="color:#9e9e9e">–</span>'
        )
        out.append(
            {
                "seat": seat["seat"],
                "title": seat_name(view, seat["seat"]),
                "hand": hand_html,
                "hand_count": int(hand.get("count") or 0),
                "melds": melds,
                "huxi": int(seat["huxi"]),
                "right": view_cards_html(seat["right"]),
                "discards": view_cards_html(seat["discards"]),
                "sits_out": bool(seat["sits_out"]),
            }
        )
    return out


def table_html(view: dict[str, Any]) -> str:
    """The middle of the table: stock count, 亮张, the card on offer, the bottom card."""
    parts = [f"<b>stock</b> {int(view['stock_left'])} cards"]
    if view.get("liang"):
        where = " (in the dealer's hand)" if view.get("liang_in_hand") else ""
        parts.append(f"<b>亮张</b> {view_cards_html(view['liang'])}{where}")
    card = view.get("card")
    if card:
        face = view_cards_html(card["card"]) if card.get("card") else hidden_html(1)
        parts.append(
            f"<b>on offer</b> {face} {html.escape(str(card.get('source') or ''))}"
            f" by seat {card.get('owner')}"
        )
    if view.get("bottom"):
        parts.append(f"<b>bottom</b> {view_cards_html(view['bottom'])}")
    return " &nbsp;·&nbsp; ".join(parts)


def step_caption(view: dict[str, Any]) -> str:
    """What just happened and who is to act."""
    n = view.get("n_steps")
    head = f"step {view['step']} of {n}" if n is not None else f"step {view['step']}"
    last = view.get("last")
    did = f"; last: {seen_text(last)}" if last else "; the deal"
    d = view.get("decision")
    if d is None:
        return f"{head}{did}; the hand is over"
    who = ", ".join(f"seat {s}" for s in d["deciders"]) or "not shown in this seat's view"
    forced = " (forced)" if d.get("forced") else ""
    return f"{head}{did}; to act: {who}{forced}"


def options_frame(view: dict[str, Any]) -> pd.DataFrame:
    """The legal options of every seat to act at this step, and the one taken."""
    d = view.get("decision")
    rows: list[dict[str, Any]] = []
    if not d:
        return pd.DataFrame(rows, columns=["seat", "option", "taken"])
    chosen = d.get("chosen") or {}
    for entry in d["options"]:
        if entry["options"] is None:
            rows.append(
                {"seat": entry["seat"], "option": f"({entry['n_legal']} hidden)", "taken": ""}
            )
            continue
        for o in entry["options"]:
            taken = chosen.get("seat") == entry["seat"] and chosen.get("code") == o["code"]
            rows.append(
                {"seat": entry["seat"], "option": o["text"], "taken": "✔ taken" if taken else ""}
            )
    return pd.DataFrame(rows, columns=["seat", "option", "taken"])


def outcome_frames(view: dict[str, Any]) -> dict[str, Any] | None:
    """The final decomposition (groups with 胡息), 名堂 with 番, and the settlement."""
    o = view.get("outcome")
    if not o:
        return None
    decomposition = pd.DataFrame(
        [
            {
                "group": g["label"],
                "kind": kind_label(g["kind"]),
                "cards": (g.get("cards") or {}).get("text", ""),
                "胡息": g["huxi"],
            }
            for g in o.get("decomposition", [])
        ],
        columns=["group", "kind", "cards", "胡息"],
    )
    mingtang = pd.DataFrame(o.get("mingtang", []), columns=["name", "fan"]).rename(
        columns={"name": "名堂", "fan": "番"}
    )
    settlement = pd.DataFrame(
        [{"seat": s["seat"], "score change": s["delta"]} for s in o["settlement"]],
        columns=["seat", "score change"],
    )
    kind = {
        "HU": "胡",
        "HUANGZHUANG": "荒庄 (the stock ran out)",
        "TIANHU_AUTO": "3提/5坎 天胡",
        "TIANHU": "天胡",
    }.get(o["kind"], o["kind"])
    if o.get("winner") is None:
        summary = kind
    else:
        card = (o.get("card") or {}).get("text", "")
        summary = (
            f"{kind}: seat {o['winner']} wins"
            + (f" on {card}" if card else "")
            + (f" ({str(o['source']).lower().replace('_', ' ')})" if o.get("source") else "")
        )
    facts = {
        k: o.get(k)
        for k in ("huxi", "deng", "fan", "score", "zimo", "option", "stock_left")
        if k in o
    }
    return {
        "summary": summary,
        "card_html": view_cards_html(o.get("card")) if o.get("card") else "",
        "facts": facts,
        "decomposition": decomposition,
        "mingtang": mingtang,
        "settlement": settlement,
    }
