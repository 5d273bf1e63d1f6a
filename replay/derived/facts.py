"""A shard's ``facts`` rows (docs/LOG_FORMAT.md §12) from its ``hands`` and ``events``
tables: :func:`derive_facts`, the one implementation ``paohuzi simulate`` and ``paohuzi
index`` write with; :func:`replay.replayer.facts_reference.reference_facts` gives the same
rows by a full replay with the Python engine, and the tests compare them row for row.

:func:`derive_facts` replays every hand of the shard in one compiled kernel
(:func:`engine.fast.facts.facts_kernel`: the per-seat counts, the claim conflicts and each
win's reading, by the compiled hu evaluation that returns the reference's reading), checked
against the recorded 胡息 and score; only the rare 3提/5坎 天胡 is evaluated in Python
(:func:`engine.hu.evaluate_auto_tianhu`). Both engines' shards have the same
``hands``/``events`` bytes, so their facts are the same bytes too.

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
import pyarrow.compute as pc

from engine.errors import CorruptLog
from engine.fast.codes import OPTION_CODES, OPTIONS
from engine.groups import Group, GroupKind
from engine.hu import _FOREIGN, _P_SOURCES, HuResult, Source, evaluate_auto_tianhu
from engine.rules import RuleSet
from engine.state import OutcomeKind
from replay.schema import MAX_SEATS
from replay.store.facts_schema import FACTS_SCHEMA, GROUP_KINDS, SEAT_COUNTS

_WINS = (int(OutcomeKind.HU), int(OutcomeKind.TIANHU), int(OutcomeKind.TIANHU_AUTO))
_WEIS = (GroupKind.WEI, GroupKind.CHOUWEI)


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


def _auto_tianhu_result(rules: RuleSet, row: np.ndarray) -> HuResult:
    """The 3提/5坎 天胡 a hand ended with (the kernel has no reading of it): the winner's
    dealt cards, from the kernel's row, evaluated as ``engine.state.State`` does."""
    from engine.fast import facts as K

    hand = row[K.R_HAND : K.R_HAND + 20].tolist()
    res = evaluate_auto_tianhu(rules, [k for k in range(20) for _ in range(hand[k])])
    if res is None:
        raise CorruptLog("a 3提/5坎 天胡 whose dealt cards do not make one")
    return res


def empty_columns(n: int, n_seats: int) -> dict[str, Any]:
    cols: dict[str, Any] = {"option": [None] * n, "popao": [None] * n}
    for k in GROUP_KINDS:
        for what in ("n", "huxi"):
            cols[f"g_{k.name.lower()}_{what}"] = [None] * n
    for name in SEAT_COUNTS:
        for s in range(MAX_SEATS):
            cols[f"{name}_{s}"] = [0] * n if s < n_seats else [None] * n
    cols["conflicts"] = [0] * n
    return cols


def facts_of_columns(hand_ids: Sequence[int], cols: dict[str, Any]) -> pa.Table:
    data = {"hand_id": list(hand_ids), **cols}
    return pa.Table.from_pydict({f.name: data[f.name] for f in FACTS_SCHEMA}, schema=FACTS_SCHEMA)


def _recorded(hands: pa.Table, name: str) -> np.ndarray:
    """A ``hands`` column as int64, null as -2 (no reading gives it)."""
    return _i64(pc.fill_null(hands.column(name).cast(pa.int64()), -2).to_numpy())


def _where(hand_id: int) -> str:
    return f"hand {hand_id}"


def shard_facts(
    hands: pa.Table, events: pa.Table, rules: RuleSet, rows: np.ndarray | None = None
) -> pa.Table:
    """One shard's ``facts`` table: from the facts rows the compiled play loop counted
    (``rows``), else derived by replay (:func:`derive_facts`). What ``simulate``, ``index``
    and the import write (:func:`replay.derived.facts_files.write_facts`) and summarise
    (:func:`replay.derived.summarize_events.summarize_events`)."""
    return derive_facts(hands, events, rules) if rows is None else facts_table(hands, rows, rules)


def derive_facts(hands: pa.Table, events: pa.Table, rules: RuleSet) -> pa.Table:
    """The ``facts`` rows of one shard (``hands`` sorted by ``hand_id``, ``events`` by
    ``(hand_id, seq)``, as the shard files are), by replaying its events. Raises
    :class:`CorruptLog` when a hand does not replay to its recorded outcome (``paohuzi
    verify`` says more)."""
    from engine.fast import facts as K
    from engine.fast.rule_arrays import rule_arrays

    ids = _i64(hands.column("hand_id").to_numpy())
    ev_ids = _i64(events.column("hand_id").to_numpy())
    los = np.searchsorted(ev_ids, ids, side="left").astype(np.int64)
    his = np.searchsorted(ev_ids, ids, side="right").astype(np.int64)
    rows = np.zeros((hands.num_rows, K.ROW_SIZE), dtype=np.int64)
    rp, hp = rule_arrays(rules)
    forced = events.column("forced").to_numpy(zero_copy_only=False).astype(np.int64)
    K.facts_kernel(
        rp, hp, K.facts_scratch(rules), _decks(hands), _i64(hands.column("dealer").to_numpy()),
        los, his, _i64(events.column("seat").to_numpy()),
        _i64(events.column("action").to_numpy()), _i64(events.column("kind").to_numpy()),
        _i64(events.column("options").to_numpy()), forced, rows,
    )  # fmt: skip
    return facts_table(hands, rows, rules, his - los)


def facts_table(
    hands: pa.Table, rows: np.ndarray, rules: RuleSet, n_events: np.ndarray | None = None
) -> pa.Table:
    """The ``facts`` table of a shard's ``hands`` from their facts rows
    (:mod:`engine.fast.facts`: replayed by :func:`derive_facts`, or counted by the compiled
    play loop as it played them), each hand having ``n_events`` events (default: its
    ``n_events``). Every win's reading is held to the recorded outcome, 胡息 and score;
    :class:`CorruptLog` names the first hand that differs. The rows of a 3提/5坎 天胡 get
    their reading written in place."""
    from engine.fast import facts as K
    from engine.fast import hu as H

    ids = _i64(hands.column("hand_id").to_numpy())
    if n_events is None:
        n_events = _i64(hands.column("n_events").to_numpy())
    bad = np.nonzero(rows[:, K.R_APPLIED] != n_events)[0]
    if len(bad):
        raise CorruptLog(f"{_where(int(ids[bad[0]]))}: an event does not replay")
    wins = np.nonzero(np.isin(rows[:, K.R_KIND], _WINS))[0]
    for i in wins[rows[wins, K.R_KIND] == int(OutcomeKind.TIANHU_AUTO)].tolist():
        res = _auto_tianhu_result(rules, rows[i])
        rows[i, K.R_WIN] = int(res.win)
        rows[i, K.R_OPTION] = OPTION_CODES[res.option or ""]
        rows[i, K.R_HUXI] = -1 if res.huxi is None else res.huxi
        rows[i, K.R_SCORE] = res.score
        rows[i, K.R_GROUPS : K.R_GROUPS + H.READING_SIZE] = H.reference_reading(res)
    r = rows[wins]
    wrong = (
        (r[:, K.R_WIN] != 1)
        | (r[:, K.R_HUXI] != _recorded(hands, "huxi")[wins])
        | (r[:, K.R_SCORE] != _recorded(hands, "score")[wins])
        | (r[:, K.R_KIND] != _recorded(hands, "outcome")[wins])
    )
    if wrong.any():
        i = int(wins[np.nonzero(wrong)[0][0]])
        raise CorruptLog(
            f"{_where(int(ids[i]))}: the winning reading does not give the recorded"
            f" 胡息 {hands.column('huxi')[i].as_py()} and score {hands.column('score')[i].as_py()}"
        )
    no_win = np.ones(len(ids), dtype=bool)
    no_win[wins] = False
    n_seats = rules.players
    # (values, null mask) of every column but the two that are not integers
    ints: dict[str, tuple[np.ndarray, np.ndarray | None]] = {"hand_id": (ids, None)}
    n_kinds = len(GROUP_KINDS)
    for k in GROUP_KINDS:
        ints[_GN[_INDEX[k]]] = rows[:, K.R_GROUPS + int(k)], no_win
        ints[_GH[_INDEX[k]]] = rows[:, K.R_GROUPS + n_kinds + int(k)], no_win
    for name, off in (("chouhu", K.R_CHOUHU), ("renpeng", K.R_RENPENG), ("bipai", K.R_BIPAI)):
        for s in range(MAX_SEATS):
            ints[f"{name}_{s}"] = rows[:, off + s], np.full(len(ids), s >= n_seats)
    ints["conflicts"] = rows[:, K.R_CONFLICTS], None
    arrays = []
    for f in FACTS_SCHEMA:
        if f.name == "option":
            codes = np.where(no_win, 0, rows[:, K.R_OPTION])
            arrays.append(
                pa.array(np.array(OPTIONS, dtype=object)[codes], mask=no_win, type=f.type)
            )
        elif f.name == "popao":
            arrays.append(pa.array(rows[:, K.R_POPAO] != 0, mask=no_win, type=f.type))
        else:
            values, mask = ints[f.name]
            arrays.append(pa.array(values.astype(f.type.to_pandas_dtype()), mask=mask, type=f.type))
    return pa.Table.from_arrays(arrays, schema=FACTS_SCHEMA)
