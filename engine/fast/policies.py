"""Compiled policies (mirrors engine.policies): a code per built-in policy and one dispatch.

``choose(code, rp, hp, st, seat, mt)`` returns the action the policy takes at a decision of
``seat`` with more than one legal option (legal codes: ``st[PEND_A + seat·MAXA …]``);
``mt`` is that seat's :mod:`engine.fast.pyrandom` generator (the reference policy's
``random.Random``, consumed exactly as the reference consumes it).

* ``random`` (engine.policies.random_policy): ``legal[rng.randrange(len(legal))]``.
* ``greedy`` (engine.policies.greedy, default parameters): 胡 when offered, the best-scoring
  take or PASS, the least valuable discard; ties broken by ``rng.randrange``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.actions import CHI_BASE, DISCARD_BASE, HU, PASS, PENG, TI_BASE
from engine.fast import features as FE
from engine.fast import state as S
from engine.fast.pyrandom import randbelow
from engine.policies.greedy import GreedyPolicy

RANDOM = 0
GREEDY = 1
POLICY_CODES = {"random": RANDOM, "greedy": GREEDY}

G_HX = float(GreedyPolicy.hx)
G_MARGIN = float(GreedyPolicy.margin)
G_TABLE = float(GreedyPolicy.table)
assert GreedyPolicy.discard_term is True
EPS = 1e-9


@njit(cache=True)
def choose(code, rp, hp, st, seat, mt):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    if code == GREEDY:
        return greedy_act(rp, st, seat, mt)
    return st[base + randbelow(mt, n)]


@njit(cache=True)
def greedy_act(rp, st, seat, mt):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    if n == 1:
        return st[base]
    for i in range(n):
        if st[base + i] == HU:
            return HU
    first = st[base]
    if DISCARD_BASE <= first < TI_BASE:
        return _greedy_discard(rp, st, seat, mt, base, n)
    if first == PASS:
        return _greedy_claim(rp, st, seat, mt, base, n)
    return first


@njit(cache=True)
def _greedy_discard(rp, st, seat, mt, base, n):
    h = np.empty(21, dtype=np.int64)
    f = np.empty(21, dtype=np.int64)
    un = np.empty(21, dtype=np.int64)
    FE.read_view(rp, st, seat, False, h, f, un)
    best = np.empty(n, dtype=np.int64)
    nb = 0
    best_loss = 0.0
    for i in range(n):
        a = st[base + i]
        loss = FE.card_value(rp, a - DISCARD_BASE, h, f, un, G_HX)
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
def _value_cached(rp, vals, j, h, f, un):
    x = vals[j]
    if x < 0.0:
        x = FE.card_value(rp, j, h, f, un, G_HX)
        vals[j] = x
    return x


@njit(cache=True)
def _hand_change(rp, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size):
    """GreedyPolicy._hand_change (take_bonus 0)."""
    h2 = h.copy()
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
            old = _value_cached(rp, vals, j, h, f, un)
            n2 = h2[j]
            if n2:
                nv = FE.card_value(rp, j, h2, f2, un, G_HX)
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
    if n_cards + 1 > tgt and hand_size - n_used > 0:
        m = n_loose if n_loose else 20
        for i in range(m):
            j = loose[i] if n_loose else i
            if not in_touched[j] and 0 < h2[j] < 3:
                x = _value_cached(rp, vals, j, h, f, un)
                if not has_worst or x < worst:
                    worst = x
                    has_worst = True
        if not has_worst:  # every card left is in a 坎 (C13)
            for j in range(20):
                if h2[j]:
                    x = FE.card_value(rp, j, h2, f2, un, G_HX)
                    if not has_worst or x < worst:
                        worst = x
                        has_worst = True
        delta -= worst
    return delta + 0.0


@njit(cache=True)
def _greedy_claim(rp, st, seat, mt, base, n):
    c = st[S.CARD]
    if c < 0:
        return PASS
    h = np.empty(21, dtype=np.int64)
    f = np.empty(21, dtype=np.int64)
    un = np.empty(21, dtype=np.int64)
    hand_size = FE.read_view(rp, st, seat, True, h, f, un)
    vals = np.full(21, -1.0)
    loose = np.empty(20, dtype=np.int64)
    n_loose = 0
    for k in range(20):
        if FE.is_loose(rp, k, f):
            loose[n_loose] = k
            n_loose += 1
    group = 3 * FE.W_FULL * G_TABLE
    best_score = 0.0 + G_MARGIN
    best = np.empty(n, dtype=np.int64)
    best[0] = PASS
    nb = 1
    used = np.empty(9, dtype=np.int64)
    for i in range(n):
        a = st[base + i]
        if a == PENG:
            used[0] = c
            used[1] = c
            n_used = 2
            table_hx = rp[FE.FT_PENG_HX + c]
            table = group + G_HX * table_hx
        elif a >= CHI_BASE:
            v = a - CHI_BASE
            d2 = v % S.RADIX
            d1 = (v // S.RADIX) % S.RADIX
            d0 = v // (S.RADIX * S.RADIX)
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
                    k = S.SHAPES[sid, q]
                    if k == c and not skipped:
                        skipped = True
                        continue
                    used[n_used] = k
                    n_used += 1
            table = group * ng + G_HX * table_hx
        else:
            continue
        score = table + _hand_change(
            rp, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size
        )
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
