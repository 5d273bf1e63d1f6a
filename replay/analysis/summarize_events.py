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
  seat-hand, added in deal order (as ``paired``);

and two kinds from the shard's per-hand facts (docs/LOG_FORMAT.md §12, the table
:func:`~replay.analysis.facts.shard_facts` gives):

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
from replay.store.facts_schema import GROUP_TYPES

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
    hands: pa.Table,
    events: pa.Table,
    manifest: dict[str, Any],
    h: Hands | None = None,
    facts: pa.Table | None = None,
) -> dict[str, pa.Table]:
    """The ``ev_*`` summary rows of one shard, by kind (conformed to the summary schema);
    ``h``: the shard's :class:`~replay.analysis.summarize.Hands`, when the caller has them;
    ``facts``: its facts table (:func:`~replay.analysis.facts.shard_facts`), else derived
    from the events."""
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
    out.update(fact_kinds(hands, events, manifest, h, c, facts))
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


def fact_kinds(
    hands: pa.Table,
    events: pa.Table,
    manifest: dict[str, Any],
    h: Hands,
    c: _Counts,
    facts: pa.Table | None,
) -> dict[str, pa.Table]:
    """The ``ev_facts`` and ``ev_groups`` rows of a shard, from its facts table (derived
    from its events when ``facts`` is None)."""
    from engine.rules import RuleSet
    from replay.analysis.facts import shard_facts

    if facts is None:
        facts = shard_facts(hands, events, RuleSet.from_dict(manifest["rules"]))
    f = HandFacts(facts, h)
    return {"ev_facts": _facts(h, c, f, h.names), "ev_groups": _groups(h, f)}


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


def _facts(h: Hands, c: _Counts, f: HandFacts, names: list[str]) -> pa.Table:
    """Per mask and policy: its selected seat-hands (with their 比牌 eats), its wins (by
    破跑胡) and the hands it plays a selected seat in (with their claim conflicts)."""
    nd = len(h.deals)
    width = c.mmp[c.policies[0]].shape[1] if c.policies else 0
    bipai = f.bipai[h.s_seat, h.s_hand]
    won = h.s_won
    seat_counts = {
        "bip_y": per_deal(h.s_deal, h.s_slot, nd, width, bipai),
        "bip_k": per_deal(h.s_deal, h.s_slot, nd, width, bipai > 0),
        "won": per_deal(h.s_deal, h.s_slot, nd, width, won),
        "popao": per_deal(h.s_deal, h.s_slot, nd, width, won * f.popao[h.s_hand]),
    }
    per_hand = per_deal(h.s_hand, h.s_slot, h.n, width)  # slots × hands
    n_masks = len(c.masks)
    flat = (np.arange(n_masks)[:, None] * nd + h.deal[None, :]).ravel()

    def to_deals(v: np.ndarray) -> np.ndarray:
        """(masks × deals) sums of a (masks × hands) array."""
        w = v.ravel().astype(np.float64)
        out = np.bincount(flat, weights=w, minlength=n_masks * nd).reshape(n_masks, nd)
        return np.rint(out).astype(np.int64)

    rows: list[tuple[Any, ...]] = []
    for p in c.policies:
        mmp, m = c.mmp[p], c.m[p]
        g = {k: by_mask(v, mmp) for k, v in seat_counts.items()}
        played = by_mask(per_hand, mmp) > 0  # masks × hands
        hands = to_deals(played)
        conflicted = to_deals(played & (f.conflicts > 0)[None, :])
        conflicts = to_deals(played * f.conflicts[None, :])
        for j, mask in enumerate(c.masks):
            if not m[j].sum():
                continue
            pol = names[p]
            rows.append((mask, pol, "hands", int(hands[j].sum()), int((hands[j] > 0).sum()),
                         int(conflicted[j].sum()), int(conflicts[j].sum())))  # fmt: skip
            rows.append((mask, pol, "seats", int(m[j].sum()), int((m[j] > 0).sum()),
                         int(g["bip_k"][j].sum()), int(g["bip_y"][j].sum())))  # fmt: skip
            if g["won"][j].sum():
                rows.append((mask, pol, "wins", int(g["won"][j].sum()),
                             int((g["won"][j] > 0).sum()), int(g["popao"][j].sum()), None))  # fmt: skip
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
