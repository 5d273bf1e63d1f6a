"""The ``heuristic`` policy's terms, compiled (mirrors engine.policies.heuristic): the
opponents' threat (:func:`extra`), a discard's danger, the waits (听牌) a discard leaves, a
PASS keeps and a take leaves, and the 胡息 a take puts out of reach. Each term comes as its raw
value (``*_raw``, ``*_parts``: what ``learned`` reads as a feature) and as the heuristic's
weighted one, the weight times the raw value, as the reference computes it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.fast import codes as C
from engine.fast import features as FE
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.policies import weights as _W

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
def extra(rp, w, st, seat, un, ex):
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
def danger(rp, w, st, un, ex, k):
    """HeuristicPolicy._danger: ``danger_w`` × :func:`danger_raw`."""
    return w[I_DANGER_W] * danger_raw(rp, w, st, un, ex, k)


@njit(cache=True)
def danger_raw(rp, w, st, un, ex, k):
    """HeuristicPolicy.danger_raw: the opponents' threat-weighted chance to take face ``k``."""
    total = 0.0
    for i in range(int(ex[12])):
        threat = ex[4 * i + 1]
        if not threat:
            continue
        total += danger_term(rp, w, threat, take_chance(rp, st, un, ex, i, k))
    return total


@njit(cache=True, inline="always")
def danger_term(rp, w, threat, chance):
    """One opponent's part of :func:`danger_raw`: his ``threat`` × his ``chance`` to take the
    face (:func:`take_chance`), plus ``hu_risk`` × threat where discards may be won."""
    if rp[S.RP_HU_ON_DISCARDS]:
        chance += w[I_HU_RISK] * threat
    return threat * chance


@njit(cache=True)
def take_chance(rp, st, un, ex, i, k):
    """HeuristicPolicy.take_chance of opponent ``i`` of ``ex`` (its p_in, 下家 flag, seat)."""
    banned = st[S.DISCARDED + int(ex[4 * i + 3])]
    if banned & (1 << k):
        return 0.0
    p = ex[4 * i]
    n = un[k]
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
    return prob


@njit(cache=True)
def _ready_raw(rp, w, best, row, base, un, need):
    """_ready_raw of the waits in ``best[row]`` (ascending cards, live ones only)."""
    total = 0.0
    ready_hx = w[I_READY_HX]
    for c in range(20):
        hx = best[row, c]
        if hx >= 0 and un[c]:
            total += un[c] * (1.0 + ready_hx * (base + hx - need))
    return total


@njit(cache=True)
def _row_has_live(best, row, un):
    for c in range(20):  # noqa: SIM110 - numba has no any() over generators
        if best[row, c] >= 0 and un[c]:
            return True
    return False


@njit(cache=True)
def discard_bonus(rp, w, st, seat, h, f, un, hand_size, bonus):
    """HeuristicPolicy.discard_bonus into ``bonus`` (per kind); False when None."""
    if not discard_ready_raw(rp, w, st, seat, h, f, un, hand_size, bonus):
        return False
    for d in range(20):
        bonus[d] = w[I_READY_W] * bonus[d]
    return True


@njit(cache=True)
def discard_ready_raw(rp, w, st, seat, h, f, un, hand_size, bonus):
    """HeuristicPolicy.discard_ready_raw into ``bonus`` (per kind, 0 where a discard leaves
    no live wait; zero on entry); False when None."""
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
            bonus[d] = _ready_raw(rp, w, best, d, base, un, need)
    return any_live


@njit(cache=True)
def pass_value(rp, w, st, seat, h, f, un, hand_size, c):
    has_s, s, has_r, r = pass_parts(rp, w, st, seat, h, f, un, hand_size, c)
    value = 0.0
    if has_s:
        value -= w[I_STINKY_W] * s
    if has_r:
        value += w[I_READY_W] * r
    return value


@njit(cache=True)
def pass_parts(rp, w, st, seat, h, f, un, hand_size, c):
    """HeuristicPolicy.pass_parts: (has it, the shapes waiting on the face a PASS makes
    stinky, has it, the waits the hand keeps)."""
    has_s = False
    s = 0.0
    has_r = False
    r = 0.0
    banned = st[S.STINKY + seat] | st[S.DISCARDED + seat]
    if not (banned >> c) & 1:
        total = 0.0
        for i in range(rp[FE.FT_COMPL_N + c]):
            b0 = FE.FT_COMPL + (c * FE.MAXQ + i) * 3
            if f[rp[b0]] and f[rp[b0 + 1]]:
                total += w[FE.I_PART] + rp[b0 + 2] / 3.0
        has_s = True
        s = total
    q = st[S.QUADS + seat]
    if w[I_READY_TAKES] != 0.0 and hand_size <= w[I_READY_MAX] and FE.may_be_ready(rp, f, q, 0):
        need = _min_huxi(rp)
        base = FE.waits_base(rp, h, S.meld_huxi(rp, st, seat))
        best = np.empty((21, 20), dtype=np.int64)
        FE.raw_waits(rp, h, q >= 1, need - base, False, best)
        has_r = True
        r = _ready_raw(rp, w, best, 20, base, un, need)
    return has_s, s, has_r, r


@njit(cache=True)
def take_bonus(rp, w, st, seat, h2, un, hand_size, size, table_hx, r0):
    has_p, p, has_r, r = take_parts(rp, w, st, seat, h2, un, hand_size, size, table_hx, r0)
    bonus = 0.0
    if has_p:
        bonus -= w[I_PATH_W] * p
    if has_r:
        bonus += w[I_READY_W] * r
    return bonus


@njit(cache=True)
def take_parts(rp, w, st, seat, h2, un, hand_size, size, table_hx, r0):
    """HeuristicPolicy.take_parts of a take leaving hand ``h2`` (``size`` cards; ``r0`` the
    reach before): (has it, the 胡息 put out of reach, has it, the waits left)."""
    need = _min_huxi(rp)
    has_p = False
    p = 0.0
    has_r = False
    r = 0.0
    f2 = np.empty(21, dtype=np.int64)
    for k in range(20):
        f2[k] = h2[k] if h2[k] < 3 else 0
    f2[20] = 9
    meld_hx = S.meld_huxi(rp, st, seat)
    ready_max = w[I_READY_MAX]
    if size <= ready_max and r0 < need + w[I_PATH_SLACK]:
        reach = FE.reach(rp, meld_hx + table_hx, h2, f2, un)
        x = need - reach
        y = need - r0
        has_p = True
        p = (x if x > 0.0 else 0.0) - (y if y > 0.0 else 0.0)
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
                            v = _ready_raw(rp, w, best, d, base, un, need)
                            if not found or v > top:
                                top = v
                                found = True
                    if found:
                        has_r = True
                        r = top
        elif FE.may_be_ready(rp, f2, q, 0):
            base = FE.waits_base(rp, h2, hx)
            best = np.empty((21, 20), dtype=np.int64)
            FE.raw_waits(rp, h2, q >= 1, need - base, False, best)
            has_r = True
            r = _ready_raw(rp, w, best, 20, base, un, need)
    return has_p, p, has_r, r


guard("heuristic", globals())
