"""Compiled policies (mirrors engine.policies): a code per built-in policy and one dispatch.

``choose(code, rp, hp, w, st, seat, mt)`` returns the action the policy takes at a decision
of ``seat`` with more than one legal option (legal codes: ``st[PEND_A + seat·MAXA …]``);
``w`` is the seat's weight array (float64, engine.policies.weights.PARAMS order,
:func:`engine.fast.features.weights_array`; ``random`` ignores it); ``mt`` is that seat's
:mod:`engine.fast.pyrandom` generator (the reference policy's ``random.Random``, consumed
exactly as the reference consumes it).

* ``random`` (engine.policies.random_policy): ``legal[rng.randrange(len(legal))]``.
* ``greedy`` (engine.policies.greedy): 胡 when offered, the best-scoring take or PASS, the
  least valuable discard; ties broken by ``rng.randrange``.
* ``heuristic`` (engine.policies.heuristic): greedy plus its terms.

Every weight and threshold is read from ``w`` by an index constant derived from the one
table (``I_*`` here and in engine.fast.features), so any table plays compiled, the same
doubles in the same order as the reference.
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
from engine.policies import weights as _W

RANDOM = 0
GREEDY = 1
HEURISTIC = 2
POLICY_CODES = {"random": RANDOM, "greedy": GREEDY, "heuristic": HEURISTIC}

EPS = 1e-9
I_HX = FE.I_HX
I_MARGIN = _W.INDEX["margin"]
I_TABLE = _W.INDEX["table"]
I_DISCARD_TERM = _W.INDEX["discard_term"]
I_BIG_EXTRA = _W.INDEX["big_extra"]
I_SEEN_W = _W.INDEX["seen_w"]
I_DANGER_W = _W.INDEX["danger_w"]
I_HU_RISK = _W.INDEX["hu_risk"]
I_THREAT_FLOOR = _W.INDEX["threat_floor"]
I_THREAT_HAND = _W.INDEX["threat_hand"]
I_P_IN_MAX = _W.INDEX["p_in_max"]
I_STINKY_W = _W.INDEX["stinky_w"]
I_PATH_W = _W.INDEX["path_w"]
I_PATH_SLACK = _W.INDEX["path_slack"]
I_READY_MAX = _W.INDEX["ready_max_hand"]
I_READY_W = _W.INDEX["ready_w"]
I_READY_HX = _W.INDEX["ready_hx"]
I_READY_TAKES = _W.INDEX["ready_takes"]


@njit(cache=True)
def choose(code, rp, hp, w, st, seat, mt):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    if code == GREEDY:
        return greedy_act(rp, w, st, seat, mt, False)
    if code == HEURISTIC:
        return greedy_act(rp, w, st, seat, mt, True)
    return st[base + randbelow(mt, n)]


@njit(cache=True)
def greedy_act(rp, w, st, seat, mt, heur):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    if n == 1:
        return st[base]
    for i in range(n):
        if st[base + i] == HU:
            return HU
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
        threat = _extra(rp, w, st, seat, un, ex)
        has_bonus = _discard_bonus(rp, w, st, seat, h, f, un, hand_size, bonus)
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
                    d = _danger(rp, w, st, un, ex, k)
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
        delta -= worst
    if heur:
        return delta + _take_bonus(
            rp, w, st, seat, h2, un, hand_size, hand_size - n_used, table_hx, r0
        )
    return delta + 0.0


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
        pass_value = _pass_value(rp, w, st, seat, h, f, un, hand_size, c)
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
        if a == PENG:
            used[0] = c
            used[1] = c
            n_used = 2
            table_hx = rp[FE.FT_PENG_HX + c]
            table = group + w_hx * table_hx
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
            table = group * ng + w_hx * table_hx
        else:
            continue
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


# ---------------------------------------------------------------------------------------------
# heuristic (engine.policies.heuristic)
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _extra(rp, w, st, seat, un, ex):
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
        b = 1.0 - hand / w[I_THREAT_HAND]
        threat = (a if a < 1.0 else 1.0) * (b if b > 0.0 else 0.0)
        threat *= threat
        if threat < w[I_THREAT_FLOOR]:
            threat = 0.0
        any_threat += threat
        p = hand / hidden
        p_max = w[I_P_IN_MAX]
        ex[4 * no] = p if p < p_max else p_max
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
def _danger(rp, w, st, un, ex, k):
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
            prob += w[I_HU_RISK] * threat
        total += threat * prob
    return w[I_DANGER_W] * total


@njit(cache=True)
def _ready_row(rp, w, best, row, base, un, need):
    """_ready_value of the waits in ``best[row]`` (ascending cards, live ones only)."""
    total = 0.0
    ready_hx = w[I_READY_HX]
    for c in range(20):
        hx = best[row, c]
        if hx >= 0 and un[c]:
            total += un[c] * (1.0 + ready_hx * (base + hx - need))
    return w[I_READY_W] * total


@njit(cache=True)
def _row_has_live(best, row, un):
    for c in range(20):  # noqa: SIM110 - numba has no any() over generators
        if best[row, c] >= 0 and un[c]:
            return True
    return False


@njit(cache=True)
def _discard_bonus(rp, w, st, seat, h, f, un, hand_size, bonus):
    """HeuristicPolicy.discard_bonus into ``bonus`` (per kind); False when None."""
    q = st[S.QUADS + seat]
    if hand_size > w[I_READY_MAX] or not FE.may_be_ready(rp, f, q, 1):
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
            bonus[d] = _ready_row(rp, w, best, d, base, un, need)
    return any_live


@njit(cache=True)
def _pass_value(rp, w, st, seat, h, f, un, hand_size, c):
    value = 0.0
    banned = st[S.STINKY + seat] | st[S.DISCARDED + seat]
    if not (banned >> c) & 1:
        total = 0.0
        for i in range(rp[FE.FT_COMPL_N + c]):
            b0 = FE.FT_COMPL + (c * FE.MAXQ + i) * 3
            if f[rp[b0]] and f[rp[b0 + 1]]:
                total += w[FE.I_PART] + rp[b0 + 2] / 3.0
        value -= w[I_STINKY_W] * total
    q = st[S.QUADS + seat]
    if w[I_READY_TAKES] != 0.0 and hand_size <= w[I_READY_MAX] and FE.may_be_ready(rp, f, q, 0):
        need = _min_huxi(rp)
        base = FE.waits_base(rp, h, S.meld_huxi(rp, st, seat))
        best = np.empty((21, 20), dtype=np.int64)
        FE.raw_waits(rp, h, q >= 1, need - base, False, best)
        value += _ready_row(rp, w, best, 20, base, un, need)
    return value


@njit(cache=True)
def _take_bonus(rp, w, st, seat, h2, un, hand_size, size, table_hx, r0):
    need = _min_huxi(rp)
    bonus = 0.0
    f2 = np.empty(21, dtype=np.int64)
    for k in range(20):
        f2[k] = h2[k] if h2[k] < 3 else 0
    f2[20] = 9
    meld_hx = S.meld_huxi(rp, st, seat)
    ready_max = w[I_READY_MAX]
    if size <= ready_max and r0 < need + w[I_PATH_SLACK]:
        r = FE.reach(rp, meld_hx + table_hx, h2, f2, un)
        x = need - r
        y = need - r0
        bonus -= w[I_PATH_W] * ((x if x > 0.0 else 0.0) - (y if y > 0.0 else 0.0))
    if w[I_READY_TAKES] != 0.0 and size <= ready_max + 1:
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
                            v = _ready_row(rp, w, best, d, base, un, need)
                            if not found or v > top:
                                top = v
                                found = True
                    if found:
                        bonus += top
        elif FE.may_be_ready(rp, f2, q, 0):
            base = FE.waits_base(rp, h2, hx)
            best = np.empty((21, 20), dtype=np.int64)
            FE.raw_waits(rp, h2, q >= 1, need - base, False, best)
            bonus += _ready_row(rp, w, best, 20, base, un, need)
    return bonus


guard("policies", globals())
