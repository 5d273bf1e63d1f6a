"""The ``greedy`` policy compiled (mirrors engine.policies.greedy), and ``heuristic``'s
decisions, which are greedy's with its terms (:mod:`engine.fast.heuristic`) added when
``heur`` is set: the least valuable discard, the best-scoring take or PASS; ties broken by
``rng.randrange`` as the reference breaks them. Every weight is read from ``w`` by an index
constant derived from the one table, so any table plays the same doubles as the reference.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast import codes as C
from engine.fast import features as FE
from engine.fast import heuristic as HE
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.fast.codes import CHI_BASE, DISCARD_BASE, HU, PASS, PENG, TI_BASE
from engine.fast.pyrandom import randbelow
from engine.policies import weights as _W

EPS = 1e-9
I_HX = FE.I_HX
I_MARGIN = _W.INDEX["margin"]
I_TABLE = _W.INDEX["table"]
I_DISCARD_TERM = _W.INDEX["discard_term"]
I_BIG_EXTRA = _W.INDEX["big_extra"]
I_SEEN_W = _W.INDEX["seen_w"]


@njit(cache=True)
def obvious(st, base, n):
    """GreedyPolicy.act's first steps: the only option, or 胡 when offered; -1 otherwise."""
    if n == 1:
        return st[base]
    for i in range(n):
        if st[base + i] == HU:
            return HU
    return -1


@njit(cache=True)
def greedy_act(rp, w, st, seat, mt, heur):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    sure = obvious(st, base, n)
    if sure >= 0:
        return sure
    first = st[base]
    if DISCARD_BASE <= first < TI_BASE:
        return _greedy_discard(rp, w, st, seat, mt, base, n, heur)
    if first == PASS:
        return _greedy_claim(rp, w, st, seat, mt, base, n, heur)
    return first


@njit(cache=True)
def _greedy_discard(rp, w, st, seat, mt, base, n, heur):
    h = np.empty(21, dtype=np.int64)
    f = np.empty(21, dtype=np.int64)
    un = np.empty(21, dtype=np.int64)
    hand_size = FE.read_view(rp, st, seat, False, h, f, un)
    best = np.empty(n, dtype=np.int64)
    nb = 0
    best_loss = 0.0
    ex = np.zeros(16, dtype=np.float64)
    danger = np.full(20, -1.0)
    bonus = np.zeros(20)
    threat = 0.0
    has_bonus = False
    if heur:
        threat = HE.extra(rp, w, st, seat, un, ex)
        has_bonus = HE.discard_bonus(rp, w, st, seat, h, f, un, hand_size, bonus)
    for i in range(n):
        a = st[base + i]
        k = a - DISCARD_BASE
        loss = FE.card_value(rp, k, h, f, un, w)
        if heur:
            loss = loss + w[I_SEEN_W] * un[k]
            if k >= 10:
                loss += w[I_BIG_EXTRA]
            if threat:
                d = danger[k]
                if d < 0.0:
                    d = HE.danger(rp, w, st, un, ex, k)
                    danger[k] = d
                loss += d
            if has_bonus:
                loss -= bonus[k]
        if nb == 0 or loss < best_loss - EPS:
            best[0] = a
            nb = 1
            best_loss = loss
        elif loss < best_loss + EPS:
            best[nb] = a
            nb += 1
    if nb == 1:
        return best[0]
    return best[randbelow(mt, nb)]


@njit(cache=True)
def _value_cached(rp, w, vals, j, h, f, un):
    x = vals[j]
    if x < 0.0:
        x = FE.card_value(rp, j, h, f, un, w)
        vals[j] = x
    return x


@njit(cache=True)
def _hand_change(
    rp, w, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size, heur, table_hx, r0
):
    """GreedyPolicy._hand_change (+ HeuristicPolicy.take_bonus with ``heur``; ``r0`` its
    e.reach)."""
    h2 = np.empty(21, dtype=np.int64)
    delta, has_owed, owed = hand_parts(
        rp, w, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size, h2
    )
    if has_owed:
        delta -= owed
    if heur:
        return delta + HE.take_bonus(
            rp, w, st, seat, h2, un, hand_size, hand_size - n_used, table_hx, r0
        )
    return delta + 0.0


@njit(cache=True)
def hand_parts(rp, w, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size, h2):
    """GreedyPolicy.hand_parts: (the change of the hand's card values when ``used`` leaves
    it, whether a discard is owed, its value); the hand after into ``h2``."""
    h2[:] = h
    f2 = f.copy()
    for i in range(n_used):
        h2[used[i]] -= 1
        f2[used[i]] -= 1
    table = np.full(128, -1, dtype=np.int64)
    sst = np.zeros(2, dtype=np.int64)
    sst[0] = 7
    in_touched = np.zeros(21, dtype=np.bool_)
    for i in range(n_used):
        k = used[i]
        for q in range(rp[FE.FT_NBR_N + k]):
            j = rp[FE.FT_NBR + k * FE.MAXN + q]
            FE.pyset_add(table, sst, j)
            in_touched[j] = True
    delta = 0.0
    worst = 0.0
    has_worst = False
    for slot in range(sst[0] + 1):
        j = table[slot]
        if j < 0:
            continue
        nn = h[j]
        if nn:
            old = _value_cached(rp, w, vals, j, h, f, un)
            n2 = h2[j]
            if n2:
                nv = FE.card_value(rp, j, h2, f2, un, w)
                delta += n2 * nv - nn * old
                if n2 < 3 and (not has_worst or nv < worst):
                    worst = nv
                    has_worst = True
            else:
                delta -= nn * old
    # v.discard_follows(hand_size - len(used))
    q = st[S.QUADS + seat]
    tgt = 20 + (q - 1 if q > 1 else 0)
    n_cards = hand_size + st[S.TABLE_CARDS + seat]
    if w[I_DISCARD_TERM] != 0.0 and n_cards + 1 > tgt and hand_size - n_used > 0:
        m = n_loose if n_loose else 20
        for i in range(m):
            j = loose[i] if n_loose else i
            if not in_touched[j] and 0 < h2[j] < 3:
                x = _value_cached(rp, w, vals, j, h, f, un)
                if not has_worst or x < worst:
                    worst = x
                    has_worst = True
        if not has_worst:  # every card left is in a 坎 (C13)
            for j in range(20):
                if h2[j]:
                    x = FE.card_value(rp, j, h2, f2, un, w)
                    if not has_worst or x < worst:
                        worst = x
                        has_worst = True
        return delta, True, worst
    return delta, False, 0.0


@njit(cache=True)
def take_cards(rp, a, c, used):
    """greedy.take_cards: the hand's cards a 碰 or 吃 ``a`` of card ``c`` uses, into
    ``used``; (how many, the groups, their 胡息), (0, 0, 0) for another action."""
    if a == PENG:
        used[0] = c
        used[1] = c
        return 2, 1, rp[FE.FT_PENG_HX + c]
    if a < CHI_BASE:
        return 0, 0, 0
    v = a - CHI_BASE
    d2 = v % C.RADIX
    d1 = (v // C.RADIX) % C.RADIX
    d0 = v // (C.RADIX * C.RADIX)
    n_used = 0
    skipped = False
    table_hx = 0
    ng = 0
    for d in (d0, d1, d2):
        if d == 0:
            continue
        sid = d - 1
        ng += 1
        table_hx += rp[FE.FT_SHAPE_HX + sid]
        for q in range(3):
            k = C.SHAPES[sid, q]
            if k == c and not skipped:
                skipped = True
                continue
            used[n_used] = k
            n_used += 1
    return n_used, ng, table_hx


@njit(cache=True)
def _greedy_claim(rp, w, st, seat, mt, base, n, heur):
    c = st[S.CARD]
    if c < 0:
        return PASS
    h = np.empty(21, dtype=np.int64)
    f = np.empty(21, dtype=np.int64)
    un = np.empty(21, dtype=np.int64)
    hand_size = FE.read_view(rp, st, seat, True, h, f, un)
    r0 = 0.0
    pass_value = 0.0
    if heur:
        r0 = FE.reach(rp, S.meld_huxi(rp, st, seat), h, f, un)
        pass_value = HE.pass_value(rp, w, st, seat, h, f, un, hand_size, c)
    vals = np.full(21, -1.0)
    loose = np.empty(20, dtype=np.int64)
    n_loose = 0
    for k in range(20):
        if FE.is_loose(rp, k, f):
            loose[n_loose] = k
            n_loose += 1
    w_hx = w[I_HX]
    group = 3 * w[FE.I_FULL] * w[I_TABLE]
    best_score = pass_value + w[I_MARGIN]
    best = np.empty(n, dtype=np.int64)
    best[0] = PASS
    nb = 1
    used = np.empty(9, dtype=np.int64)
    for i in range(n):
        a = st[base + i]
        n_used, ng, table_hx = take_cards(rp, a, c, used)
        if n_used == 0:
            continue
        table = group * ng + w_hx * table_hx
        score = table + _hand_change(
            rp, w, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size, heur,
            table_hx, r0,
        )  # fmt: skip
        if score > best_score + EPS:
            best_score = score
            best[0] = a
            nb = 1
        elif score > best_score - EPS:
            best[nb] = a
            nb += 1
    if nb == 1:
        return best[0]
    return best[randbelow(mt, nb)]


guard("greedy", globals())
