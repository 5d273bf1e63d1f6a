"""A shard's ``facts`` rows (docs/LOG_FORMAT.md §12) from its ``hands`` and ``events``
tables: :func:`derive_facts`, the one implementation ``paohuzi simulate`` and ``paohuzi
index`` write with, and :func:`reference_facts`, the same rows by a full replay with the
Python engine (``replay.replayer``), which the tests compare row for row.

:func:`derive_facts` replays every hand of the shard in one compiled kernel
(:func:`engine.fast.facts.facts_kernel`: the per-seat counts, the claim conflicts and what the
winner held), then evaluates each win once more with the reference hu evaluation
(:func:`engine.hu.evaluate_hu_counts`, whose splits are memoised) to get the winning
reading's groups, checked against the recorded 胡息 and score. Both engines' shards have the
same ``hands``/``events`` bytes, so their facts are the same bytes too.

Definitions (the kernel's module states them for the counts):

* the winning reading: the groups, 胡息 per group and option of the hu result the hand ended
  with (``outcome_view``'s ``decomposition``), counted per :class:`~engine.groups.GroupKind`;
* ``popao`` (破跑胡, RULES §10.3 step 2): the option taken is F while the hu card would have
  made a 跑 (option K: three of it in the winner's hand and the card another's; P: a 碰 of it
  on his table and the card a draw; W: a 偎/臭偎 of it on his table and the card not his own
  draw) — whether or not that 跑 reading would also have been a win.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from engine.actions import ActionKind
from engine.errors import CorruptLog
from engine.groups import EAT_SHAPES, Group, GroupKind
from engine.hu import (
    _FOREIGN,
    _P_SOURCES,
    HuContext,
    HuResult,
    Source,
    evaluate_auto_tianhu,
    evaluate_hu_counts,
)
from engine.rules import RuleSet
from engine.state import CardKind, OutcomeKind, State
from replay.record.schema import MAX_SEATS
from replay.store.facts_schema import FACTS_SCHEMA, GROUP_KINDS, SEAT_COUNTS

_WINS = (int(OutcomeKind.HU), int(OutcomeKind.TIANHU), int(OutcomeKind.TIANHU_AUTO))
_QUAD = (GroupKind.PAO, GroupKind.TI)
_WEIS = (GroupKind.WEI, GroupKind.CHOUWEI)
_CLAIMS = (int(ActionKind.HU), int(ActionKind.PENG), int(ActionKind.CHI))


def _i64(a: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a), dtype=np.int64)


def _decks(hands: pa.Table) -> np.ndarray:
    """The ``deck`` column as an (n, 80) int64 array (no per-row Python objects)."""
    arr = hands.column("deck").combine_chunks()
    n = len(arr)
    if n == 0:
        return np.zeros((0, 80), dtype=np.int64)
    buf = np.frombuffer(arr.buffers()[1], dtype=np.uint8, count=n * 80, offset=arr.offset * 80)
    return buf.reshape(n, 80).astype(np.int64)


def _melds() -> dict[tuple[int, int], Group]:
    """Every table meld by (kind code, face or eat-shape id), as the kernel's rows name them."""
    out: dict[tuple[int, int], Group] = {}
    for k in (GroupKind.CHI, GroupKind.PENG, GroupKind.WEI, GroupKind.CHOUWEI, *_QUAD):
        if k == GroupKind.CHI:
            out.update({(int(k), i): Group(k, shape) for i, shape in enumerate(EAT_SHAPES)})
        else:
            out.update({(int(k), f): Group(k, (f,) * (4 if k in _QUAD else 3)) for f in range(20)})
    return out


_MELDS = _melds()
#: The column names of each group kind's count and 胡息, by kind code.
_GN = [f"g_{k.name.lower()}_n" for k in GROUP_KINDS]
_GH = [f"g_{k.name.lower()}_huxi" for k in GROUP_KINDS]
_INDEX = {k: j for j, k in enumerate(GROUP_KINDS)}


def run_possible(melds: Sequence[Group], hand: Sequence[int], card: int, source: Source) -> bool:
    """Whether option K, P or W of RULES §10.3 step 2 applies to ``card`` (a 跑 of it was
    possible), as :func:`engine.hu.evaluate_hu_counts` lists them."""
    if hand[card] == 3 and source in _FOREIGN:
        return True
    for g in melds:
        if g.cards[0] != card:
            continue
        if g.kind == GroupKind.PENG and source in _P_SOURCES:
            return True
        if g.kind in _WEIS and source != Source.OWN_DRAW:
            return True
    return False


def _win_result(rules: RuleSet, row: np.ndarray, outcome: int) -> tuple[HuResult, bool]:
    """The hu result a hand ended with, from the kernel's row (what the winner held), and
    whether it was a 破跑胡; as ``engine.state.State`` evaluates it (``_claim_hu``,
    ``_liang_hu``, the 3提/5坎 check)."""
    from engine.fast import facts as K

    hand = row[K.R_HAND : K.R_HAND + 20].tolist()
    if outcome == int(OutcomeKind.TIANHU_AUTO):
        cards = [k for k in range(20) for _ in range(hand[k])]
        res = evaluate_auto_tianhu(rules, cards)
        assert res is not None
        return res, False
    n = int(row[K.R_N_MELDS])
    kinds = row[K.R_MELD_KIND : K.R_MELD_KIND + n].tolist()
    ids = row[K.R_MELD_ID : K.R_MELD_ID + n].tolist()
    melds = [_MELDS[k, m] for k, m in zip(kinds, ids, strict=True)]
    source = Source(int(row[K.R_SOURCE]))
    card = int(row[K.R_CARD])
    if source == Source.LIANG_DEALER:
        ctx = HuContext(source, tianhu=True)
        return evaluate_hu_counts(rules, melds, hand, None, ctx), False
    if source == Source.LIANG_OTHER:
        ctx = HuContext(source, tianhu=True)
    else:
        winner, owner = int(row[K.R_WINNER]), int(row[K.R_FROM])
        drawn = int(row[K.R_CARD_KIND]) == int(CardKind.DRAWN)
        haidi = drawn and int(row[K.R_STOCK_LEFT]) == 0 and int(row[K.R_BOTTOM]) < 0
        if drawn:
            dihu = int(row[K.R_N_DRAWS]) == 1 and winner != int(row[K.R_DEALER])
            dihu = dihu and not rules.luzhou
        else:
            dihu = (
                rules.luzhou
                and owner == int(row[K.R_DEALER])
                and int(row[K.R_DEALER_DISCARDS]) == 1
                and winner == int(row[K.R_XIA_FROM])
            )
        ctx = HuContext(source, haidi=haidi, dihu=dihu)
    res = evaluate_hu_counts(rules, melds, hand, card, ctx)
    return res, res.option == "F" and run_possible(melds, hand, card, source)


def _empty_columns(n: int, n_seats: int) -> dict[str, Any]:
    cols: dict[str, Any] = {"option": [None] * n, "popao": [None] * n}
    for k in GROUP_KINDS:
        for what in ("n", "huxi"):
            cols[f"g_{k.name.lower()}_{what}"] = [None] * n
    for name in SEAT_COUNTS:
        for s in range(MAX_SEATS):
            cols[f"{name}_{s}"] = [0] * n if s < n_seats else [None] * n
    cols["conflicts"] = [0] * n
    return cols


def _set_reading(cols: dict[str, Any], i: int, res: HuResult, popao: bool) -> None:
    cols["option"][i] = res.option
    cols["popao"][i] = popao
    counts = [0] * len(GROUP_KINDS)
    values = [0] * len(GROUP_KINDS)
    for g, v in zip(res.groups, res.group_huxi, strict=True):
        j = _INDEX[g.kind]
        counts[j] += 1
        values[j] += v
    for k in range(len(GROUP_KINDS)):
        cols[_GN[k]][i] = counts[k]
        cols[_GH[k]][i] = values[k]


def _table(hand_ids: Sequence[int], cols: dict[str, Any]) -> pa.Table:
    data = {"hand_id": list(hand_ids), **cols}
    return pa.Table.from_pydict({f.name: data[f.name] for f in FACTS_SCHEMA}, schema=FACTS_SCHEMA)


def _where(hand_id: int) -> str:
    return f"hand {hand_id}"


def derive_facts(hands: pa.Table, events: pa.Table, rules: RuleSet) -> pa.Table:
    """The ``facts`` rows of one shard (``hands`` sorted by ``hand_id``, ``events`` by
    ``(hand_id, seq)``, as the shard files are). Raises :class:`CorruptLog` when a hand does
    not replay to its recorded outcome (``paohuzi verify`` says more)."""
    from engine.fast import facts as K
    from engine.fast.rule_arrays import rule_arrays

    n = hands.num_rows
    ids = _i64(hands.column("hand_id").to_numpy())
    ev_ids = _i64(events.column("hand_id").to_numpy())
    los = np.searchsorted(ev_ids, ids, side="left").astype(np.int64)
    his = np.searchsorted(ev_ids, ids, side="right").astype(np.int64)
    rows = np.zeros((n, K.ROW_SIZE), dtype=np.int64)
    rp, hp = rule_arrays(rules)
    forced = events.column("forced").to_numpy(zero_copy_only=False).astype(np.int64)
    K.facts_kernel(
        rp, hp, _decks(hands), _i64(hands.column("dealer").to_numpy()), los, his,
        _i64(events.column("seat").to_numpy()), _i64(events.column("action").to_numpy()),
        _i64(events.column("kind").to_numpy()), _i64(events.column("options").to_numpy()),
        forced, rows,
    )  # fmt: skip
    n_seats = rules.players
    cols = _empty_columns(n, n_seats)
    outcome = hands.column("outcome").to_pylist()
    huxi = hands.column("huxi").to_pylist()
    score = hands.column("score").to_pylist()
    bad = np.nonzero(rows[:, K.R_APPLIED] != his - los)[0]
    if len(bad):
        raise CorruptLog(f"{_where(int(ids[bad[0]]))}: an event does not replay")
    for name, off in (("chouhu", K.R_CHOUHU), ("renpeng", K.R_RENPENG), ("bipai", K.R_BIPAI)):
        for s in range(n_seats):
            cols[f"{name}_{s}"] = rows[:, off + s].tolist()
    cols["conflicts"] = rows[:, K.R_CONFLICTS].tolist()
    for i in np.nonzero(np.isin(rows[:, K.R_KIND], _WINS))[0].tolist():
        res, popao = _win_result(rules, rows[i], int(rows[i, K.R_KIND]))
        if (
            not res.win
            or res.huxi != huxi[i]
            or res.score != score[i]
            or outcome[i] != int(rows[i, K.R_KIND])
        ):
            raise CorruptLog(
                f"{_where(int(ids[i]))}: the winning reading does not give the recorded"
                f" 胡息 {huxi[i]} and score {score[i]}"
            )
        _set_reading(cols, i, res, popao)
    return _table(ids.tolist(), cols)


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
    from engine import actions as A
    from engine.actions import kind_of
    from replay.replayer.hand import _apply

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
    from replay.replayer.hand import log_from_rows, replay_hand
    from replay.replayer.views import outcome_view

    n = hands.num_rows
    cols = _empty_columns(n, rules.players)
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
    return _table(ids, cols)
