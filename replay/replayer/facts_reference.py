"""The facts of a shard by a full replay of every hand with the Python engine: the reference
:func:`replay.derived.facts.derive_facts` (the compiled kernel ``paohuzi simulate`` and
``paohuzi index`` write with) is held to, row for row, by the tests (docs/LOG_FORMAT.md §12
defines the rows)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from engine import actions as A
from engine.actions import ActionKind, kind_of
from engine.hu import Source
from engine.rules import RuleSet
from engine.state import OutcomeKind, State
from replay.derived.facts import empty_columns, facts_of_columns, run_possible
from replay.replayer.hand import _apply, log_from_rows, replay_hand
from replay.replayer.views import outcome_view
from replay.store.facts_schema import GROUP_KINDS

_CLAIMS = (int(ActionKind.HU), int(ActionKind.PENG), int(ActionKind.CHI))


def _event_columns(events: pa.Table) -> dict[int, dict[str, list[Any]]]:
    by: dict[int, dict[str, list[Any]]] = {}
    for h, s, a in zip(
        events.column("hand_id").to_pylist(),
        events.column("seat").to_pylist(),
        events.column("action").to_pylist(),
        strict=True,
    ):
        e = by.setdefault(int(h), {"seat": [], "action": []})
        e["seat"].append(int(s))
        e["action"].append(int(a))
    return by


def _replay_counts(state: State, log: Any, cols: dict[str, Any], i: int) -> State:
    """Apply ``log``'s events to ``state`` (the initial state), counting the per-seat facts
    and the conflicts from the Python engine's legal actions and state; the final state."""
    n = state.n_seats
    melds0 = [len(state.melds[t]) for t in range(n)]
    round_chouhu = [0] * n
    claims = 0
    for k, (seat, action) in enumerate(log.events):
        legal = state.legal_actions(seat)
        kind = int(kind_of(action))
        if A.HU in legal and action != A.HU:
            round_chouhu[seat] += 1
        if A.PENG in legal and action != A.PENG and not state.is_forced():
            cols[f"renpeng_{seat}"][i] += 1
        if kind in _CLAIMS:
            claims += 1
        _apply(log, state, k)
        if not state.declared:
            won = state.outcome is not None and state.outcome.kind in (
                OutcomeKind.HU,
                OutcomeKind.TIANHU,
            )
            for t in range(n):
                if not won:
                    cols[f"chouhu_{t}"][i] += round_chouhu[t]
                round_chouhu[t] = 0
                if len(state.melds[t]) - melds0[t] >= 2:
                    cols[f"bipai_{t}"][i] += 1
                melds0[t] = len(state.melds[t])
            if claims >= 2:
                cols["conflicts"][i] += 1
            claims = 0
    return state


def reference_facts(hands: pa.Table, events: pa.Table, rules: RuleSet) -> pa.Table:
    """:func:`derive_facts` by a full Python replay of every hand (``replay_hand`` and
    ``outcome_view``'s decomposition and option): the reference the tests hold it to."""
    n = hands.num_rows
    cols = empty_columns(n, rules.players)
    ev = _event_columns(events)
    ids = []
    for i, h in enumerate(hands.to_pylist()):
        ids.append(int(h["hand_id"]))
        h["deck"] = bytes(h["deck"])
        log = log_from_rows(None, rules, h, ev.get(int(h["hand_id"]), {"seat": [], "action": []}))
        state = _replay_counts(replay_hand(log, 0), log, cols, i)
        o = state.outcome
        view = outcome_view(state)
        if o is None or o.result is None or view is None or o.winner is None:
            continue
        cols["option"][i] = view["option"]
        popao = False
        if o.card is not None and o.source not in (None, Source.LIANG_DEALER):
            hand = state.hands[o.winner]
            popao = view["option"] == "F" and run_possible(
                state.melds[o.winner], hand, o.card, o.source
            )
        cols["popao"][i] = popao
        for k in GROUP_KINDS:
            name = k.name.lower()
            gs = [g for g in view["decomposition"] if g["kind"] == name]
            cols[f"g_{name}_n"][i] = len(gs)
            cols[f"g_{name}_huxi"][i] = sum(int(g["huxi"]) for g in gs)
    return facts_of_columns(ids, cols)
