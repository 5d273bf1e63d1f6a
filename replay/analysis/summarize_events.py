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
* ``ev_length`` (cluster kind, per rotation mask): hand length, ``what`` = ``decisions``
  (the hand's events) or ``draws`` (cards drawn from the stock, ``STOCK_SIZE`` −
  ``stock_left``): ``n`` hands, ``d`` clusters, and the cluster sums ``y`` = Σ y_c, ``m`` =
  Σ m_c, ``yy``, ``ym``, ``mm`` of the length ``y_c`` and the hands ``m_c`` per cluster;
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
from engine.cards import STOCK_SIZE
from replay.analysis.summarize import (
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

PASS, HU, PENG, CHI = (int(k) for k in (ActionKind.PASS, ActionKind.HU, ActionKind.PENG,
                                        ActionKind.CHI))  # fmt: skip
#: The offered kinds whose decline is counted (bits of ``events.options``).
OFFERED = (HU, PENG, CHI)
#: 提 and 跑: a seat's second one in a hand is a 八块.
FOUR = (int(ActionKind.TI), int(ActionKind.PAO))
N_KINDS = len(ActionKind)


class Events:
    """The columns of a shard's events the summaries read, each with its hand's row, and
    the policy code of each slot 4·rotation + seat."""

    def __init__(self, events: pa.Table, h: Hands, per: list[tuple[str, ...]], names: list[str]):
        hid = _native(events, "hand_id")
        self.n = len(hid)
        # events are in hand order, ``n_events`` rows each (checked; else looked up)
        n_events = _native(h.table, "n_events")
        hand = np.repeat(np.arange(h.n), n_events) if int(n_events.sum()) == self.n else None
        if hand is None or (self.n and (h.hand_id[hand] != hid).any()):
            hand = np.searchsorted(h.hand_id, hid)
            if self.n and (int(hand.max()) >= h.n or (h.hand_id[hand] != hid).any()):
                raise ValueError("an event's hand is not in the shard")
        self.hand = hand.astype(np.int64)
        self.seat, self.kind, self.n_legal, self.options = (
            _native(events, c) for c in ("seat", "kind", "n_legal", "options")
        )
        self.forced = _native(events, "forced").astype(np.uint8)
        players = len(per[0]) if per else 0
        if self.n and (int(self.seat.max()) >= players or int(self.kind.max()) >= N_KINDS):
            raise ValueError("an event has a seat or an action kind the run cannot have")
        code = {p: i for i, p in enumerate(names)}
        width = S.MAX_SEATS * len(per)
        #: the policy code of each slot 4·rotation + seat (−1: no such seat)
        self.slot_policy = np.full(max(width, 1), -1, dtype=np.int64)
        for r, pols in enumerate(per):
            for s, p in enumerate(pols):
                self.slot_policy[S.MAX_SEATS * r + s] = code[p]


def _native(t: pa.Table, name: str) -> np.ndarray:
    """A column without nulls as numpy, in its own type (no copy for integers)."""
    return np.asarray(t.column(name).to_numpy(zero_copy_only=False))


def summarize_events(
    hands: pa.Table, events: pa.Table, manifest: dict[str, Any], h: Hands | None = None
) -> dict[str, pa.Table]:
    """The ``ev_*`` summary rows of one shard, by kind (conformed to the summary schema);
    ``h``: the shard's :class:`~replay.analysis.summarize.Hands`, when the caller has them."""
    sh = S.run_shape(manifest)
    per, duplicate = sh.per, sh.duplicate
    h = h if h is not None else prepare(hands, manifest)
    names = h.names
    e = Events(events, h, per, names)
    masks, hmasks = S.cluster_masks(sh)
    c = _Counts(h, e, masks, len(per))
    out = {
        "ev_actions": _actions(c, names),
        "ev_declines": _declines(c, names),
        "ev_forced": _forced(c, names),
        "ev_options": _options(c, e, names),
        "ev_hands": _hands(h, c),
        "ev_wins": _wins(h),
        "ev_length": _length(h, c, hmasks, len(per)),
    }
    if duplicate:
        out["ev_paired"] = _paired(c, names)
    return {k: S.conform(k, t) for k, t in out.items()}


class _Counts:
    """Per policy: the seat-hands ``m[p]`` (masks × deals) of its selected seats, and the
    events ``y[p]`` (masks × categories × deals) they declared, a category per (kind,
    forced) pair the shard has (:attr:`pairs`); per offered kind ``offers[bit][p]`` (masks
    × taken/passed × deals); and the per-hand and per-slot counts of
    :func:`engine.fast.event_counts.counts` (one compiled pass over the events), times the
    mask matrix restricted to the policy's slots."""

    def __init__(self, h: Hands, e: Events, masks: list[int], rotations: int) -> None:
        from engine.fast.event_counts import counts

        self.masks = masks
        width = S.MAX_SEATS * rotations
        nd = len(h.deals)
        mm = mask_matrix(masks, width)
        self.policies = sorted(set(e.slot_policy[e.slot_policy >= 0].tolist()))
        self.mmp = {p: mm * (e.slot_policy[:width] == p)[None, :] for p in self.policies}
        seat_hands = per_deal(h.s_deal, h.s_slot, nd, width)
        self.m = {p: by_mask(seat_hands, self.mmp[p]) for p in self.policies}
        self.raw = counts(e.hand, e.seat, e.kind, e.forced, e.n_legal, e.options, h.rotation,
                          h.deal, nd, rotations, N_KINDS, OFFERED, PASS, FOUR)  # fmt: skip
        by_kind = self.raw["by_kind"]
        present = np.flatnonzero(by_kind.sum(axis=(0, 2)))
        self.pairs = [(int(k) // 2, int(k) % 2) for k in present]
        self.forced = np.array([f for _, f in self.pairs], dtype=bool)
        self.y = self._by_policy(by_kind[:, present, :])
        self.offers = {b: self._by_policy(self.raw["offers"][j]) for j, b in enumerate(OFFERED)}

    def _by_policy(self, cube: np.ndarray) -> dict[int, np.ndarray]:
        """(masks × categories × deals) per policy of a (slots × categories × deals) float
        cube of counts (exact: small integers)."""
        width, cats, nd = cube.shape
        flat = np.ascontiguousarray(cube).reshape(width, cats * nd)
        return {
            p: np.rint(self.mmp[p] @ flat).astype(np.int64).reshape(-1, cats, nd)
            for p in self.policies
        }


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
    for p in c.policies:
        mp, yp = c.m[p], c.y[p]
        msum, d, mmsum = mp.sum(axis=1), (mp > 0).sum(axis=1), (mp * mp).sum(axis=1)
        n, yy = yp.sum(axis=2), (yp * yp).sum(axis=2)
        ym = np.einsum("mcd,md->mc", yp, mp)
        for j, mask in enumerate(c.masks):
            if not msum[j]:
                continue
            rows.append((mask, names[p], None, None, None, int(d[j]), int(msum[j]), None,
                         None, int(mmsum[j])))  # fmt: skip
            for i, (k, f) in enumerate(c.pairs):
                if n[j, i]:
                    rows.append((mask, names[p], k, bool(f), int(n[j, i]), None, None,
                                 int(yy[j, i]), int(ym[j, i]), None))  # fmt: skip
    return _rows_table(
        rows,
        ("mask", "policy", "action", "forced", "n", "d", "m", "yy", "ym", "mm"),
        [pa.uint16(), pa.string(), pa.uint8(), pa.bool_()] + [pa.int64()] * 6,
    )


def _declines(c: _Counts, names: list[str]) -> pa.Table:
    rows: list[tuple[Any, ...]] = []
    for p in c.policies:
        for bit in OFFERED:
            o = c.offers[bit][p]
            offers = o[:, 0, :] + o[:, 1, :]
            n, k, d = offers.sum(axis=1), o[:, 1, :].sum(axis=1), (offers > 0).sum(axis=1)
            for j, mask in enumerate(c.masks):
                if n[j]:
                    rows.append((mask, names[p], bit, int(n[j]), int(k[j]), int(d[j])))
    return _rows_table(
        rows,
        ("mask", "policy", "action", "n", "k", "d"),
        [pa.uint16(), pa.string(), pa.uint8()] + [pa.int64()] * 3,
    )


def _forced(c: _Counts, names: list[str]) -> pa.Table:
    rows: list[tuple[Any, ...]] = []
    for p in c.policies:
        every = c.y[p].sum(axis=1)  # masks × deals
        k = c.y[p][:, c.forced, :].sum(axis=(1, 2))
        n, d = every.sum(axis=1), (every > 0).sum(axis=1)
        for j, mask in enumerate(c.masks):
            if n[j]:
                rows.append((mask, names[p], int(n[j]), int(k[j]), int(d[j])))
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


def _paired(c: _Counts, names: list[str]) -> pa.Table:
    rows: list[tuple[Any, ...]] = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for ia, a in enumerate(c.policies):
            for b in c.policies[ia + 1 :]:
                ma, mb = c.m[a][:, None, :], c.m[b][:, None, :]
                both = (ma > 0) & (mb > 0)  # masks × 1 × deals
                d = both[:, 0, :].sum(axis=1)
                ya, yb = c.y[a], c.y[b]
                diff = np.where(both, ya / ma - yb / mb, 0.0)  # masks × categories × deals
                dy, dyy = _seq_sums(diff), _seq_sums(diff * diff)
                played: np.ndarray = np.asarray((both & ((ya > 0) | (yb > 0))).any(axis=2))
                for j, mask in enumerate(c.masks):
                    if not d[j]:
                        continue
                    rows.append((mask, names[a], names[b], None, None, int(d[j]), None, None))
                    for i, (k, f) in enumerate(c.pairs):
                        if played[j, i]:
                            rows.append((mask, names[a], names[b], k, bool(f), None,
                                         float(dy[j, i]), float(dyy[j, i])))  # fmt: skip
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


def _seq_sums(x: np.ndarray) -> np.ndarray:
    """Σ along the last axis (the deals, in deal_id order), one addition at a time."""
    if not x.shape[-1]:
        return np.zeros(x.shape[:-1])
    return np.cumsum(x, axis=-1)[..., -1]
