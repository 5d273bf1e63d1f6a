"""The ``learned`` policy compiled (mirrors engine.policies.learned): the same features of
every option, float for float (:func:`features`, also what ``paohuzi distill`` records), and
the option of highest score Σ coefficient × feature, ties broken by ``rng.randrange``.

The coefficients are read from the seat's weight array ``w`` at ``FIRST_COEF`` (discards,
then claims), the heuristic parameters that shape the features at their own indices.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast import codes as C
from engine.fast import features as FE
from engine.fast import greedy as GR
from engine.fast import heuristic as HE
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.fast.codes import DISCARD_BASE, PASS, PENG, RED, TI_BASE
from engine.fast.pyrandom import randbelow
from engine.policies import learned as _L

DISCARD = _L.DISCARD
CLAIM = _L.CLAIM
N_DISCARD = len(_L.DISCARD_FEATURES)
N_CLAIM = len(_L.CLAIM_FEATURES)
#: Where the 名堂 features start in a row of each kind.
D_MT = _L.DISCARD_FEATURES.index("d_wu")
C_MT = _L.CLAIM_FEATURES.index("c_wu")
#: Columns of a feature row (the longer of the two kinds).
N_FEATURES = max(N_DISCARD, N_CLAIM)
FIRST_COEF = _L.FIRST_COEF
STOCK = float(_L.STOCK)
EPS = _L.EPS


@njit(cache=True)
def learned_act(rp, w, st, seat, mt):
    """LearnedPolicy's choice (greedy's act) at a decision of ``seat``."""
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    sure = GR.obvious(st, base, n)
    if sure >= 0:
        return sure
    out = np.zeros((n, N_FEATURES), dtype=np.float64)
    kind = features(rp, w, st, seat, out)
    if kind < 0:
        return st[base]
    off = FIRST_COEF if kind == DISCARD else FIRST_COEF + N_DISCARD
    nf = N_DISCARD if kind == DISCARD else N_CLAIM
    best = np.empty(n, dtype=np.int64)
    nb = 0
    best_score = 0.0
    for i in range(n):
        x = 0.0
        for j in range(nf):
            x += w[off + j] * out[i, j]
        if nb == 0 or x > best_score + EPS:
            best[0] = st[base + i]
            nb = 1
            best_score = x
        elif x > best_score - EPS:
            best[nb] = st[base + i]
            nb += 1
    if nb == 1:
        return best[0]
    return best[randbelow(mt, nb)]


@njit(cache=True)
def features(rp, w, st, seat, out):
    """LearnedPolicy.features at a decision of ``seat`` with no 胡 among its options: each
    legal option's row into ``out[i, :]`` (zeros on entry); returns DISCARD, CLAIM, or -1
    for another decision."""
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    first = st[base]
    if DISCARD_BASE <= first < TI_BASE:
        _discard_rows(rp, w, st, seat, base, n, out)
        return DISCARD
    if first == PASS and st[S.CARD] >= 0:
        _claim_rows(rp, w, st, seat, base, n, out)
        return CLAIM
    return -1


@njit(cache=True)
def _discard_rows(rp, w, st, seat, base, n, out):
    h = np.empty(21, dtype=np.int64)
    f = np.empty(21, dtype=np.int64)
    un = np.empty(21, dtype=np.int64)
    hand_size = FE.read_view(rp, st, seat, False, h, f, un)
    ex = np.zeros(16, dtype=np.float64)
    HE.extra(rp, w, st, seat, un, ex)
    ready = np.zeros(20)
    has_ready = HE.discard_ready_raw(rp, w, st, seat, h, f, un, hand_size, ready)
    s = S.stock_left(st) / STOCK
    n_opps = int(ex[12])
    banned = st[S.STINKY + seat] | st[S.DISCARDED + seat]
    meld_hx = S.meld_huxi(rp, st, seat)
    r0 = FE.reach(rp, meld_hx, h, f, un)
    need = rp[FE.FT_MIN_HUXI]
    h2 = np.empty(21, dtype=np.int64)
    f2 = np.empty(21, dtype=np.int64)
    f2[20] = 9
    red, chi = _table_reds(st, seat)
    red += _hand_reds(h)
    singles = _singles(h)
    for i in range(n):
        k = st[base + i] - DISCARD_BASE
        val = FE.card_value(rp, k, h, f, un, w)
        # each opponent's chance to take k, once, for both the danger (HE.danger_raw: the
        # threatened ones, in order; 0 when none is) and the feed (all of them, in order)
        d = 0.0
        feed = 0.0
        for o in range(n_opps):
            chance = HE.take_chance(rp, st, un, ex, o, k)
            feed += chance
            threat_o = ex[4 * o + 1]
            if threat_o:
                d += HE.danger_term(rp, w, threat_o, chance)
        u = float(un[k])
        out[i, 0] = val
        out[i, 1] = u
        out[i, 2] = 1.0 if k >= 10 else 0.0
        out[i, 3] = d
        out[i, 4] = ready[k] if has_ready else 0.0
        out[i, 5] = val * s
        out[i, 6] = u * s
        out[i, 7] = 1.0 if h[k] == 2 else 0.0
        out[i, 8] = 1.0 if FE.is_loose(rp, k, f) else 0.0
        out[i, 9] = 1.0 if un[k] == 0 else 0.0
        out[i, 10] = 1.0 if (banned >> k) & 1 else 0.0
        out[i, 11] = feed
        h2[:] = h
        h2[k] -= 1
        for j in range(20):
            f2[j] = h2[j] if h2[j] < 3 else 0
        r = FE.reach(rp, meld_hx, h2, f2, un)
        out[i, 12] = r0 - r
        x = need - r
        y = need - r0
        out[i, 13] = (x if x > 0.0 else 0.0) - (y if y > 0.0 else 0.0)
        dd = chi == 0 and singles + _single_change(h, k, 1) <= 1
        _mingtang(out, i, D_MT, red - RED[k], dd)


@njit(cache=True)
def _claim_rows(rp, w, st, seat, base, n, out):
    c = st[S.CARD]
    h = np.empty(21, dtype=np.int64)
    f = np.empty(21, dtype=np.int64)
    un = np.empty(21, dtype=np.int64)
    hand_size = FE.read_view(rp, st, seat, True, h, f, un)
    r0 = FE.reach(rp, S.meld_huxi(rp, st, seat), h, f, un)
    s = S.stock_left(st) / STOCK
    vals = np.full(21, -1.0)
    loose = np.empty(20, dtype=np.int64)
    n_loose = 0
    for k in range(20):
        if FE.is_loose(rp, k, f):
            loose[n_loose] = k
            n_loose += 1
    used = np.empty(9, dtype=np.int64)
    h2 = np.empty(21, dtype=np.int64)
    red, chi = _table_reds(st, seat)
    red += _hand_reds(h)
    singles = _singles(h)
    for i in range(n):
        a = st[base + i]
        if a == PASS:
            has_s, sv, has_r, rv = HE.pass_parts(rp, w, st, seat, h, f, un, hand_size, c)
            out[i, 0] = 1.0
            out[i, 1] = sv if has_s else 0.0
            out[i, 2] = rv if has_r else 0.0
            out[i, 9] = s
            _mingtang(out, i, C_MT, red, chi == 0 and singles <= 1)
            continue
        n_used, groups, table_hx = GR.take_cards(rp, a, c, used)
        if n_used == 0:
            continue
        dd = False
        if a == PENG:  # the pair leaves the hand; a 吃 puts one on the table
            dd = chi == 0 and singles + _single_change(h, c, 2) <= 1
        delta, has_owed, owed = GR.hand_parts(
            rp, w, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size, h2
        )
        has_p, p, has_r, r = HE.take_parts(
            rp, w, st, seat, h2, un, hand_size, hand_size - n_used, table_hx, r0
        )
        hx = float(table_hx)
        out[i, 3] = float(groups)
        out[i, 4] = hx
        out[i, 5] = delta
        out[i, 6] = owed if has_owed else 0.0
        out[i, 7] = p if has_p else 0.0
        out[i, 8] = r if has_r else 0.0
        out[i, 10] = hx * s
        out[i, 11] = 1.0 if a == PENG else 0.0
        out[i, 12] = delta * s
        _mingtang(out, i, C_MT, red + RED[c], dd)


@njit(cache=True)
def _table_reds(st, seat):
    """(the red cards of the seat's table melds, 1 if one of them is a 吃)."""
    red = 0
    chi = 0
    for m in range(st[S.MELD_N + seat]):
        kind = st[S.MELD_KIND + seat * S.MAXM + m]
        mid = st[S.MELD_ID + seat * S.MAXM + m]
        if kind == C.GK_CHI:
            chi = 1
        red += C.MELD_RED[kind, mid]
    return red, chi


@njit(cache=True)
def _hand_reds(h):
    total = 0
    for k in range(20):
        total += RED[k] * h[k]
    return total


@njit(cache=True)
def _singles(h):
    n = 0
    for k in range(20):
        if h[k] == 1:
            n += 1
    return n


@njit(cache=True)
def _single_change(h, k, n):
    return (1 if h[k] - n == 1 else 0) - (1 if h[k] == 1 else 0)


@njit(cache=True)
def _mingtang(out, i, at, red, duidui):
    """The 名堂 features (engine.policies.learned._mingtang) into ``out[i, at:at + 7]``."""
    out[i, at] = 1.0 if red == 0 else 0.0
    out[i, at + 1] = 1.0 if red == 1 else 0.0
    out[i, at + 2] = 1.0 if red == 2 else 0.0
    out[i, at + 3] = 1.0 if 8 <= red <= 9 else 0.0
    out[i, at + 4] = 1.0 if 10 <= red <= 12 else 0.0
    out[i, at + 5] = 1.0 if red >= 13 else 0.0
    out[i, at + 6] = 1.0 if duidui else 0.0


guard("learned", globals())
