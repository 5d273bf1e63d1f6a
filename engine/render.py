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
        o = state.outcome
        if o.winner is None:
            lines.append("荒庄")
        else:
            r = o.result
            assert r is not None
            groups = " ".join(str(g) for g in r.groups)
            lines.append(
                f"{o.kind.name} seat {o.winner}: {groups} 胡息 {r.huxi} 等 {r.deng}"
                f" 番 {r.fan} score {r.score} deltas {list(o.deltas)}"
            )
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
