"""Hand evaluation of the ``greedy`` policy in numba (mirrors engine.policies.features).

The role tables are copied from :class:`engine.policies.features.Tables` (same entries, same
order, so every float sum runs in the reference's order) into an int64 block appended to the
rule table ``rp`` at ``FT_BASE`` (:func:`policy_table`); 胡息 shares are stored as the integer
胡息 and divided by 3.0 where the reference divided them, which gives the same doubles.

Kind 20 is the sentinel of the reference: count 0 in the hand and unseen, 9 in free counts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast import codes as C
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.groups import EAT_SHAPE_ID
from engine.policies import features as PF
from engine.policies import weights as _W
from engine.rules import RuleSet

SENT = PF.SENT
MAXC = 8  # complete-shape entries per kind (at most 6)
MAXP = 8  # partial-shape entries per kind (at most 7)
MAXN = 20  # neighbours per kind

FT_BASE = S.RP_SIZE
FT_COMP_N = FT_BASE  # 20
FT_COMP = FT_COMP_N + 20  # 20 × MAXC × 6: (nk, a, na, b, nb, 胡息)
FT_PART_N = FT_COMP + 20 * MAXC * 6  # 20
FT_PART = FT_PART_N + 20  # 20 × MAXP × 4: (o, c1, c2, 胡息)
FT_NBR_N = FT_PART + 20 * MAXP * 4  # 20
FT_NBR = FT_NBR_N + 20  # 20 × MAXN
FT_KAN_HX = FT_NBR + 20 * MAXN  # 20
FT_PAIR_HX = FT_KAN_HX + 20  # 20
FT_PENG_HX = FT_PAIR_HX + 20  # 20
FT_SHAPE_HX = FT_PENG_HX + 20  # 40 by shape id
FT_HIDDEN_WEI = FT_SHAPE_HX + 40
MAXW = 4  # wait2 entries per waiting pair (at most 2)
MAXQ = 8  # completes entries per face (at most 5)
MAXS = 8  # shapes starting at a kind (at most 4)
FT_WAIT2_N = FT_HIDDEN_WEI + 1  # 20 × 20
FT_WAIT2 = FT_WAIT2_N + 400  # 20 × 20 × MAXW × 2: (card, 胡息)
FT_COMPL_N = FT_WAIT2 + 400 * MAXW * 2  # 20
FT_COMPL = FT_COMPL_N + 20  # 20 × MAXQ × 3: (a, b, 胡息)
FT_HXS_N = FT_COMPL + 20 * MAXQ * 3  # 1
FT_HXS = FT_HXS_N + 1  # 16 × 4: (a, b, c, 胡息) of the 胡息 shapes
FT_STARTS_N = FT_HXS + 16 * 4  # 20
FT_STARTS = FT_STARTS_N + 20  # 20 × MAXS × 2: (shape id, 胡息)
FT_MIN_HUXI = FT_STARTS + 20 * MAXS * 2
FT_SIZE = FT_MIN_HUXI + 1 - FT_BASE


def _int_share(x: float) -> int:
    """The integer 胡息 behind a share hx / 3.0 of the reference tables."""
    v = round(x * 3.0)
    assert v / 3.0 == x, x
    return v


def policy_table(rules: RuleSet) -> np.ndarray:
    """The FT block (to append to ``rule_table(rules)``)."""
    t = PF.tables(rules)
    out = np.zeros(FT_SIZE, dtype=np.int64)

    def put(off: int, v: int) -> None:
        out[off - FT_BASE] = v

    for k in range(20):
        comp = t.comp[k]
        assert len(comp) <= MAXC
        put(FT_COMP_N + k, len(comp))
        for i, (nk, a, na, b, nb, hx) in enumerate(comp):
            b0 = FT_COMP + (k * MAXC + i) * 6
            for j, v in enumerate((nk, a, na, b, nb, _int_share(hx))):
                put(b0 + j, v)
        # comp1 / comp2 are comp without nk (comp1: the entries with nk == 1), same order
        assert t.comp2[k] == tuple(e[1:] for e in comp)
        assert t.comp1[k] == tuple(e[1:] for e in comp if e[0] == 1)
        part = t.part[k]
        assert len(part) <= MAXP
        put(FT_PART_N + k, len(part))
        for i, (o, c1, c2, hx) in enumerate(part):
            b0 = FT_PART + (k * MAXP + i) * 4
            for j, v in enumerate((o, c1, c2, _int_share(hx))):
                put(b0 + j, v)
        nbr = t.nbr[k]
        put(FT_NBR_N + k, len(nbr))
        for i, j in enumerate(nbr):
            put(FT_NBR + k * MAXN + i, j)
        put(FT_KAN_HX + k, t.kan_hx[k])
        put(FT_PAIR_HX + k, t.pair_hx[k])
        put(FT_PENG_HX + k, t.peng_hx[k])
    for s, hx in t.shape_hx.items():
        put(FT_SHAPE_HX + EAT_SHAPE_ID[s], hx)  # type: ignore[index]
    put(FT_HIDDEN_WEI, t.hidden_wei)
    put(FT_MIN_HUXI, rules.min_huxi)
    for (a, b), lst in t.wait2.items():
        assert len(lst) <= MAXW
        put(FT_WAIT2_N + a * 20 + b, len(lst))
        for i, (c, hx) in enumerate(lst):
            put(FT_WAIT2 + ((a * 20 + b) * MAXW + i) * 2, c)
            put(FT_WAIT2 + ((a * 20 + b) * MAXW + i) * 2 + 1, hx)
    for c in range(20):
        completes = t.completes[c]
        assert len(completes) <= MAXQ
        put(FT_COMPL_N + c, len(completes))
        for i, (a, b, share) in enumerate(completes):
            for j, v in enumerate((a, b, _int_share(share))):
                put(FT_COMPL + (c * MAXQ + i) * 3 + j, v)
    assert len(t.hx_shapes) <= 16
    put(FT_HXS_N, len(t.hx_shapes))
    for i, ((a, b, c), hx) in enumerate(t.hx_shapes):
        for j, v in enumerate((a, b, c, hx)):
            put(FT_HXS + i * 4 + j, v)
    for k in range(20):
        lst = t.starts[k]
        assert len(lst) <= MAXS
        put(FT_STARTS_N + k, len(lst))
        for i, (packed, hx) in enumerate(lst):
            cards = tuple(sorted(x for x in range(20) for _ in range((packed >> (3 * x)) & 7)))
            put(FT_STARTS + (k * MAXS + i) * 2, EAT_SHAPE_ID[cards])  # type: ignore[index]
            put(FT_STARTS + (k * MAXS + i) * 2 + 1, hx)
    return out


# The weights: a float64 array ``w`` in the order of engine.policies.weights.PARAMS (one per
# seat, :func:`weights_array`), read by these indices, derived from that table.
N_WEIGHTS = _W.N_PARAMS
I_HX = _W.INDEX["hx"]
I_FULL = _W.INDEX["full"]
I_PAIR = _W.INDEX["pair"]
I_PART = _W.INDEX["part"]
I_OUT = _W.INDEX["out"]
I_SPILL = _W.INDEX["spill"]
I_BIG = _W.INDEX["big"]
I_SELF = _W.INDEX["self"]
I_KAN = _W.INDEX["kan"]
I_PAIR_DEAD = _W.INDEX["pair_dead"]
I_PART_HX = _W.INDEX["part_hx"]


def weights_array(table: _W.PolicyWeights | None = None) -> np.ndarray:
    """The compiled policies' weight array of ``table`` (None: the defaults)."""
    values = _W.DEFAULT_VALUES if table is None else table.values
    return np.array(values, dtype=np.float64)


@njit(cache=True)
def card_value(rp, k, h, f, un, w):
    """Scorer.value: one copy of kind ``k`` in hand ``h`` (free counts ``f``), weights ``w``."""
    w_hx = w[I_HX]
    n = h[k]
    if n >= 3:
        return w[I_KAN] + w_hx * rp[FT_KAN_HX + k] / 3.0
    best = 0.0
    total = 0.0
    full = w[I_FULL]
    for i in range(rp[FT_COMP_N + k]):
        b0 = FT_COMP + (k * MAXC + i) * 6
        if n != 2 and rp[b0] != 1:
            continue
        a = rp[b0 + 1]
        na = rp[b0 + 2]
        b = rp[b0 + 3]
        nb = rp[b0 + 4]
        if f[a] >= na and f[b] >= nb:
            v = full + w_hx * (rp[b0 + 5] / 3.0)
            total += v
            if v > best:
                best = v
    if n == 2:
        v = w[I_PAIR] + w_hx * rp[FT_PAIR_HX + k] / 3.0 * (1.0 if un[k] else w[I_PAIR_DEAD])
        total += v
        if v > best:
            best = v
    part = w[I_PART]
    out = w[I_OUT]
    part_hx = w[I_PART_HX]
    for i in range(rp[FT_PART_N + k]):
        b0 = FT_PART + (k * MAXP + i) * 4
        if f[rp[b0]]:
            outs = un[rp[b0 + 1]] + un[rp[b0 + 2]]
            if outs:
                v = part + out * outs + w_hx * (rp[b0 + 3] / 3.0) * part_hx
                total += v
                if v > best:
                    best = v
    base = w[I_SELF] * un[k] + (w[I_BIG] if k >= 10 else 0.0)
    return base + best + w[I_SPILL] * (total - best)


@njit(cache=True)
def is_loose(rp, k, f):
    """A kind with free copies in no complete 一句话 / 绞 of the hand (loose_kinds)."""
    n = f[k]
    if not n:
        return False
    for i in range(rp[FT_COMP_N + k]):
        b0 = FT_COMP + (k * MAXC + i) * 6
        if n >= rp[b0] and f[rp[b0 + 1]] >= rp[b0 + 2] and f[rp[b0 + 3]] >= rp[b0 + 4]:
            return False
    return True


@njit(cache=True)
def read_view(rp, st, seat, claim, h, f, un):
    """features.View: own hand ``h``, free counts ``f``, unseen copies ``un`` (21 each, the
    sentinel last); returns the hand size."""
    hs = 0
    for k in range(20):
        v = st[S.HANDS + seat * 20 + k]
        h[k] = v
        f[k] = v if v < 3 else 0
        un[k] = v  # seen, for now
        hs += v
    h[SENT] = 0
    f[SENT] = 9
    un[SENT] = 0
    if claim:
        c = st[S.CARD]
        # the card on offer (a drawn card is visible to others once revealed)
        if c >= 0 and not (st[S.PHASE] == C.PH_DRAW_TAKE and st[S.OWNER] != seat):
            un[c] += 1
    liang = st[S.LIANG]
    if st[S.LIANG_KNOWN] and liang >= 0 and seat != st[S.DEALER]:
        un[liang] += 1
    for i in range(3):
        s = st[S.ACTIVE + i]
        for m in range(st[S.MELD_N + s]):
            kind = st[S.MELD_KIND + s * S.MAXM + m]
            mid = st[S.MELD_ID + s * S.MAXM + m]
            if kind == C.GK_WEI and s != seat:
                continue  # a face-down 偎 of another seat
            if kind == C.GK_CHI:
                for q in range(3):
                    un[C.SHAPES[mid, q]] += 1
            else:
                un[mid] += 4 if kind in (C.GK_PAO, C.GK_TI) else 3
        for j in range(st[S.RIGHT_N + s]):
            un[st[S.RIGHT + s * S.MAXD + j]] += 1
    for k in range(20):
        n = un[k]
        un[k] = 4 - n if n < 4 else 0
    return hs


# ---------------------------------------------------------------------------------------------
# CPython's iteration order of a small set of small ints (``touched`` in greedy._hand_change)
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _pyset_insert(table, mask, key):
    """setobject.c set_insert_clean / the probe of set_add_entry for hash(key) = key < 32."""
    perturb = key
    i = key & mask
    while True:
        if table[i] < 0:
            table[i] = key
            return
        if i + 9 <= mask:
            for j in range(i + 1, i + 10):
                if table[j] < 0:
                    table[j] = key
                    return
        perturb >>= 5
        i = (i * 5 + 1 + perturb) & mask


@njit(cache=True)
def pyset_add(table, state, key):
    """set.add on an emulated set: ``table`` (128 slots, -1 empty), state[0] mask, state[1]
    used (no deletions, so fill = used)."""
    mask = state[0]
    # membership first: set_add_entry finds an equal key on its probe path
    i = key & mask
    perturb = key
    slot = -1
    while slot < 0:
        if table[i] < 0:
            slot = i
            break
        if table[i] == key:
            return
        if i + 9 <= mask:
            for j in range(i + 1, i + 10):
                if table[j] < 0:
                    slot = j
                    break
                if table[j] == key:
                    return
            if slot >= 0:
                break
        perturb >>= 5
        i = (i * 5 + 1 + perturb) & mask
    table[slot] = key
    state[1] += 1
    used = state[1]
    if used * 5 < mask * 3:
        return
    # set_table_resize(so, used * 4): the smallest power of two above it, from 8
    newsize = 8
    while newsize <= used * 4:
        newsize <<= 1
    old = table[: mask + 1].copy()
    for j in range(newsize):
        table[j] = -1
    state[0] = newsize - 1
    for j in range(mask + 1):
        if old[j] >= 0:
            _pyset_insert(table, newsize - 1, old[j])


# ---------------------------------------------------------------------------------------------
# 听牌 (features.discard_waits / hand_waits) and the 胡息 estimates of the heuristic
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def hand_huxi_potential(rp, h, f, un):
    total = 0.0
    for k in range(20):
        n = h[k]
        if not n:
            continue
        if n >= 3:
            total += rp[FT_KAN_HX + k]
            continue
        if n == 2 and un[k]:
            total += 0.5 * rp[FT_PAIR_HX + k]
    for i in range(rp[FT_HXS_N]):
        a = rp[FT_HXS + i * 4]
        b = rp[FT_HXS + i * 4 + 1]
        c = rp[FT_HXS + i * 4 + 2]
        hx = rp[FT_HXS + i * 4 + 3]
        have = (f[a] > 0) + (f[b] > 0) + (f[c] > 0)
        if have == 3:
            total += hx
        elif have == 2:
            miss = a if not f[a] else (b if not f[b] else c)
            if un[miss]:
                total += hx / 3.0
    return total


@njit(cache=True)
def reach(rp, table_hx, h, f, un):
    """heuristic._reach."""
    sf = 0
    for k in range(21):
        sf += f[k]
    return table_hx + hand_huxi_potential(rp, h, f, un) + (sf - f[SENT]) / 3.0


@njit(cache=True)
def loose_count(rp, f, limit):
    n_loose = 0
    for k in range(20):
        n = f[k]
        if not n:
            continue
        if is_loose(rp, k, f):
            n_loose += n
            if n_loose > limit:
                break
    return n_loose


@njit(cache=True)
def may_be_ready(rp, f, quads, extra):
    limit = (4 if quads else 2) + extra
    return loose_count(rp, f, limit) <= limit


@njit(cache=True)
def _record(keys, vals, nout, key, v):
    for i in range(nout[0]):
        if keys[i] == key:
            if v > vals[i]:
                vals[i] = v
            return
    i = nout[0]
    keys[i] = key
    vals[i] = v
    nout[0] = i + 1


@njit(cache=True)
def _split(rp, free, jiang0, budget0, keys, vals, nout):
    """Every split of ``free`` (counts ≤ 2) into 一句话 / 绞 (+ a 将 iff ``jiang0``) with at
    most ``budget0`` cards left over: (leftover packed 3 bits a kind, most 胡息) into keys /
    vals (features.split_rest, enumerated with an explicit stack instead of memoised
    recursion: numba cannot reload a cached recursive kernel)."""
    pool0 = np.int64(0)
    for k in range(20):
        pool0 += np.int64(free[k]) << (3 * k)
    cap = 2048
    sp_pool = np.empty(cap, dtype=np.int64)
    sp_j = np.empty(cap, dtype=np.int64)
    sp_b = np.empty(cap, dtype=np.int64)
    sp_rest = np.empty(cap, dtype=np.int64)
    sp_acc = np.empty(cap, dtype=np.int64)
    sp = 0
    sp_pool[0] = pool0
    sp_j[0] = jiang0
    sp_b[0] = budget0
    sp_rest[0] = 0
    sp_acc[0] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        pool = sp_pool[sp]
        jiang = sp_j[sp]
        budget = sp_b[sp]
        rest = sp_rest[sp]
        acc = sp_acc[sp]
        if pool == 0:
            if not jiang:
                _record(keys, vals, nout, rest, acc)
            continue
        k = 0
        while (pool >> (3 * k)) & 7 == 0:
            k += 1
        n = (pool >> (3 * k)) & 7
        one = np.int64(1) << (3 * k)
        if budget:
            sp_pool[sp] = pool - one
            sp_j[sp] = jiang
            sp_b[sp] = budget - 1
            sp_rest[sp] = rest + one
            sp_acc[sp] = acc
            sp += 1
        if jiang and n >= 2:
            sp_pool[sp] = pool - 2 * one
            sp_j[sp] = 0
            sp_b[sp] = budget
            sp_rest[sp] = rest
            sp_acc[sp] = acc
            sp += 1
        for i in range(rp[FT_STARTS_N + k]):
            sid = rp[FT_STARTS + (k * MAXS + i) * 2]
            hx = rp[FT_STARTS + (k * MAXS + i) * 2 + 1]
            p2 = pool
            ok = True
            for q in range(3):
                x = C.SHAPES[sid, q]
                if (p2 >> (3 * x)) & 7 == 0:
                    ok = False
                    break
                p2 -= np.int64(1) << (3 * x)
            if ok:
                sp_pool[sp] = p2
                sp_j[sp] = jiang
                sp_b[sp] = budget
                sp_rest[sp] = rest
                sp_acc[sp] = acc + hx
                sp += 1
    return 0


@njit(cache=True)
def raw_waits(rp, h, jiang, need, discard, best):
    """features._raw_waits into ``best`` (21 × 20, -1 none; row 20 is "no discard"):
    the most 胡息 of each (discard, winning card) reaching ``need``. Returns whether any."""
    for i in range(21 * 20):
        best.flat[i] = -1
    free = np.zeros(20, dtype=np.int64)
    m = 0
    for k in range(20):
        v = h[k] if h[k] < 3 else 0
        free[k] = v
        m += v
    extra = 1 if discard else 0
    if (m - extra) % 3 != (1 if jiang else 2):
        return False
    keys = np.empty(4096, dtype=np.int64)
    vals = np.empty(4096, dtype=np.int64)
    nout = np.zeros(1, dtype=np.int64)
    cards = np.empty(8, dtype=np.int64)
    r = np.empty(8, dtype=np.int64)
    found = False
    for t in range(2 if jiang else 1):
        nout[0] = 0
        if t == 0:
            _split(rp, free, 1 if jiang else 0, 2 + extra, keys, vals, nout)
        else:
            _split(rp, free, 0, 1 + extra, keys, vals, nout)
        for e in range(nout[0]):
            rest = keys[e]
            v = vals[e]
            nc = 0
            for k in range(20):
                for _ in range((rest >> (3 * k)) & 7):
                    cards[nc] = k
                    nc += 1
            if nc != 2 + extra and (not jiang or nc != 1 + extra):
                continue
            nd = nc if discard else 1
            for i in range(nd):
                d = cards[i] if discard else -1
                if discard and i and cards[i - 1] == d:
                    continue
                nr = 0
                for j in range(nc):
                    if discard and j == i:
                        continue
                    r[nr] = cards[j]
                    nr += 1
                row = d if d >= 0 else 20
                if nr == 1:
                    c = r[0]
                    total = v
                    if total >= need and h[c] < 3 and total > best[row, c]:
                        best[row, c] = total
                        found = True
                else:
                    key = r[0] * 20 + r[1]
                    for q in range(rp[FT_WAIT2_N + key]):
                        c = rp[FT_WAIT2 + (key * MAXW + q) * 2]
                        total = v + rp[FT_WAIT2 + (key * MAXW + q) * 2 + 1]
                        if total >= need and h[c] < 3 and total > best[row, c]:
                            best[row, c] = total
                            found = True
    return found


@njit(cache=True)
def waits_base(rp, h, fixed_hx):
    base = fixed_hx
    for k in range(20):
        if h[k] >= 3:
            base += rp[FT_KAN_HX + k]
    return base


guard("features", globals())
