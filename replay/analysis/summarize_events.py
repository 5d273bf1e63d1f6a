"""A shard's event summary rows (the ``ev_*`` kinds of the summary file, docs/LOG_FORMAT.md
§10), computed with numpy from the shard's ``events`` and ``hands``: what ``paohuzi stats
--events`` and the Actions page read instead of the events table.

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
* ``ev_paired`` (--duplicate; per mask and pair of policies a < b): the row with ``action``
  null holds ``d``, the deals where both have a selected seat; the others, per action kind
  and forced flag, the sums ``dy``, ``dyy`` of the per-deal difference of events per
  seat-hand, added in deal order (as ``paired``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from engine.actions import ActionKind
from replay.analysis.summarize import (
    Groups,
    Hands,
    by_mask,
    int_column,
    key_array,
    mask_matrix,
    per_deal,
    seq_sums,
)
from replay.store import summary_schema as S

PASS, HU, PENG, CHI = (int(k) for k in (ActionKind.PASS, ActionKind.HU, ActionKind.PENG,
                                        ActionKind.CHI))  # fmt: skip
#: The offered kinds whose decline is counted (bits of ``events.options``).
OFFERED = (HU, PENG, CHI)
#: 提 and 跑: a seat's second one in a hand is a 八块.
FOUR = (int(ActionKind.TI), int(ActionKind.PAO))
N_KINDS = len(ActionKind)


class Events:
    """The columns of a shard's events the summaries read, each with its hand's row."""

    def __init__(self, events: pa.Table, h: Hands, per: list[tuple[str, ...]], names: list[str]):
        hid = int_column(events, "hand_id")[0]
        self.n = len(hid)
        self.hand = np.searchsorted(h.hand_id, hid)
        if self.n and (int(self.hand.max()) >= h.n or (h.hand_id[self.hand] != hid).any()):
            raise ValueError("an event's hand is not in the shard")
        self.seat = int_column(events, "seat")[0]
        self.kind = int_column(events, "kind")[0]
        self.forced = int_column(events, "forced")[0]
        self.n_legal = int_column(events, "n_legal")[0]
        self.options = int_column(events, "options")[0]
        self.rotation = h.rotation[self.hand]
        self.slot = S.MAX_SEATS * self.rotation + self.seat
        self.deal = h.deal[self.hand]
        code = {p: i for i, p in enumerate(names)}
        width = S.MAX_SEATS * len(per)
        #: the policy code of each slot 4·rotation + seat (−1: no such seat)
        self.slot_policy = np.full(max(width, 1), -1, dtype=np.int64)
        for r, pols in enumerate(per):
            for s, p in enumerate(pols):
                self.slot_policy[S.MAX_SEATS * r + s] = code[p]
        self.policy = self.slot_policy[self.slot] if self.n else np.zeros(0, dtype=np.int64)
        self.choice = self.n_legal >= 2

    def offered(self, bit: int) -> np.ndarray:
        return self.choice & (((self.options >> bit) & 1) == 1)


def summarize_events(
    hands: pa.Table, events: pa.Table, manifest: dict[str, Any]
) -> dict[str, pa.Table]:
    """The ``ev_*`` summary rows of one shard, by kind (conformed to the summary schema)."""
    players, per, duplicate, _ = S.run_shape(manifest)
    names = sorted({p for pols in per for p in pols})
    h = Hands(hands, per, players, names)
    e = Events(events, h, per, names)
    masks = S.seat_masks(per, players)
    width = S.MAX_SEATS * len(per)
    nd = len(h.deals)
    mm = mask_matrix(masks, width)
    policies = sorted(set(e.slot_policy[e.slot_policy >= 0].tolist()))
    # per policy: the mask matrix restricted to its slots, and its seat-hands per deal
    mmp = {p: mm * (e.slot_policy[:width] == p)[None, :] for p in policies}
    seat_hands = per_deal(h.s_deal, h.s_slot, nd, width)
    m = {p: by_mask(seat_hands, mmp[p]) for p in policies}

    def y(sel: np.ndarray, p: int) -> np.ndarray:
        """(masks × deals) the events of ``sel`` declared by policy ``p``'s selected seats."""
        return by_mask(per_deal(e.deal[sel], e.slot[sel], nd, width), mmp[p])

    out = {
        "ev_actions": _actions(e, masks, names, policies, m, y),
        "ev_declines": _declines(e, masks, names, policies, y),
        "ev_forced": _forced(e, masks, names, policies, y),
        "ev_options": _options(e, names),
        "ev_hands": _hands(h, e),
        "ev_wins": _wins(h),
    }
    if duplicate:
        out["ev_paired"] = _paired(e, masks, names, policies, m, y)
    return {k: S.conform(k, t) for k, t in out.items()}


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


def _kind_pairs(e: Events) -> list[tuple[int, int]]:
    """The (action kind, forced) pairs the shard's events have."""
    return sorted(set(zip(e.kind.tolist(), e.forced.tolist())))


def _actions(e: Events, masks: list[int], names: list[str], policies: list[int],
             m: dict[int, np.ndarray], y: Any) -> pa.Table:  # fmt: skip
    rows: list[tuple[Any, ...]] = []
    pairs = _kind_pairs(e)
    for p in policies:
        mp = m[p]
        msum, d, mmsum = mp.sum(axis=1), (mp > 0).sum(axis=1), (mp * mp).sum(axis=1)
        per_pair = [(k, f, y((e.kind == k) & (e.forced == f), p)) for k, f in pairs]
        for j, mask in enumerate(masks):
            if not msum[j]:
                continue
            rows.append((mask, names[p], None, None, None, int(d[j]), int(msum[j]), None,
                         None, int(mmsum[j])))  # fmt: skip
            for k, f, yk in per_pair:
                n = int(yk[j].sum())
                if n:
                    yy, ym = int((yk[j] * yk[j]).sum()), int((yk[j] * mp[j]).sum())
                    rows.append((mask, names[p], k, bool(f), n, None, None, yy, ym, None))
    return _rows_table(
        rows,
        ("mask", "policy", "action", "forced", "n", "d", "m", "yy", "ym", "mm"),
        [pa.uint16(), pa.string(), pa.uint8(), pa.bool_()] + [pa.int64()] * 6,
    )


def _declines(e: Events, masks: list[int], names: list[str], policies: list[int],
              y: Any) -> pa.Table:  # fmt: skip
    rows: list[tuple[Any, ...]] = []
    passed = e.kind == PASS
    for p in policies:
        for bit in OFFERED:
            sel = e.offered(bit)
            offers = y(sel, p)
            k = y(sel & passed, p).sum(axis=1)
            n, d = offers.sum(axis=1), (offers > 0).sum(axis=1)
            for j, mask in enumerate(masks):
                if n[j]:
                    rows.append((mask, names[p], bit, int(n[j]), int(k[j]), int(d[j])))
    return _rows_table(
        rows,
        ("mask", "policy", "action", "n", "k", "d"),
        [pa.uint16(), pa.string(), pa.uint8()] + [pa.int64()] * 3,
    )


def _forced(e: Events, masks: list[int], names: list[str], policies: list[int],
            y: Any) -> pa.Table:  # fmt: skip
    rows: list[tuple[Any, ...]] = []
    every = np.ones(e.n, dtype=bool)
    for p in policies:
        ev = y(every, p)
        k = y(e.forced == 1, p).sum(axis=1)
        n, d = ev.sum(axis=1), (ev > 0).sum(axis=1)
        for j, mask in enumerate(masks):
            if n[j]:
                rows.append((mask, names[p], int(n[j]), int(k[j]), int(d[j])))
    return _rows_table(
        rows, ("mask", "policy", "n", "k", "d"), [pa.uint16(), pa.string()] + [pa.int64()] * 3
    )


def _options(e: Events, names: list[str]) -> pa.Table:
    sel = np.flatnonzero(e.choice & (e.forced == 0))
    g = Groups([e.rotation[sel], e.seat[sel], e.policy[sel], e.n_legal[sel]])
    return pa.table(
        {
            "rotation": key_array(g.keys[0], pa.uint8()),
            "seat": key_array(g.keys[1], pa.uint8()),
            "policy": pa.array([names[p] for p in g.keys[2]], pa.string()),
            "v": pa.array(g.keys[3].astype(np.int32)),
            "n": pa.array(g.count()),
        }
    )


#: The per-hand facts of ``ev_hands``, in the order of their rows.
HAND_FACTS = ("bakuai", "chouhu", "hands", "renpeng")


def _hands(h: Hands, e: Events) -> pa.Table:
    """Per rotation and decisions per hand: the hands, and those with each fact."""
    decisions = np.bincount(e.hand, minlength=h.n)
    passed = e.kind == PASS
    facts: dict[str, Any] = {
        "hands": np.ones(h.n, dtype=bool),
        "chouhu": np.bincount(e.hand[passed & e.offered(HU)], minlength=h.n) > 0,
        "renpeng": np.bincount(e.hand[passed & e.offered(PENG)], minlength=h.n) > 0,
    }
    four = np.isin(e.kind, FOUR)
    per_seat = np.bincount(e.hand[four] * S.MAX_SEATS + e.seat[four], minlength=h.n * S.MAX_SEATS)
    facts["bakuai"] = (per_seat.reshape(h.n, S.MAX_SEATS) >= 2).any(axis=1)
    idx, what = [], []
    for j, name in enumerate(HAND_FACTS):
        i = np.flatnonzero(facts[name])
        idx.append(i)
        what.append(np.full(len(i), j, dtype=np.int64))
    i = np.concatenate(idx)
    g = Groups([h.rotation[i], decisions[i], np.concatenate(what)])
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


def _paired(e: Events, masks: list[int], names: list[str], policies: list[int],
            m: dict[int, np.ndarray], y: Any) -> pa.Table:  # fmt: skip
    rows: list[tuple[Any, ...]] = []
    pairs = _kind_pairs(e)
    with np.errstate(invalid="ignore", divide="ignore"):
        for ia, a in enumerate(policies):
            for b in policies[ia + 1 :]:
                both = (m[a] > 0) & (m[b] > 0)
                d = both.sum(axis=1)
                for j, mask in enumerate(masks):
                    if d[j]:
                        rows.append((mask, names[a], names[b], None, None, int(d[j]), None,
                                     None))  # fmt: skip
                for k, f in pairs:
                    sel = (e.kind == k) & (e.forced == f)
                    ya, yb = y(sel, a), y(sel, b)
                    diff = np.where(both, ya / m[a] - yb / m[b], 0.0)
                    dy, dyy = seq_sums(diff), seq_sums(diff * diff)
                    any_ = (both & ((ya > 0) | (yb > 0))).any(axis=1)
                    for j, mask in enumerate(masks):
                        if d[j] and any_[j]:
                            rows.append((mask, names[a], names[b], k, bool(f), None,
                                         float(dy[j]), float(dyy[j])))  # fmt: skip
    return _rows_table(
        rows,
        ("mask", "a", "b", "action", "forced", "d", "dy", "dyy"),
        [
            pa.uint16(),
            pa.string(),
            pa.string(),
            pa.uint8(),
            pa.bool_(),
            pa.int64(),
            pa.float64(),
            pa.float64(),
        ],  # fmt: skip
    )
