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

import math

import numpy as np
from numba import njit

from engine.fast import codes as C
from engine.fast import features as FE
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.fast.codes import CHI_BASE, DISCARD_BASE, HU, PASS, PENG, TI_BASE
from engine.fast.pyrandom import randbelow
from engine.policies.greedy import GreedyPolicy
from engine.policies.heuristic import HeuristicPolicy as _H

RANDOM = 0
GREEDY = 1
HEURISTIC = 2
POLICY_CODES = {"random": RANDOM, "greedy": GREEDY, "heuristic": HEURISTIC}

G_HX = float(GreedyPolicy.hx)
G_MARGIN = float(GreedyPolicy.margin)
G_TABLE = float(GreedyPolicy.table)
assert GreedyPolicy.discard_term is True
EPS = 1e-9
H_BIG_EXTRA = float(_H.big_extra)
H_SEEN_W = float(_H.seen_w)
H_DANGER_W = float(_H.danger_w)
H_HU_RISK = float(_H.hu_risk)
H_STINKY_W = float(_H.stinky_w)
H_PATH_W = float(_H.path_w)
H_READY_MAX = int(_H.ready_max_hand)
H_READY_W = float(_H.ready_w)
assert _H.ready_takes is True and _H.margin == GreedyPolicy.margin and _H.hx == GreedyPolicy.hx


@njit(cache=True)
def choose(code, rp, hp, st, seat, mt):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    if code == GREEDY:
        return greedy_act(rp, st, seat, mt, False)
    if code == HEURISTIC:
        return greedy_act(rp, st, seat, mt, True)
    return st[base + randbelow(mt, n)]


@njit(cache=True)
def greedy_act(rp, st, seat, mt, heur):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    if n == 1:
        return st[base]
    for i in range(n):
        if st[base + i] == HU:
            return HU
    first = st[base]
    if DISCARD_BASE <= first < TI_BASE:
        return _greedy_discard(rp, st, seat, mt, base, n, heur)
    if first == PASS:
        return _greedy_claim(rp, st, seat, mt, base, n, heur)
    return first


@njit(cache=True)
def _greedy_discard(rp, st, seat, mt, base, n, heur):
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
        threat = _extra(rp, st, seat, un, ex)
        has_bonus = _discard_bonus(rp, st, seat, h, f, un, hand_size, bonus)
    for i in range(n):
        a = st[base + i]
        k = a - DISCARD_BASE
        loss = FE.card_value(rp, k, h, f, un, G_HX)
        if heur:
            loss = loss + H_SEEN_W * un[k]
            if k >= 10:
                loss += H_BIG_EXTRA
            if threat:
                d = danger[k]
                if d < 0.0:
                    d = _danger(rp, st, un, ex, k)
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
def _value_cached(rp, vals, j, h, f, un):
    x = vals[j]
    if x < 0.0:
        x = FE.card_value(rp, j, h, f, un, G_HX)
        vals[j] = x
    return x


@njit(cache=True)
def _hand_change(
    rp, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size, heur, table_hx, r0
):
    """GreedyPolicy._hand_change (+ HeuristicPolicy.take_bonus with ``heur``; ``r0`` its
    e.reach)."""
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
    if heur:
        return delta + _take_bonus(
            rp, st, seat, h2, un, hand_size, hand_size - n_used, table_hx, r0
        )
    return delta + 0.0


@njit(cache=True)
def _greedy_claim(rp, st, seat, mt, base, n, heur):
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
        pass_value = _pass_value(rp, st, seat, h, f, un, hand_size, c)
    vals = np.full(21, -1.0)
    loose = np.empty(20, dtype=np.int64)
    n_loose = 0
    for k in range(20):
        if FE.is_loose(rp, k, f):
            loose[n_loose] = k
            n_loose += 1
    group = 3 * FE.W_FULL * G_TABLE
    best_score = pass_value + G_MARGIN
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
            table = group * ng + G_HX * table_hx
        else:
            continue
        score = table + _hand_change(
            rp, st, seat, h, f, un, vals, loose, n_loose, used, n_used, hand_size, heur,
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


# ---------------------------------------------------------------------------------------------
# heuristic (engine.policies.heuristic)
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _extra(rp, st, seat, un, ex):
    """heuristic._Extra: per opponent i (at most 3) ex[4i : 4i + 4] = (p_in, threat, is_xia,
    seat); ex[12] the number of opponents. Returns the summed threat."""
    need = _min_huxi(rp)
    hidden = 0
    for k in range(21):
        hidden += un[k]
    if hidden < 1:
        hidden = 1
    xia = st[S.XIA + seat]
    any_threat = 0.0
    no = 0
    for i in range(3):
        o = st[S.ACTIVE + i]
        if o == seat:
            continue
        vis = _visible_meld_huxi(rp, st, o)
        hand = st[S.HAND_SIZE + o]
        a = vis / need
        b = 1.0 - hand / 21.0
        threat = (a if a < 1.0 else 1.0) * (b if b > 0.0 else 0.0)
        threat *= threat
        if threat < 0.02:
            threat = 0.0
        any_threat += threat
        p = hand / hidden
        ex[4 * no] = p if p < 0.9 else 0.9
        ex[4 * no + 1] = threat
        ex[4 * no + 2] = 1.0 if o == xia else 0.0
        ex[4 * no + 3] = o
        no += 1
    ex[12] = no
    return any_threat


@njit(cache=True)
def _min_huxi(rp):
    return rp[FE.FT_MIN_HUXI]


@njit(cache=True)
def _visible_meld_huxi(rp, st, o):
    """View.opps 胡息 of another seat: a face-down 偎 counts as hidden_wei."""
    hx = 0
    for m in range(st[S.MELD_N + o]):
        kind = st[S.MELD_KIND + o * S.MAXM + m]
        mid = st[S.MELD_ID + o * S.MAXM + m]
        if kind == C.GK_WEI:
            hx += rp[FE.FT_HIDDEN_WEI]
        elif kind == C.GK_CHI:
            hx += rp[FE.FT_SHAPE_HX + mid]
        else:
            hx += rp[S.RP_MHX + kind * 40 + mid]
    return hx


@njit(cache=True)
def _holds(unseen, need, p):
    if unseen < need:
        return 0.0
    if need == 0:
        return 1.0
    q = 1.0 - p
    if need == 1:
        return 1.0 - math.pow(q, float(unseen))
    return 1.0 - math.pow(q, float(unseen)) - unseen * p * math.pow(q, float(unseen - 1))


@njit(cache=True)
def _danger(rp, st, un, ex, k):
    n = un[k]
    bit = 1 << k
    total = 0.0
    hu_on_discards = rp[S.RP_HU_ON_DISCARDS]
    for i in range(int(ex[12])):
        p = ex[4 * i]
        threat = ex[4 * i + 1]
        if not threat:
            continue
        prob = 0.0
        banned = st[S.DISCARDED + int(ex[4 * i + 3])]
        if not banned & bit:
            prob = _holds(n, 2, p)
            if ex[4 * i + 2] != 0.0:
                chi = 0.0
                for j in range(rp[FE.FT_COMP_N + k]):
                    b0 = FE.FT_COMP + (k * FE.MAXC + j) * 6
                    nk = rp[b0]
                    a = rp[b0 + 1]
                    na = rp[b0 + 2]
                    b = rp[b0 + 3]
                    nb = rp[b0 + 4]
                    chi += (
                        _holds(un[a], na, p)
                        * (_holds(un[b], nb, p) if b < 20 else 1.0)
                        * (_holds(n, nk - 1, p) if nk > 1 else 1.0)
                    )
                prob += chi if chi < 1.0 else 1.0
        if hu_on_discards:
            prob += H_HU_RISK * threat
        total += threat * prob
    return H_DANGER_W * total


@njit(cache=True)
def _ready_row(rp, best, row, base, un, need):
    """_ready_value of the waits in ``best[row]`` (ascending cards, live ones only)."""
    total = 0.0
    for c in range(20):
        hx = best[row, c]
        if hx >= 0 and un[c]:
            total += un[c] * (1.0 + 0.1 * (base + hx - need))
    return H_READY_W * total


@njit(cache=True)
def _row_has_live(best, row, un):
    for c in range(20):  # noqa: SIM110 - numba has no any() over generators
        if best[row, c] >= 0 and un[c]:
            return True
    return False


@njit(cache=True)
def _discard_bonus(rp, st, seat, h, f, un, hand_size, bonus):
    """HeuristicPolicy.discard_bonus into ``bonus`` (per kind); False when None."""
    q = st[S.QUADS + seat]
    if hand_size > H_READY_MAX or not FE.may_be_ready(rp, f, q, 1):
        return False
    need = _min_huxi(rp)
    base = FE.waits_base(rp, h, S.meld_huxi(rp, st, seat))
    best = np.empty((21, 20), dtype=np.int64)
    if not FE.raw_waits(rp, h, q >= 1, need - base, True, best):
        return False
    any_live = False
    for d in range(20):
        if _row_has_live(best, d, un):
            any_live = True
            bonus[d] = _ready_row(rp, best, d, base, un, need)
    return any_live


@njit(cache=True)
def _pass_value(rp, st, seat, h, f, un, hand_size, c):
    value = 0.0
    banned = st[S.STINKY + seat] | st[S.DISCARDED + seat]
    if not (banned >> c) & 1:
        total = 0.0
        for i in range(rp[FE.FT_COMPL_N + c]):
            b0 = FE.FT_COMPL + (c * FE.MAXQ + i) * 3
            if f[rp[b0]] and f[rp[b0 + 1]]:
                total += FE.W_PART + rp[b0 + 2] / 3.0
        value -= H_STINKY_W * total
    q = st[S.QUADS + seat]
    if hand_size <= H_READY_MAX and FE.may_be_ready(rp, f, q, 0):
        need = _min_huxi(rp)
        base = FE.waits_base(rp, h, S.meld_huxi(rp, st, seat))
        best = np.empty((21, 20), dtype=np.int64)
        FE.raw_waits(rp, h, q >= 1, need - base, False, best)
        value += _ready_row(rp, best, 20, base, un, need)
    return value


@njit(cache=True)
def _take_bonus(rp, st, seat, h2, un, hand_size, size, table_hx, r0):
    need = _min_huxi(rp)
    bonus = 0.0
    f2 = np.empty(21, dtype=np.int64)
    for k in range(20):
        f2[k] = h2[k] if h2[k] < 3 else 0
    f2[20] = 9
    meld_hx = S.meld_huxi(rp, st, seat)
    if size <= H_READY_MAX and r0 < need + 3:
        r = FE.reach(rp, meld_hx + table_hx, h2, f2, un)
        x = need - r
        y = need - r0
        bonus -= H_PATH_W * ((x if x > 0.0 else 0.0) - (y if y > 0.0 else 0.0))
    if size <= H_READY_MAX + 1:
        q = st[S.QUADS + seat]
        hx = meld_hx + table_hx
        tq = 20 + (q - 1 if q > 1 else 0)
        n_cards = hand_size + st[S.TABLE_CARDS + seat]  # v.discard_follows(size)
        if n_cards + 1 > tq and size > 0:
            if FE.may_be_ready(rp, f2, q, 1):
                base = FE.waits_base(rp, h2, hx)
                best = np.empty((21, 20), dtype=np.int64)
                if FE.raw_waits(rp, h2, q >= 1, need - base, True, best):
                    top = 0.0
                    found = False
                    for d in range(20):
                        if _row_has_live(best, d, un):
                            v = _ready_row(rp, best, d, base, un, need)
                            if not found or v > top:
                                top = v
                                found = True
                    if found:
                        bonus += top
        elif FE.may_be_ready(rp, f2, q, 0):
            base = FE.waits_base(rp, h2, hx)
            best = np.empty((21, 20), dtype=np.int64)
            FE.raw_waits(rp, h2, q >= 1, need - base, False, best)
            bonus += _ready_row(rp, best, 20, base, un, need)
    return bonus


guard("policies", globals())
