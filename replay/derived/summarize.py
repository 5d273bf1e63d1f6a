"""A shard's summary rows computed with numpy: the builder ``paohuzi simulate`` and ``paohuzi
index`` use. The SQL of :func:`replay.derived.summarize_sql.summarize_shard_sql` is the readable
reference; ``make test`` holds the two to equal tables, row for row
(tests/replay/derived/test_summarize_equal.py).

Row sets and order are the SQL's: a group exists when it has at least one row, nulls sort
last (DuckDB's ``ORDER BY ALL``), strings by their bytes, and a sum over a nullable column is
null when all its values are. The cluster kinds are matrix products: per deal and per slot
``4·rotation + seat`` a count or a sum, times the 0/1 matrix of the seat masks (or rotation
masks), gives every mask's per-deal figure at once. The ``paired`` kind's float sums run over
the deals in ``deal_id`` order, one addition at a time, as the SQL's ordered ``sum``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from replay.store import summary_schema as S

_NULL = 1 << 20  # a null key: sorts after every value


def int_column(hands: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values with nulls as 0, validity) of a column."""
    c = hands.column(name)
    valid = np.asarray(c.is_valid(), dtype=bool)
    if pa.types.is_boolean(c.type):
        c = c.cast(pa.int8())
    if c.null_count:
        c = pc.fill_null(c, 0)
    return np.asarray(c.to_numpy(zero_copy_only=False), dtype=np.int64), valid


def _key(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    return np.where(valid, values, _NULL)


class Groups:
    """Rows grouped by integer keys (sorted lexicographically, the first key first)."""

    def __init__(self, keys: Sequence[np.ndarray]) -> None:
        n = len(keys[0])
        self.order = np.lexsort(keys[::-1]) if n else np.zeros(0, dtype=np.int64)
        sk = [k[self.order] for k in keys]
        change = np.zeros(n, dtype=bool)
        if n:
            change[0] = True
            for k in sk:
                change[1:] |= k[1:] != k[:-1]
        self.starts = np.flatnonzero(change)
        self.keys = [k[self.starts] for k in sk]

    def count(self) -> np.ndarray:
        n = len(self.order)
        return np.diff(np.append(self.starts, n)).astype(np.int64)

    def sum(self, values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
        """Σ per group (int64), null where the group has no valid value."""
        if not len(self.starts):
            return pa.array([], pa.int64())
        v = values[self.order]
        if valid is None:
            return pa.array(np.add.reduceat(v, self.starts))
        ok = valid[self.order]
        s = np.add.reduceat(np.where(ok, v, 0), self.starts)
        has = np.add.reduceat(ok.astype(np.int64), self.starts) > 0
        return pa.array(s, mask=~has)


def key_array(k: np.ndarray, typ: pa.DataType) -> pa.Array:
    null = k == _NULL
    return pa.array(np.where(null, 0, k).astype(typ.to_pandas_dtype()), typ, mask=null)


def prepare(hands: pa.Table, manifest: dict[str, Any]) -> Hands:
    """The shard's :class:`Hands` for the run of ``manifest`` (its rules and params)."""
    sh = S.run_shape(manifest)
    names = sorted({p for pols in sh.per for p in pols})  # policy codes in string order
    return Hands(hands, sh.per, sh.players, names, sh.classes)


def summarize_shard(
    hands: pa.Table, manifest: dict[str, Any], h: Hands | None = None
) -> dict[str, pa.Table]:
    """The summary rows of one shard's ``hands`` table, by kind: the same tables as
    :func:`replay.derived.summarize_sql.summarize_shard_sql`. ``h``: the shard's
    :class:`Hands` (:func:`prepare`), when the caller has them."""
    sh = S.run_shape(manifest)
    h = h if h is not None else prepare(hands, manifest)
    out = {
        "hands": _hands_kind(h),
        "stock": _stock_kind(h),
        "values": _values_kind(h),
        "mingtang": _mingtang_kind(h),
        "conv": _conv_kind(h, sh.granule, h.names),
    }
    masks, hmasks = S.cluster_masks(sh)
    out["clusters"], groups = _clusters_kind(h, masks, hmasks, len(sh.per), h.names)
    if sh.duplicate:
        out["paired"] = _paired_kind(h, masks, h.names, groups)
    return {k: S.conform(k, t) for k, t in out.items()}


def class_of(hands: pa.Table, per: Sequence[tuple[str, ...]], players: int) -> np.ndarray:
    """Per hand of a run of imported hands, the index in ``per`` (the run's policy classes)
    of the policies that play its seats; ``ValueError`` naming the first hand that has none."""
    index = {tuple(c): i for i, c in enumerate(per)}
    out = np.empty(hands.num_rows, dtype=np.int64)
    for i, t in enumerate(seat_assignments(hands, players)):
        c = index.get(t)
        if c is None:
            hand = hands.column("hand_id")[i].as_py()
            raise ValueError(f"hand {hand}: its seats' policies {t!r} are none of the run's")
        out[i] = c
    return out


def seat_assignments(hands: pa.Table, players: int) -> list[tuple[str, ...]]:
    """Per hand, the policies that play its seats (for
    :func:`~replay.store.summary_schema.policy_classes`)."""
    cols = [hands.column(f"policy_{s}").to_pylist() for s in range(players)]
    return list(zip(*cols, strict=True))


class Hands:
    """The columns the summaries read, as int64 arrays, and the seat rows. ``classes``: the
    run is of imported hands: a hand's ``rotation`` is its policy class (:func:`class_of`),
    not its recorded rotation, and its deal is itself."""

    def __init__(
        self,
        hands: pa.Table,
        per: list[tuple[str, ...]],
        players: int,
        names: list[str],
        classes: bool = False,
    ) -> None:
        self.table = hands
        self.n = hands.num_rows
        self.names = names
        self.hand_id = int_column(hands, "hand_id")[0]
        self.rotation = (
            class_of(hands, per, players) if classes else int_column(hands, "rotation")[0]
        )
        self.dealer = int_column(hands, "dealer")[0]
        self.outcome = int_column(hands, "outcome")[0]
        self.huang_streak = int_column(hands, "huang_streak")[0]
        self.mingtang = int_column(hands, "mingtang")[0]
        self.stock_left = int_column(hands, "stock_left")[0]
        self.winner, self.has_winner = int_column(hands, "winner")
        self.source, self.has_source = int_column(hands, "source")
        self.zimo, self.has_zimo = int_column(hands, "zimo")
        self.values = {c: int_column(hands, c) for c in S.VALUE_COLS}
        # a cluster is a deal of a --duplicate run, else a hand (imported hands keep the
        # deal id of the run they were played in)
        deal = int_column(hands, "hand_id" if classes else "deal_id")[0]
        self.deals, self.deal = np.unique(deal, return_inverse=True)
        self.deal = self.deal.astype(np.int64)
        self.win = (self.outcome != S.HUANG) & self.has_winner
        self._seat_rows(hands, per, players, names, classes)

    def _seat_rows(
        self,
        hands: pa.Table,
        per: list[tuple[str, ...]],
        players: int,
        names: list[str],
        classes: bool,
    ) -> None:
        code = {p: i for i, p in enumerate(names)}
        rot = self.rotation
        if len(per) and self.n and int(rot.max()) >= len(per):
            raise ValueError(f"rotation {int(rot.max())} is beyond the run's {len(per)}")
        rows: dict[str, list[np.ndarray]] = {k: [] for k in ("i", "seat", "policy", "delta")}
        for s in range(S.MAX_SEATS):
            col = hands.column(f"policy_{s}")
            codes = pc.fill_null(pc.index_in(col, value_set=pa.array(names, pa.string())), -1)
            got = np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int64)
            if s < players:
                want = np.array([code[pols[s]] for pols in per], dtype=np.int64)[rot]
                bad = np.flatnonzero(got != want)
                if len(bad):
                    r = int(rot[bad[0]])
                    raise ValueError(f"seat {s} of rotation {r} is not played by {per[r][s]!r}")
            keep = got >= 0
            if players == 4:
                keep &= (self.dealer + 2) % 4 != s
            idx = np.flatnonzero(keep)
            rows["i"].append(idx)
            rows["seat"].append(np.full(len(idx), s, dtype=np.int64))
            rows["policy"].append(got[idx])
            rows["delta"].append(int_column(hands, f"delta_{s}")[0][idx])
        if len(per) > 1 and self.n and not classes:  # a deal's rotations
            counts = np.bincount(self.deal)
            if (counts != len(per)).any():
                raise ValueError("a deal's rotations are not all in the shard")
        i = np.concatenate(rows["i"])
        self.s_hand = i
        self.s_seat = np.concatenate(rows["seat"])
        self.s_policy = np.concatenate(rows["policy"])
        self.s_delta = np.concatenate(rows["delta"])
        self.s_won = (self.has_winner[i] & (self.winner[i] == self.s_seat)).astype(np.int64)
        self.s_slot = S.MAX_SEATS * self.rotation[i] + self.s_seat
        self.s_deal = self.deal[i]


def _table(cols: dict[str, pa.Array]) -> pa.Table:
    return pa.table(cols)


def _hands_kind(h: Hands) -> pa.Table:
    keys = [h.rotation, h.dealer, h.outcome, _key(h.winner, h.has_winner),
            _key(h.source, h.has_source), _key(h.zimo, h.has_zimo), h.huang_streak]  # fmt: skip
    g = Groups(keys)
    huxi, hv = h.values["huxi"]
    score, sv = h.values["score"]
    types = [pa.uint8()] * 5 + [pa.bool_(), pa.uint8()]
    names = ("rotation", "dealer", "outcome", "winner", "source", "zimo", "streak")
    cols = {n: key_array(k, t) for n, k, t in zip(names, g.keys, types)}
    cols["n"] = pa.array(g.count())
    cols["huxi_s"], cols["huxi_ss"] = g.sum(huxi, hv), g.sum(huxi * huxi, hv)
    cols["score_s"], cols["score_ss"] = g.sum(score, sv), g.sum(score * score, sv)
    return _table(cols)


def _stock_kind(h: Hands) -> pa.Table:
    g = Groups([h.rotation, h.outcome, h.stock_left])
    return _table(
        {
            "rotation": key_array(g.keys[0], pa.uint8()),
            "outcome": key_array(g.keys[1], pa.uint8()),
            "stock": key_array(g.keys[2], pa.uint8()),
            "n": pa.array(g.count()),
        }
    )


def _values_kind(h: Hands) -> pa.Table:
    parts = []
    metrics = sorted(S.VALUE_COLS)
    for m, c in enumerate(metrics):
        v, ok = h.values[c]
        idx = np.flatnonzero(h.win & ok)
        parts.append((idx, np.full(len(idx), m, dtype=np.int64), v[idx]))
    idx = np.concatenate([p[0] for p in parts])
    g = Groups([h.rotation[idx], h.winner[idx], np.concatenate([p[1] for p in parts]),
                 np.concatenate([p[2] for p in parts])])  # fmt: skip
    return _table(
        {
            "rotation": key_array(g.keys[0], pa.uint8()),
            "winner": key_array(g.keys[1], pa.uint8()),
            "metric": pa.array([metrics[m] for m in g.keys[2]], pa.string()),
            "v": pa.array(g.keys[3].astype(np.int32)),
            "n": pa.array(g.count()),
        }
    )


def _bits(mingtang: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(bit, row selection) for each 名堂 bit, −1 (平胡) and −2 (every row)."""
    out = [(b, ((mingtang >> b) & 1) == 1) for b in range(S.MINGTANG_BITS)]
    return [*out, (-1, mingtang == 0), (-2, np.ones(len(mingtang), dtype=bool))]


def _mingtang_kind(h: Hands) -> pa.Table:
    w = np.flatnonzero(h.win)
    idx, bit = [], []
    for bit_no, sel in _bits(h.mingtang[w]):
        idx.append(w[sel])
        bit.append(np.full(int(sel.sum()), bit_no, dtype=np.int64))
    i = np.concatenate(idx)
    g = Groups([h.rotation[i], h.winner[i], np.concatenate(bit)])
    huxi, hv = (a[i] for a in h.values["huxi"])
    score, sv = (a[i] for a in h.values["score"])
    deng, dv = (a[i] for a in h.values["deng"])
    return _table(
        {
            "rotation": key_array(g.keys[0], pa.uint8()),
            "winner": key_array(g.keys[1], pa.uint8()),
            "bit": pa.array(g.keys[2].astype(np.int16)),
            "n": pa.array(g.count()),
            "huxi_s": g.sum(huxi, hv),
            "huxi_ss": g.sum(huxi * huxi, hv),
            "score_s": g.sum(score, sv),
            "score_ss": g.sum(score * score, sv),
            "extra_s": g.sum(score - deng, sv & dv),
        }
    )


def _conv_kind(h: Hands, gran: int, names: list[str]) -> pa.Table:
    g = Groups([h.hand_id[h.s_hand] // gran, h.rotation[h.s_hand], h.s_seat, h.s_policy])
    return _table(
        {
            "granule": pa.array(np.full(len(g.starts), gran, dtype=np.uint32)),
            "bin": pa.array(g.keys[0].astype(np.uint32)),
            "rotation": key_array(g.keys[1], pa.uint8()),
            "seat": key_array(g.keys[2], pa.uint8()),
            "policy": pa.array([names[p] for p in g.keys[3]], pa.string()),
            "n": pa.array(g.count()),
            "won": g.sum(h.s_won),
        }
    )


# ---------------------------------------------------------------------------------------------
# Cluster kinds: per deal × slot figures times the masks' 0/1 matrix
# ---------------------------------------------------------------------------------------------


def mask_matrix(masks: Sequence[int], width: int) -> np.ndarray:
    """(masks × width) float 0/1: row j has the bits of masks[j]."""
    bits = np.arange(width)
    return ((np.asarray(masks, dtype=np.int64)[:, None] >> bits[None, :]) & 1).astype(np.float64)


def per_deal(deal: np.ndarray, slot: np.ndarray, n_deals: int, width: int,
              weights: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """(width × deals) sums of ``weights`` (counts without) per slot and deal."""
    flat = slot * n_deals + deal
    w = None if weights is None else weights.astype(np.float64)
    return np.bincount(flat, weights=w, minlength=n_deals * width).reshape(width, n_deals)


def by_mask(counts: np.ndarray, mm: np.ndarray) -> np.ndarray:
    """(masks × deals) int64: each mask's sum over its slots (exact: small integers)."""
    return np.rint(mm @ counts).astype(np.int64)


ClusterRow = tuple[int, str, str, Any, Any, Any, Any, Any, Any, Any, Any]


def _clusters_kind(
    h: Hands, masks: list[int], hmasks: list[int], rotations: int, names: list[str]
) -> tuple[pa.Table, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    nd = len(h.deals)
    width = S.MAX_SEATS * rotations  # slots 4·r + s
    mm = mask_matrix(masks, width)
    rows: list[ClusterRow] = []
    policy_groups: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    # seat-level groups
    dealer_seat = h.s_seat == h.dealer[h.s_hand]
    groups: list[tuple[str, str, np.ndarray, int | None]] = []
    for s in sorted(set(h.s_seat.tolist())):
        groups.append(("g:seat", f"seat {s}", h.s_seat == s, None))
    if len(h.s_seat):
        if dealer_seat.any():
            groups.append(("g:dealer", "dealer", dealer_seat, None))
        if (~dealer_seat).any():
            groups.append(("g:dealer", "non-dealer", ~dealer_seat, None))
        groups.append(("g:all", "all", np.ones(len(h.s_seat), dtype=bool), None))
    for c in sorted(set(h.s_policy.tolist())):
        groups.append(("g:policy", names[c], h.s_policy == c, c))
    for what, key, sel, code in groups:
        d, sl = h.s_deal[sel], h.s_slot[sel]
        n = by_mask(per_deal(d, sl, nd, width), mm)
        won = by_mask(per_deal(d, sl, nd, width, h.s_won[sel]), mm)
        y = by_mask(per_deal(d, sl, nd, width, h.s_delta[sel]), mm)
        if code is not None:
            policy_groups[code] = (n, won, y)
        sums = cluster_sums(n, y)
        wsum = won.sum(axis=1)
        for j, mask in enumerate(masks):
            if sums[0][j]:
                n_, d, y_, yy, ym, mm_ = (int(x[j]) for x in sums)
                rows.append((mask, what, key, n_, int(wsum[j]), d, y_, n_, yy, ym, mm_))

    # the wins
    w = np.flatnonzero(h.win)
    wd, ws = h.deal[w], S.MAX_SEATS * h.rotation[w] + h.winner[w]
    cnt = by_mask(per_deal(wd, ws, nd, width), mm)
    zimo = by_mask(per_deal(wd, ws, nd, width, (h.has_zimo & (h.zimo == 1))[w]), mm)
    present = [j for j in range(len(masks)) if cnt[j].any()]
    csum, cdist, zsum = cnt.sum(axis=1), (cnt > 0).sum(axis=1), zimo.sum(axis=1)
    for j in present:
        rows.append((masks[j], "win", "", int(csum[j]), int(zsum[j]), int(cdist[j]),
                     None, None, None, None, None))  # fmt: skip
    for col in S.VALUE_COLS:
        v, ok = h.values[col]
        vy = by_mask(per_deal(wd, ws, nd, width, np.where(ok, v, 0)[w]), mm)
        vm = by_mask(per_deal(wd, ws, nd, width, ok[w]), mm)
        # a deal's y is null when none of its selected wins has the value (m = 0)
        has = (cnt > 0) & (vm > 0)
        m_s, d_s, mm_s = vm.sum(axis=1), has.sum(axis=1), (vm * vm).sum(axis=1)
        y_s, yy_s, ym_s = vy.sum(axis=1), (vy * vy).sum(axis=1), (vy * vm).sum(axis=1)
        for j in present:
            anyy = bool(d_s[j])
            vy_, vyy, vym = ((int(x[j]) if anyy else None) for x in (y_s, yy_s, ym_s))
            rows.append((masks[j], f"win:{col}", "", int(m_s[j]), None, int(d_s[j]), vy_,
                         int(m_s[j]), vyy, vym, int(mm_s[j])))  # fmt: skip
    src = np.where(h.has_source, h.source, 255)[w]
    for v in sorted(set(src.tolist())):
        sel = src == v
        c = by_mask(per_deal(wd[sel], ws[sel], nd, width), mm)
        rows += _count_rows(masks, "win_source", str(v), c)
    for b, sel in _bits(h.mingtang[w]):
        if sel.any():
            c = by_mask(per_deal(wd[sel], ws[sel], nd, width), mm)
            rows += _count_rows(masks, "win_bit", str(b), c)

    # the hand-level selection, by rotation mask
    hm = mask_matrix(hmasks, rotations)
    rows += _count_rows(
        hmasks, "hand", "", by_mask(per_deal(h.deal, h.rotation, nd, rotations), hm)
    )
    streak = np.minimum(h.huang_streak, 3)
    for v in sorted(set(streak.tolist())):
        sel = streak == v
        c = by_mask(per_deal(h.deal[sel], h.rotation[sel], nd, rotations), hm)
        rows += _count_rows(hmasks, "hand_streak", str(v), c)

    rows.sort(key=lambda r: (r[0], r[1].encode(), r[2].encode()))
    cols = list(zip(*rows)) if rows else [()] * 11
    names_ = ("mask", "what", "key", "n", "won", "d", "y", "m", "yy", "ym", "mm")
    types = [pa.uint16(), pa.string(), pa.string()] + [pa.int64()] * 8
    table = _table({n: pa.array(list(c), t) for n, c, t in zip(names_, cols, types)})
    return table, policy_groups


def cluster_sums(n: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per mask (row): Σ n, clusters with n > 0, Σ y, Σ y², Σ y·n, Σ n²."""
    return (n.sum(axis=1), (n > 0).sum(axis=1), y.sum(axis=1), (y * y).sum(axis=1),
            (y * n).sum(axis=1), (n * n).sum(axis=1))  # fmt: skip


def _count_rows(masks: Sequence[int], what: str, key: str, c: np.ndarray) -> list[ClusterRow]:
    """``n`` rows and ``d`` distinct clusters per mask (the masks with any row)."""
    n, d = c.sum(axis=1), (c > 0).sum(axis=1)
    return [
        (mask, what, key, int(n[j]), None, int(d[j]), None, None, None, None, None)
        for j, mask in enumerate(masks)
        if n[j]
    ]


def _paired_kind(
    h: Hands,
    masks: list[int],
    names: list[str],
    groups: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> pa.Table:
    """Per mask and pair of policies a < b, over the deals where both have a selected seat:
    the sums of the differences of the per-deal win rate and mean score change, added one at
    a time in deal_id order (a cumulative sum along each mask's row; the deals without
    both add 0.0, which changes no sum)."""
    rows: list[tuple[int, str, str, int, float, float, float, float]] = []
    codes = sorted(groups)  # names are sorted, so codes in string order
    with np.errstate(invalid="ignore", divide="ignore"):
        for ia, a in enumerate(codes):
            na, wa, ya = groups[a]
            for b in codes[ia + 1 :]:
                nb, wb, yb = groups[b]
                both = (na > 0) & (nb > 0)
                d = both.sum(axis=1)
                dw = np.where(both, wa / na - wb / nb, 0.0)
                dy = np.where(both, ya / na - yb / nb, 0.0)
                sums = [seq_sums(x) for x in (dw, dw * dw, dy, dy * dy)]
                for j, mask in enumerate(masks):
                    if d[j]:
                        f = [float(x[j]) for x in sums]
                        rows.append((mask, names[a], names[b], int(d[j]), f[0], f[1], f[2], f[3]))
    rows.sort(key=lambda r: (r[0], r[1].encode(), r[2].encode()))
    cols = list(zip(*rows)) if rows else [()] * 8
    names_ = ("mask", "a", "b", "d", "dw", "dww", "dy", "dyy")
    types = [pa.uint16(), pa.string(), pa.string(), pa.int64()] + [pa.float64()] * 4
    return _table({n: pa.array(list(c), t) for n, c, t in zip(names_, cols, types)})


def seq_sums(x: np.ndarray) -> np.ndarray:
    """Σ along each row, one addition at a time (numpy's ``sum`` adds pairwise)."""
    if not x.shape[1]:
        return np.zeros(x.shape[0])
    return np.cumsum(x, axis=1)[:, -1]
