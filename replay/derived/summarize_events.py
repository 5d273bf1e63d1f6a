"""A shard's event summary rows (the ``ev_*`` kinds of the summary file, docs/LOG_FORMAT.md
§10), computed from the shard's ``events``, ``hands`` and facts by one compiled pass
(:func:`engine.fast.event_counts.counts`: every count and cluster sum, deal by deal) and numpy
(the rows): what ``paohuzi stats --events`` and the Actions page read instead of the events
table.

Every figure of :mod:`replay.analysis.figures.events` has a summary source and a raw one (SQL
over ``events``); ``make test`` holds the two to equal figures (tests/replay/analysis/
test_event_summaries.py). An event's policy is that of the seat that declared it; a cluster
is a deal (a hand outside --duplicate runs), and a deal's rotations are in one shard, so the
cluster sums add over shards.

* ``ev_actions`` (cluster kind, per seat mask and policy): per action kind and forced flag
  ``n`` events with the cluster sums ``yy`` = Σ y², ``ym`` = Σ y·m of the events ``y`` and
  seat-hands ``m`` per cluster; one row with ``action`` null per (mask, policy): clusters
  ``d``, seat-hands ``m`` and ``mm`` = Σ m²;
* ``ev_declines`` (per mask, policy, offered kind 胡/碰/吃): ``n`` real choices (two or more
  options) offering it, ``k`` of them passed, ``d`` their clusters;
* ``ev_forced`` (per mask, policy): ``n`` events, ``k`` forced, ``d`` clusters with events;
* ``ev_options`` (additive, per rotation, seat, policy): ``n`` real choices (not forced) per
  number of legal options ``v``;
* ``ev_hands`` (additive, per rotation and decisions ``v`` of a hand): ``what`` = ``hands``,
  ``chouhu`` (a 胡 declined), ``renpeng`` (a 碰 declined), ``bakuai`` (a seat's second 跑 or
  提): ``n`` hands;
* ``ev_wins`` (additive, per rotation, winner, stock left): ``n`` wins;
* ``ev_length`` (cluster kind, per rotation mask): hand length, ``what`` = ``decisions``
  (the hand's events) or ``draws`` (cards drawn from the stock, ``STOCK_SIZE`` −
  ``stock_left``): ``n`` hands, ``d`` clusters, and the cluster sums ``y`` = Σ y_c, ``m`` =
  Σ m_c, ``yy``, ``ym``, ``mm`` of the length ``y_c`` and the hands ``m_c`` per cluster;
* ``ev_paired`` (--duplicate; per mask and pair of policies a < b): the row with ``action``
  null holds ``d``, the deals where both have a selected seat; the others, per action kind
  and forced flag, the sums ``dy``, ``dyy`` of the per-deal difference of events per
  seat-hand, added in deal order (as ``paired``);

and two kinds from the shard's per-hand facts (docs/LOG_FORMAT.md §12, the table
:func:`~replay.derived.facts.shard_facts` gives):

* ``ev_facts`` (cluster kind, per seat mask and policy): ``what`` = ``seats``: ``n``
  seat-hands, ``d`` their clusters, ``k`` those with a 比牌 eat, ``y`` the eats; ``wins``:
  ``n`` won seat-hands, ``d`` their clusters, ``k`` those won by 破跑胡; ``hands``: ``n``
  hands the policy plays a selected seat in, ``d`` their clusters, ``k`` those with a claim
  conflict, ``y`` the conflicts;
* ``ev_groups`` (additive, per rotation and winner, over the wins): ``what`` = ``wins``:
  ``n`` wins; ``what`` = a group type (:data:`~replay.store.facts_schema.GROUP_TYPES`):
  ``n`` groups of that type in the winning readings, ``k`` wins with one, ``huxi_s`` their
  胡息.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from engine.actions import ActionKind
from engine.cards import STOCK_SIZE
from engine.fast import event_counts as EC
from replay.derived.summarize import (
    Groups,
    Hands,
    by_mask,
    cluster_sums,
    key_array,
    mask_matrix,
    per_deal,
    prepare,
)
from replay.store import summary_schema as S
from replay.store.facts_schema import GROUP_TYPES

PASS, HU, PENG, CHI = (int(k) for k in (ActionKind.PASS, ActionKind.HU, ActionKind.PENG,
                                        ActionKind.CHI))  # fmt: skip
#: The offered kinds whose decline is counted (bits of ``events.options``).
OFFERED = (HU, PENG, CHI)
#: 提 and 跑: a seat's second one in a hand is a 八块.
FOUR = (int(ActionKind.TI), int(ActionKind.PAO))
N_KINDS = len(ActionKind)


class Events:
    """The columns of a shard's events the summaries read, in the order of their hands
    (``start[h] … start[h + 1] - 1`` are hand h's rows), and the policy code of each slot
    4·rotation + seat."""

    def __init__(self, events: pa.Table, h: Hands, per: list[tuple[str, ...]], names: list[str]):
        self.hand_id = _native(events, "hand_id")
        self.n = len(self.hand_id)
        self.seat, self.kind, self.n_legal, self.options = (
            _native(events, c) for c in ("seat", "kind", "n_legal", "options")
        )
        self.forced = _native(events, "forced").astype(np.uint8)
        players = len(per[0]) if per else 0
        if self.n and (int(self.seat.max()) >= players or int(self.kind.max()) >= N_KINDS):
            raise ValueError("an event has a seat or an action kind the run cannot have")
        # events are in hand order, ``n_events`` rows each (the kernel checks each row's
        # hand id; else :meth:`look_up` finds them)
        n_events = _native(h.table, "n_events").astype(np.int64)
        self.start = np.zeros(h.n + 1, np.int64)
        np.cumsum(n_events, out=self.start[1:])
        self.in_order = int(self.start[-1]) == self.n
        code = {p: i for i, p in enumerate(names)}
        width = S.MAX_SEATS * len(per)
        #: the policy code of each slot 4·rotation + seat (−1: no such seat)
        self.slot_policy = np.full(max(width, 1), -1, dtype=np.int64)
        for r, pols in enumerate(per):
            for s, p in enumerate(pols):
                self.slot_policy[S.MAX_SEATS * r + s] = code[p]

    def columns(self) -> tuple[np.ndarray, ...]:
        return (self.hand_id, self.seat, self.kind, self.forced, self.n_legal, self.options)

    def look_up(self, h: Hands) -> None:
        """Put the rows in hand order by their hand ids (events not in the hands' order, or
        not ``n_events`` each)."""
        hand = np.searchsorted(h.hand_id, self.hand_id)
        if self.n and (int(hand.max()) >= h.n or (h.hand_id[hand] != self.hand_id).any()):
            raise ValueError("an event's hand is not in the shard")
        order = np.argsort(hand, kind="stable")
        for name in ("hand_id", "seat", "kind", "forced", "n_legal", "options"):
            setattr(self, name, getattr(self, name)[order])
        self.start = np.zeros(h.n + 1, np.int64)
        np.cumsum(np.bincount(hand, minlength=h.n), out=self.start[1:])
        self.in_order = True


def _native(t: pa.Table, name: str) -> np.ndarray:
    """A column without nulls as numpy, in its own type (no copy for integers)."""
    return np.asarray(t.column(name).to_numpy(zero_copy_only=False))


def summarize_events(
    hands: pa.Table,
    events: pa.Table,
    manifest: dict[str, Any],
    h: Hands | None = None,
    facts: pa.Table | None = None,
) -> dict[str, pa.Table]:
    """The ``ev_*`` summary rows of one shard, by kind (conformed to the summary schema);
    ``h``: the shard's :class:`~replay.derived.summarize.Hands`, when the caller has them;
    ``facts``: its facts table (:func:`~replay.derived.facts.shard_facts`), else derived
    from the events."""
    from engine.rules import RuleSet
    from replay.derived.facts import shard_facts

    sh = S.run_shape(manifest)
    per, duplicate = sh.per, sh.duplicate
    h = h if h is not None else prepare(hands, manifest)
    names = h.names
    e = Events(events, h, per, names)
    masks, hmasks = S.cluster_masks(sh)
    if facts is None:
        facts = shard_facts(hands, events, RuleSet.from_dict(manifest["rules"]))
    f = HandFacts(facts, h)
    c = _Counts(h, e, f, masks, len(per), duplicate)
    out = {
        "ev_actions": _actions(c, names),
        "ev_declines": _declines(c, names),
        "ev_forced": _forced(c, names),
        "ev_options": _options(c, e, names),
        "ev_hands": _hands(h, c),
        "ev_wins": _wins(h),
        "ev_length": _length(h, c, hmasks, len(per)),
        "ev_facts": _facts(c, names),
        "ev_groups": _groups(h, f),
    }
    if duplicate:
        out["ev_paired"] = _paired(c, names)
    return {k: S.conform(k, t) for k, t in out.items()}


class _Counts:
    """The arrays of :func:`engine.fast.event_counts.counts` (one compiled pass over the
    shard's hands and events, deal by deal): per hand and per slot counts, and per policy
    code ``p`` and seat mask ``j`` (``masks[j]``) the cluster sums of every ``ev_*`` cluster
    kind. :attr:`policies`: the codes that play a slot."""

    def __init__(self, h: Hands, e: Events, f: HandFacts, masks: list[int], rotations: int,
                 duplicate: bool) -> None:  # fmt: skip
        self.masks = masks
        width = S.MAX_SEATS * rotations
        slot_policy = e.slot_policy[:width]
        self.policies = sorted(set(slot_policy[slot_policy >= 0].tolist()))
        n_pol = len(h.names)
        bits = (np.asarray(masks, np.int64)[:, None] >> np.arange(width)[None, :]) & 1
        member = [(bits == 1) & (slot_policy == p)[None, :] for p in range(n_pol)]
        depth = max([int(m.sum(axis=1).max()) for m in member if m.size] + [1])
        pm_slots = np.zeros((n_pol, len(masks), depth), np.int64)
        pm_len = np.zeros((n_pol, len(masks)), np.int64)
        for p, m in enumerate(member):
            for j in range(len(masks)):
                slots = np.flatnonzero(m[j])
                pm_slots[p, j, : len(slots)] = slots
                pm_len[p, j] = len(slots)
        seated = np.bincount(h.s_hand, weights=np.left_shift(1, h.s_seat), minlength=h.n)
        seated = seated.astype(np.int64)  # the bits of each hand's seat-hands
        winner = np.where(h.has_winner, h.winner, -1)
        order = np.argsort(h.deal, kind="stable")

        def run() -> dict[str, np.ndarray]:
            return EC.counts(
                order, h.deal, h.rotation, e.start, h.hand_id, seated,
                winner, f.popao, f.conflicts, f.bipai, e.columns(), pm_slots, pm_len,
                rotations, N_KINDS, OFFERED, PASS, FOUR, duplicate,
            )  # fmt: skip

        if not e.in_order:
            e.look_up(h)
        try:
            self.raw = run()
        except ValueError:  # the rows are not n_events per hand in order: find them
            e.look_up(h)
            self.raw = run()


def _rows_table(rows: list[tuple[Any, ...]], names: Sequence[str],
                types: Sequence[pa.DataType]) -> pa.Table:  # fmt: skip
    """Rows sorted as the SQL's ``ORDER BY ALL`` would (nulls last, strings by bytes)."""

    def key(r: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(
            (1, 0) if v is None else (0, v.encode() if isinstance(v, str) else v) for v in r
        )

    rows.sort(key=key)
    cols = list(zip(*rows)) if rows else [()] * len(names)
    return pa.table({n: pa.array(list(c), t) for n, c, t in zip(names, cols, types)})


def _actions(c: _Counts, names: list[str]) -> pa.Table:
    rows: list[tuple[Any, ...]] = []
    clu, act = c.raw["clu"], c.raw["act"]
    for p in c.policies:
        for j, mask in enumerate(c.masks):
            d, m, mm = (int(v) for v in clu[p, j])
            if not m:
                continue
            rows.append((mask, names[p], None, None, None, d, m, None, None, mm))
            for cat in np.flatnonzero(act[p, j, :, EC.A_N]):
                n, yy, ym = (int(v) for v in act[p, j, cat])
                rows.append((mask, names[p], int(cat) // 2, bool(cat % 2), n, None, None, yy,
                             ym, None))  # fmt: skip
    return _rows_table(
        rows,
        ("mask", "policy", "action", "forced", "n", "d", "m", "yy", "ym", "mm"),
        [pa.uint16(), pa.string(), pa.uint8(), pa.bool_()] + [pa.int64()] * 6,
    )


def _declines(c: _Counts, names: list[str]) -> pa.Table:
    rows: list[tuple[Any, ...]] = []
    dec = c.raw["dec"]
    for p in c.policies:
        for b, bit in enumerate(OFFERED):
            for j, mask in enumerate(c.masks):
                n, k, d = (int(v) for v in dec[p, b, j])
                if n:
                    rows.append((mask, names[p], bit, n, k, d))
    return _rows_table(
        rows,
        ("mask", "policy", "action", "n", "k", "d"),
        [pa.uint16(), pa.string(), pa.uint8()] + [pa.int64()] * 3,
    )


def _forced(c: _Counts, names: list[str]) -> pa.Table:
    rows: list[tuple[Any, ...]] = []
    frc = c.raw["frc"]
    for p in c.policies:
        for j, mask in enumerate(c.masks):
            n, k, d = (int(v) for v in frc[p, j])
            if n:
                rows.append((mask, names[p], n, k, d))
    return _rows_table(
        rows, ("mask", "policy", "n", "k", "d"), [pa.uint16(), pa.string()] + [pa.int64()] * 3
    )


def _options(c: _Counts, e: Events, names: list[str]) -> pa.Table:
    """Real choices not forced, per slot (rotation, seat: its policy) and options."""
    legal = c.raw["legal"]
    slot, v = np.nonzero(legal)  # row-major: by slot, then options
    return pa.table(
        {
            "rotation": pa.array((slot // S.MAX_SEATS).astype(np.uint8)),
            "seat": pa.array((slot % S.MAX_SEATS).astype(np.uint8)),
            "policy": pa.array([names[p] for p in e.slot_policy[slot]], pa.string()),
            "v": pa.array(v.astype(np.int32)),
            "n": pa.array(legal[slot, v].astype(np.int64)),
        }
    )


#: The per-hand facts of ``ev_hands``, in the order of their rows.
HAND_FACTS = ("bakuai", "chouhu", "hands", "renpeng")


def _hands(h: Hands, c: _Counts) -> pa.Table:
    """Per rotation and decisions per hand: the hands, and those with each fact."""
    raw = c.raw
    facts = {
        "hands": np.ones(h.n, dtype=bool),
        "chouhu": raw["declined"][OFFERED.index(HU)] > 0,
        "renpeng": raw["declined"][OFFERED.index(PENG)] > 0,
        "bakuai": (raw["fours"] >= 2).any(axis=1),
    }
    idx, what = [], []
    for j, name in enumerate(HAND_FACTS):
        i = np.flatnonzero(facts[name])
        idx.append(i)
        what.append(np.full(len(i), j, dtype=np.int64))
    i = np.concatenate(idx)
    g = Groups([h.rotation[i], raw["decisions"][i], np.concatenate(what)])
    return pa.table(
        {
            "rotation": key_array(g.keys[0], pa.uint8()),
            "v": pa.array(g.keys[1].astype(np.int32)),
            "what": pa.array([HAND_FACTS[w] for w in g.keys[2]], pa.string()),
            "n": pa.array(g.count()),
        }
    )


def _wins(h: Hands) -> pa.Table:
    w = np.flatnonzero(h.win)
    g = Groups([h.rotation[w], h.winner[w], h.stock_left[w]])
    return pa.table(
        {
            "rotation": key_array(g.keys[0], pa.uint8()),
            "winner": key_array(g.keys[1], pa.uint8()),
            "stock": key_array(g.keys[2], pa.uint8()),
            "n": pa.array(g.count()),
        }
    )


def _length(h: Hands, c: _Counts, hmasks: list[int], rotations: int) -> pa.Table:
    """Per rotation mask: the cluster sums of the hands' length in decisions and in draws."""
    nd = len(h.deals)
    hm = mask_matrix(hmasks, rotations)
    hands = by_mask(per_deal(h.deal, h.rotation, nd, rotations), hm)  # masks × deals
    rows: list[tuple[Any, ...]] = []
    draws = STOCK_SIZE - h.stock_left.astype(np.int64)
    lengths = {"decisions": c.raw["decisions"], "draws": draws}
    for what, v in lengths.items():
        y = by_mask(per_deal(h.deal, h.rotation, nd, rotations, v), hm)
        n, d, ys, yy, ym, mm = cluster_sums(hands, y)
        rows += [
            (mask, what, int(n[j]), int(d[j]), int(ys[j]), int(n[j]), int(yy[j]), int(ym[j]),
             int(mm[j]))
            for j, mask in enumerate(hmasks)
            if n[j]
        ]  # fmt: skip
    return _rows_table(
        rows,
        ("mask", "what", "n", "d", "y", "m", "yy", "ym", "mm"),
        [pa.uint16(), pa.string()] + [pa.int64()] * 7,
    )


class HandFacts:
    """The columns of a shard's facts the summaries read, in the order of its hands."""

    def __init__(self, facts: pa.Table, h: Hands) -> None:
        import pyarrow.compute as pc

        ids = _native(facts, "hand_id").astype(np.int64)
        if len(ids) != h.n or (h.n and (ids != h.hand_id).any()):
            raise ValueError("the facts are not one row per hand of the shard, in order")

        def col(name: str, fill: Any = 0) -> np.ndarray:
            return np.asarray(pc.fill_null(facts.column(name), fill).to_numpy(
                zero_copy_only=False), dtype=np.int64)  # fmt: skip

        self.popao = col("popao", False)
        self.conflicts = col("conflicts")
        self.bipai = np.stack([col(f"bipai_{s}") for s in range(S.MAX_SEATS)])  # seats × hands
        self.groups = {t: (col(f"g_{t}_n"), col(f"g_{t}_huxi")) for t in GROUP_TYPES}


def _facts(c: _Counts, names: list[str]) -> pa.Table:
    """Per mask and policy: its selected seat-hands (with their 比牌 eats), its wins (by
    破跑胡) and the hands it plays a selected seat in (with their claim conflicts)."""
    clu, fac = c.raw["clu"], c.raw["fac"]
    rows: list[tuple[Any, ...]] = []
    for p in c.policies:
        pol = names[p]
        for j, mask in enumerate(c.masks):
            d, m, _ = (int(v) for v in clu[p, j])
            if not m:
                continue
            v = [int(x) for x in fac[p, j]]
            rows.append((mask, pol, "hands", v[EC.F_HANDS], v[EC.F_HANDS_D],
                         v[EC.F_CONFLICTED], v[EC.F_CONFLICTS]))  # fmt: skip
            rows.append((mask, pol, "seats", m, d, v[EC.F_BIP_K], v[EC.F_BIP_Y]))
            if v[EC.F_WON]:
                rows.append((mask, pol, "wins", v[EC.F_WON], v[EC.F_WON_D], v[EC.F_POPAO], None))
    return _rows_table(
        rows,
        ("mask", "policy", "what", "n", "d", "k", "y"),
        [pa.uint16(), pa.string(), pa.string()] + [pa.int64()] * 4,
    )


def _groups(h: Hands, f: HandFacts) -> pa.Table:
    """Per rotation and winner: the wins, and per group type its groups, the wins with one
    and their 胡息."""
    w = np.flatnonzero(h.win)
    g = Groups([h.rotation[w], h.winner[w]])
    rows: list[tuple[Any, ...]] = []
    cols: list[tuple[str, np.ndarray, np.ndarray | None]] = [
        ("wins", np.ones(len(w), np.int64), None)
    ]
    cols += [(t, n[w], x[w]) for t, (n, x) in f.groups.items()]
    for what, n, x in cols:
        ns = g.sum(n).to_numpy()
        ks = g.sum((n > 0).astype(np.int64)).to_numpy() if x is not None else None
        xs = g.sum(x).to_numpy() if x is not None else None
        for i in range(len(ns)):
            rows.append((int(g.keys[0][i]), int(g.keys[1][i]), what, int(ns[i]),
                         None if ks is None else int(ks[i]), None if xs is None else int(xs[i])))  # fmt: skip
    return _rows_table(
        rows,
        ("rotation", "winner", "what", "n", "k", "huxi_s"),
        [pa.uint8(), pa.uint8(), pa.string()] + [pa.int64()] * 3,
    )


def _paired(c: _Counts, names: list[str]) -> pa.Table:
    rows: list[tuple[Any, ...]] = []
    pair_d, pair_s, played = c.raw["pair_d"], c.raw["pair_s"], c.raw["pair_played"]
    for ia, a in enumerate(c.policies):
        for b in c.policies[ia + 1 :]:
            for j, mask in enumerate(c.masks):
                d = int(pair_d[a, b, j])
                if not d:
                    continue
                rows.append((mask, names[a], names[b], None, None, d, None, None))
                for cat in np.flatnonzero(played[a, b, j]):
                    dy, dyy = (float(v) for v in pair_s[a, b, j, cat])
                    rows.append((mask, names[a], names[b], int(cat) // 2, bool(cat % 2), None,
                                 dy, dyy))  # fmt: skip
    return _rows_table(
        rows,
        ("mask", "a", "b", "action", "forced", "d", "dy", "dyy"),
        [pa.uint16(), pa.string(), pa.string(), pa.uint8(), pa.bool_(), pa.int64()]
        + [pa.float64()] * 2,
    )
