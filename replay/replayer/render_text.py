"""The table in the terminal: a text rendering of :func:`replay.replayer.views.state_view`.

Red cards (the 2, 7 and 10 of either case) are red when colour is on; everything else is
plain text, so the output with colour off is stable enough to be a golden file. The
rendering reads only the view, so a seat's view shows only what that seat may see.

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> from engine.state import State
>>> from replay.replayer.views import state_view
>>> text = render_view(state_view(State.rebuild(find_rules("hunan"), shuffle_deck(4), 0), 1))
>>> print(text.splitlines()[0])
跑胡子 hunan · step 0 · dealer seat 0 · stock 19 · 亮张 四 (in the dealer's hand) · view of seat 1
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from engine.cards import is_red
from replay.replayer.views import seen_text

RED = "bold red"
DIM = "dim"
FORCED = "magenta"
CHOSEN = "bold green"

OUTCOME_LABELS = {
    "HU": "胡",
    "HUANGZHUANG": "荒庄",
    "TIANHU_AUTO": "天胡 (3提/5坎)",
    "TIANHU": "天胡",
}
SOURCE_LABELS = {
    "OWN_DRAW": "自摸, own draw",
    "OTHER_DRAW": "another seat's draw",
    "LIANG_DEALER": "the dealer's 21 cards",
    "LIANG_OTHER": "the 亮张",
    "DISCARD": "a discard",
}
OFFER_LABELS = {"drawn": "drawn by", "discarded": "discarded by", "liang": "the 亮张 of"}


def _cards(t: Text, cards: dict[str, Any] | None, empty: str = "-") -> None:
    """Append cards in notation, red ones styled red."""
    if not cards or not cards["kinds"]:
        t.append(empty, DIM)
        return
    for k, ch in zip(cards["kinds"], cards["text"], strict=False):
        t.append(ch, RED if is_red(k) else None)


def _group(t: Text, g: dict[str, Any], with_huxi: bool = True) -> None:
    if g["hidden"]:
        t.append("偎?", DIM)
    else:
        label = g["label"]
        text = g["cards"]["text"]
        # The label is a prefix ("碰", "吃[") around the cards or one face ("碰五"); colour
        # the card characters only.
        for ch in label:
            idx = text.find(ch)
            if idx >= 0:
                t.append(ch, RED if is_red(g["cards"]["kinds"][idx]) else None)
            else:
                t.append(ch)
    if with_huxi:
        t.append(f"({g['huxi']})", DIM)


def _seat_name(view: dict[str, Any], s: int) -> str:
    return f"seat {s}"


def render_text(view: dict[str, Any]) -> Text:
    """The view as a :class:`rich.text.Text` (styles on red cards and markers)."""
    t = Text()
    head = [f"跑胡子 {view['rules']}"]
    if view.get("run") is not None:
        head.append(f"run {view['run']}")
    if view.get("hand_id") is not None:
        head.append(f"hand {view['hand_id']}")
    if view.get("n_steps") is not None:
        head.append(f"step {view['step']}/{view['n_steps']}")
    else:
        head.append(f"step {view['step']}")
    head.append(f"dealer seat {view['dealer']}")
    head.append(f"stock {view['stock_left']}")
    t.append(" · ".join(head))
    if view["liang"] is not None:
        t.append(" · 亮张 ")
        _cards(t, view["liang"])
        t.append(" (in the dealer's hand)" if view["liang_in_hand"] else " (played)")
    if view["bottom"] is not None:
        t.append(" · bottom ")
        _cards(t, view["bottom"])
        t.append(" (shown)")
    viewer = view["viewer"]
    t.append(" · " + ("all hands shown" if viewer is None else f"view of seat {viewer}"))
    t.append("\n")
    width = max(len(_seat_name(view, s["seat"])) for s in view["seats"]) + 3
    for s in view["seats"]:
        name = _seat_name(view, s["seat"])
        tag = "庄" if s["dealer"] else ("坐" if s["sits_out"] else "  ")
        mark = "▶" if s["deciding"] else " "
        t.append(f"{mark}{name} {tag}".ljust(width + 1))
        if s["sits_out"]:
            t.append("sits out (坐醒)\n", DIM)
            continue
        t.append("hand ")
        hand = s["hand"]
        if hand["hidden"]:
            t.append(f"{hand['count']} cards hidden", DIM)
        else:
            _cards(t, hand)
            t.append(f" ({hand['count']})", DIM)
        t.append("\n")
        pad = " " * (width + 1)
        t.append(pad + "table ")
        if s["melds"]:
            for i, g in enumerate(s["melds"]):
                if i:
                    t.append(" ")
                _group(t, g)
        else:
            t.append("-", DIM)
        t.append(f" · 胡息 {s['huxi']}\n")
        t.append(pad + "right ")
        _cards(t, s["right"])
        t.append(" · discards ")
        _cards(t, s["discards"])
        t.append("\n")
    card = view["card"]
    if card is not None:
        t.append("card on offer: ")
        if card["hidden"]:
            t.append("(face down)", DIM)
        else:
            _cards(t, card["card"])
        t.append(f" {OFFER_LABELS.get(card['source'], card['source'])} seat {card['owner']}\n")
    last = view["last"]
    if last is not None:
        t.append(f"last: {seen_text(last)} (step {last['step']})\n")
    dec = view["decision"]
    if dec is not None:
        _render_decision(t, dec)
    if view["outcome"] is not None:
        _render_outcome(t, view["outcome"], view)
    if t.plain.endswith("\n"):
        t.right_crop(1)
    return t


def _render_decision(t: Text, dec: dict[str, Any]) -> None:
    chosen = dec["chosen"]
    for opt in dec["options"]:
        s = opt["seat"]
        t.append(f"decision: seat {s} ({dec['phase'].lower()})")
        if dec["forced"]:
            t.append(" forced", FORCED)
        t.append(": ")
        if opt["options"] is None:
            n = opt["n_legal"]
            t.append(f"{n} option{'s' if n > 1 else ''}, not shown in this seat's view", DIM)
        else:
            for i, a in enumerate(opt["options"]):
                if i:
                    t.append(" | ")
                picked = chosen is not None and chosen["seat"] == s and chosen["code"] == a["code"]
                _action(t, a["text"], CHOSEN if picked else None)
                if picked:
                    t.append(" ←", CHOSEN)
        t.append("\n")
    if chosen is not None:
        waiting = [s for s in dec["deciders"] if s != chosen["seat"]]
        if chosen["seat"] is None:
            t.append("next: a choice not shown in this seat's view", DIM)
        elif chosen.get("hidden"):
            t.append(f"next: seat {chosen['seat']} ")
            t.append("decides (not shown in this seat's view)", DIM)
        else:
            t.append(f"next: seat {chosen['seat']} ")
            _action(t, chosen["text"], None)
        if dec["forced"]:
            t.append(" (forced)", FORCED)
        if waiting:
            t.append(f"; then seat{'s' if len(waiting) > 1 else ''} "
                     + ", ".join(map(str, waiting)))  # fmt: skip
        t.append("\n")


def _action(t: Text, text: str, style: str | None) -> None:
    from engine.cards import CARD_CHARS

    for ch in text:
        idx = CARD_CHARS.find(ch)
        if idx >= 0 and is_red(idx):
            t.append(ch, RED if style is None else f"{style} red")
        else:
            t.append(ch, style)


def _render_outcome(t: Text, o: dict[str, Any], view: dict[str, Any]) -> None:
    kind = o["kind"]
    t.append("result: ")
    t.append(OUTCOME_LABELS.get(kind, kind), "bold")
    if o["winner"] is None:
        t.append(f" — no winner, stock {o['stock_left']}\n")
    else:
        t.append(f" — seat {o['winner']} wins")
        if o["card"] is not None:
            t.append(" on ")
            _cards(t, o["card"])
        if o["source"] is not None:
            t.append(f" ({SOURCE_LABELS.get(o['source'], o['source'])}")
            if o["from_seat"] is not None and o["source"] != "OWN_DRAW":
                t.append(f", from seat {o['from_seat']}")
            t.append(")")
        t.append("\n")
        if "decomposition" in o:
            t.append("  门子: ")
            for i, g in enumerate(o["decomposition"]):
                if i:
                    t.append(" ")
                _group(t, g)
            t.append("\n")
            t.append(f"  胡息 {o['huxi']} · 等 {o['deng']}")
            if o["zimo"]:
                t.append(" (自摸 +1)" if not o["tianhu"] else " (天胡)")
            t.append(" · 名堂 ")
            if o["mingtang"]:
                t.append(" ".join(f"{m['name']} {m['fan']}" for m in o["mingtang"]))
            else:
                t.append("none (平胡)")
            t.append(f" · 番 {o['fan']} · score {o['score']}\n")
    t.append("  settlement: ")
    t.append(" · ".join(f"seat {d['seat']} {d['delta']:+d}" for d in o["settlement"]))
    t.append("\n")


def render_view(view: dict[str, Any]) -> str:
    """The view as plain text (no colour)."""
    return render_text(view).plain


def to_terminal(text: Text, color: bool, width: int = 160) -> str:
    """``text`` as a string with ANSI colours (``color``) or plain."""
    if not color:
        return text.plain
    console = Console(
        force_terminal=True, color_system="standard", width=width, soft_wrap=True, record=False
    )
    with console.capture() as cap:
        console.print(text, end="")
    return cap.get()
