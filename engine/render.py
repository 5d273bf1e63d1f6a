"""A readable text view of a state, in card notation (the god view: every hand shown)."""

from __future__ import annotations

from typing import Any

from engine.actions import action_str
from engine.cards import format_cards
from engine.groups import huxi


def render_state(state: Any) -> str:
    """The god view of ``state`` (an :class:`engine.state.State`, which calls this for
    ``str(state)``; not imported here, so imports flow one way)."""
    rules = state.rules
    lines = [
        f"跑胡子 {rules.preset_name() or 'custom'} · dealer {state.dealer}"
        f" · stock {len(state.stock)} · step {len(state.history)}"
    ]
    if state.liang is not None:
        lines.append(f"亮张 {format_cards([state.liang])}")
    if state.bottom is not None:
        lines.append(f"bottom {format_cards([state.bottom])} (shown)")
    for seat in range(state.n_seats):
        if seat == state.sitter:
            lines.append(f"seat {seat}: sits out")
            continue
        tag = "庄" if seat == state.dealer else "  "
        melds = " ".join(f"{g}({huxi(g, rules)})" for g in state.melds[seat])
        lines.append(
            f"seat {seat} {tag} hand {format_cards(state.hand_cards(seat)) or '-'}"
            f" | table {melds or '-'} | 胡息 {state.meld_huxi(seat)}"
            f" | right {format_cards(state.right[seat]) or '-'}"
        )
    if state.outcome is not None:
        lines.append(render_outcome(state.outcome))
    else:
        if state.card is not None:
            lines.append(
                f"card {format_cards([state.card])} ({state.card_kind.name.lower()}"  # type: ignore[union-attr]
                f" by seat {state.owner})"
            )
        for seat in state.deciders():
            opts = ", ".join(action_str(a) for a in state.legal_actions(seat))
            forced = " (forced)" if state.is_forced() else ""
            lines.append(f"seat {seat} to act{forced}: {opts}")
    return "\n".join(lines)


#: How a hand ended, as the outcome line names it (engine.outcome.OutcomeKind's names).
KIND_LABELS = {"HU": "胡", "HUANGZHUANG": "荒庄", "TIANHU_AUTO": "3提/5坎 天胡", "TIANHU": "天胡"}
#: Where the hu card came from (engine.outcome.Source's names).
SOURCE_LABELS = {
    "OWN_DRAW": "自摸",
    "OTHER_DRAW": "another seat's draw",
    "LIANG_DEALER": "the dealer's 21 cards",
    "LIANG_OTHER": "the 亮张",
    "DISCARD": "a discard",
}


def render_outcome(o: Any) -> str:
    """One line in card notation for an :class:`engine.state.Outcome` (``str(outcome)``):
    how the hand ended, the winner, the hu card and where it came from, the 门子, 胡息, 等,
    名堂, 番, score and each seat's score change."""
    deltas = " ".join(f"{d:+d}" for d in o.deltas)
    head = KIND_LABELS.get(o.kind.name, o.kind.name)
    if o.winner is None:
        return f"{head} · deltas {deltas}"
    head += f" seat {o.winner}"
    if o.card is not None:
        head += f" on {format_cards([o.card])}"
    if o.source is not None:
        head += f" ({SOURCE_LABELS.get(o.source.name, o.source.name)}"
        head += f", from seat {o.from_seat})" if o.from_seat not in (None, o.winner) else ")"
    r = o.result
    if r is None:
        return f"{head} · deltas {deltas}"
    groups = " ".join(str(g) for g in r.groups)
    names = " ".join(f"{name} {fan}" for name, fan in r.mingtang) or "none"
    return (
        f"{head}: {groups} · 胡息 {r.huxi} · 等 {r.deng} · 名堂 {names} · 番 {r.fan}"
        f" · score {r.score} · deltas {deltas}"
    )
