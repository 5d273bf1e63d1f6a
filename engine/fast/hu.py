"""Compiled hu evaluation and scoring: numba kernels byte-identical to :mod:`engine.hu`.

The kernels reproduce :func:`engine.hu.evaluate_hu_counts` and
:func:`engine.hu.evaluate_auto_tianhu` field by field (every option F/K/P/W, the step-0 dealt
hand, the 3提/5坎 天胡 'A', the C9 choice, the NoWin reasons, 等, 名堂, 番, the Luzhou
multiplier and the score). The split itself is not returned on the play path;
:func:`hu_reading_at` returns the chosen reading's groups per kind (for the facts of
recorded wins).

Interface (stable; the compiled state machine calls it from numba code)
-----------------------------------------------------------------------

``params = rule_params(rules, size=PARAMS_SIZE)``
    plain Python; an int64 array with every switch of a :class:`~engine.rules.RuleSet` at
    the indices ``P_*`` (layout: :mod:`engine.fast`). Indices 0..31 belong to this module
    (``HU_PARAMS_END = 32``); 32.. are free for the state machine (``size`` > 32).

``hu_eval(params, meld_kind, meld_card, n_melds, hand_counts, card, source, tianhu, haidi,
dihu, out) -> int``
    :func:`engine.hu.evaluate_hu_counts`. Returns ``out[O_WIN]``.

    * ``meld_kind[i]``: the :class:`~engine.groups.GroupKind` value of table meld i (only the
      table kinds ``GK_CHI`` … ``GK_TI``); ``meld_card[i]``: its face
      (0..19) for the same-face kinds, its eat-shape id (``engine.groups.EAT_SHAPE_ID``,
      0..39) for CHI. Only the first ``n_melds`` entries are read; any integer dtype.
    * ``hand_counts``: [20], the concealed hand before the hu card (not modified). Any
      integer dtype for the arrays; each dtype combination is one more compiled (cached)
      specialization, so the tests and the bench use int64 throughout.
    * ``card``: the hu card kind 0..19, or -1 (Python ``None``: a dealt-hand evaluation).
    * ``source``: :class:`engine.hu.Source` value (``SRC_*``); ``tianhu``/``haidi``/``dihu``:
      0/1, the :class:`~engine.hu.HuContext` flags.
    * ``out``: int64 array of at least ``OUT_SIZE`` entries, filled as the ``out`` layout
      of :mod:`engine.fast` (``O_*``).

``hu_eval_ws(params, meld_kind, meld_card, n_melds, hand_counts, card, source, tianhu, haidi,
dihu, out, ws) -> int``
    the same with the caller's scratch array ``ws`` (int64, at least ``WS_SIZE``; contents
    irrelevant, overwritten): saves the one allocation per call of ``hu_eval``.

``hu_eval_at(params, meld_kind, k0, meld_card, c0, n_melds, hand_counts, h0, card, source,
tianhu, haidi, dihu, out, o, ws, w) -> int``
    the same on parts of larger arrays: melds ``meld_kind[k0:]`` / ``meld_card[c0:]``, hand
    ``hand_counts[h0 : h0 + 20]``, result ``out[o:]``, scratch ``ws[w:]`` (the compiled state
    machine reads its state in place; no views, whose reference counting costs more than many
    a search).

``hu_reading_at(params, …the arguments of hu_eval_at…, groups, g0) -> int``
    :func:`hu_eval_at` with ``params`` of :func:`reading_params` (``P_READING`` set: the C9
    tie-break by the canonical groups is made even between equal splits of one option, as
    the reference always makes it), and the groups of the chosen reading per GroupKind into
    ``groups[g0 : g0 + READING_SIZE]``: counts at ``g0 + kind``, 胡息 at
    ``g0 + N_GROUP_KINDS + kind`` (the reference's ``HuResult.groups`` / ``group_huxi``).

``hu_auto_tianhu(params, counts, out) -> int``
    :func:`engine.hu.evaluate_auto_tianhu` of one player's dealt cards given as int64[20]
    counts. Returns 1 and fills ``out`` as above (option ``OPT_A``) when the 3提/5坎 天胡
    applies; returns 0 with ``out[O_WIN] = 0``, ``out[O_REASON] = 0``, ``out[O_OPTION] = -1``
    (Python ``None``) otherwise; ``R_INVALID`` in ``out[O_REASON]`` for 5 copies of a face.
    ``hu_auto_tianhu_at(params, counts, h0, out, o)``: of ``counts[h0 : h0 + 20]`` into
    ``out[o:]``.

Speed: ``python -m bench.hu_kernel`` (kernel against the Python on the inputs of
recorded reference play).

Plain-Python helpers: :func:`meld_arrays` (table groups → the two arrays),
:func:`evaluate` / :func:`reading` (the kernels with Python arguments),
:func:`reading_params`, and :func:`reference_vector` / :func:`reference_reading` (a Python
:class:`~engine.hu.HuResult` as the same ``out`` / ``groups`` vector; used by the
differential tests and for the 3提/5坎 天胡's facts).

Every table and code (胡息 by group, eat shapes, the 名堂 and 等 tables, ``SRC_*``, ``R_*``,
``OPT_*``) comes from :mod:`engine.fast.codes`, derived from the reference at import; numba
freezes them into the compiled (and cached) code, and the cache is dropped when their digest
changes (:mod:`engine.fast.cache_guard`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from engine.fast.cache_guard import guard
from engine.fast.codes import (
    BIG,
    DENG,
    F_BIG,
    F_DIHU,
    F_DUIDUI,
    F_HAIDI,
    F_RED,
    F_SHUAHOU,
    F_SMALL,
    F_TIANHU,
    F_ZIMO,
    GK_CHI,
    GK_CHOUWEI,
    GK_JIANG,
    GK_KAN,
    GK_PAO,
    GK_PENG,
    GK_PENG_HU,
    GK_TI,
    GK_WEI,
    HUAYANG_LEVELS,
    HX_CHI,
    HX_KEY2,
    HX_KEY3,
    HX_KEY4,
    HX_MAX_GROUPS,
    HX_POOL,
    HX_POOL_KIND,
    HX_SAME,
    HX_SH,
    HX_SH_N,
    HX_SHAPE_KEY,
    KEY_RADIX,
    MELD_BIG,
    MELD_RED,
    MINGTANG_BITS,
    MT_BIT,
    MT_COMBO,
    MT_FAN,
    MT_FIELD,
    MT_HI,
    MT_LO,
    MT_MULT,
    MT_NEEDS_OTHER,
    MT_ON,
    MT_ROWS,
    MT_SLOPE,
    N_GROUP_KINDS,
    N_SHAPES,
    NUM_KINDS,
    OPT_A,
    OPT_DEALT,
    OPT_F,
    OPT_K,
    OPT_NONE,
    OPT_P,
    OPT_W,
    OPTION_CODES,
    R_BELOW_MIN,
    R_CARD_COUNT,
    R_DISCARD,
    R_INVALID,
    R_NO_SPLIT,
    R_OWN_PAIR,
    RED,
    SRC_DISCARD,
    SRC_LIANG_DEALER,
    SRC_LIANG_OTHER,
    SRC_OTHER_DRAW,
    SRC_OWN_DRAW,
    deng_variant,
    hx_variant,
    mingtang_variant,
)
from engine.groups import EAT_SHAPE_ID, Group, GroupKind
from engine.rules import RuleSet

__all__ = [  # the codes this module's interface speaks in (defined in engine.fast.codes)
    "MINGTANG_BITS",
    "OPTION_CODES",
    "OPT_A",
    "OPT_DEALT",
    "OPT_F",
    "OPT_K",
    "OPT_NONE",
    "OPT_P",
    "OPT_W",
    "R_BELOW_MIN",
    "R_CARD_COUNT",
    "R_DISCARD",
    "R_INVALID",
    "R_NO_SPLIT",
    "R_OWN_PAIR",
    "SRC_DISCARD",
    "SRC_LIANG_DEALER",
    "SRC_LIANG_OTHER",
    "SRC_OTHER_DRAW",
    "SRC_OWN_DRAW",
]

# ---------------------------------------------------------------------------------------------
# Params
# ---------------------------------------------------------------------------------------------

P_LUZHOU = 0
P_ONE_FIVE_TEN = 1
P_VARIANT = 2
P_MIN_HUXI = 3
P_HU_ON_DISCARDS = 4
P_HUAYANG = 5
P_TIANHU_DOUBLE = 6
P_LUZHOU_DI_B = 7
P_PLAYERS = 8
P_CHOUHU = 9
P_PENG_COMPULSORY = 10
P_HUANGZHUANG_ROTATE = 11
P_MT_VARIANT = 12
P_DENG_VARIANT = 13
#: 1: keep the C9 reading even with one candidate (its sorted group keys, ``out[O_CHOSEN]``),
#: as :func:`hu_reading_at` needs; :func:`rule_params` leaves it 0 (the state machine's
#: evaluations need no reading), :func:`reading_params` sets it.
P_READING = 14
HU_PARAMS_END = 32  # indices >= 32 belong to the state machine
PARAMS_SIZE = 32


def rule_params(rules: RuleSet, size: int = PARAMS_SIZE) -> np.ndarray:
    """Every switch of ``rules`` as an int64 array (indices ``P_*``; 32.. left zero)."""
    if size < HU_PARAMS_END:
        raise ValueError(f"params size {size} < {HU_PARAMS_END}")
    p = np.zeros(size, dtype=np.int64)
    p[P_LUZHOU] = int(rules.luzhou)
    p[P_ONE_FIVE_TEN] = int(rules.one_five_ten)
    p[P_VARIANT] = hx_variant(rules)
    p[P_MIN_HUXI] = rules.min_huxi
    p[P_HU_ON_DISCARDS] = int(rules.hu_on_discards)
    p[P_HUAYANG] = HUAYANG_LEVELS[rules.huayang]
    p[P_TIANHU_DOUBLE] = int(rules.tianhu_formula == "double")
    p[P_LUZHOU_DI_B] = int(rules.luzhou_di_mode == "b")
    p[P_PLAYERS] = rules.players
    p[P_CHOUHU] = int(rules.chouhu)
    p[P_PENG_COMPULSORY] = int(rules.peng_compulsory)
    p[P_HUANGZHUANG_ROTATE] = rules.huangzhuang_rotate
    p[P_MT_VARIANT] = mingtang_variant(rules)
    p[P_DENG_VARIANT] = deng_variant(rules)
    return p


O_WIN = 0
O_REASON = 1
O_OPTION = 2
O_HUXI = 3
O_DENG = 4
O_FAN = 5
O_SCORE = 6
O_MINGTANG = 7
O_ZIMO = 8
O_TIANHU = 9
O_CHOSEN = 10  # with P_READING: the chosen candidate (its keys at _W_CKEYS), else 0
OUT_SIZE = 16

_MAXD = 16  # DFS depth (groups in a split; 8 at most for 22 cards)
_MAXG = HX_MAX_GROUPS  # groups in a full reading (table melds + hand)
_MAXC = 8  # candidates (F + up to 3 run options, each with its 对对 alternative)

# One scratch array per call, indexed at offsets (a view or an array argument per part would
# cost numba reference-count calls on every call; no other allocation on the hot path). The
# kernels take the scratch as (ws, w): its parts start at w + _W_*.
_W_HC = 0
_W_POOL = _W_HC + NUM_KINDS
_W_COPT = _W_POOL + NUM_KINDS
_W_CHX = _W_COPT + _MAXC
_W_CDD = _W_CHX + _MAXC
_W_CSH = _W_CDD + _MAXC
_W_CNK = _W_CSH + _MAXC
_W_INFO = _W_CNK + _MAXC
_W_SKEYS = _W_INFO + 2
_W_DKEYS = _W_SKEYS + _MAXD
_W_SPLIT = _W_DKEYS + _MAXD
_W_CKEYS = _W_SPLIT + 6 * _MAXD
WS_SIZE = _W_CKEYS + _MAXC * _MAXG  # the scratch of hu_eval_ws

# ---------------------------------------------------------------------------------------------
# Split search
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _sort_small(a: Any, o: int, n: int) -> None:
    """Sort ``a[o : o + n]`` in place (insertion sort; n is small)."""
    for i in range(o + 1, o + n):
        x = a[i]
        j = i - 1
        while j >= o and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@njit(cache=True)
def _lex_less(a: Any, ia: int, na: int, ib: int, nb: int) -> bool:
    """a[ia : ia + na] < a[ib : ib + nb] as Python compares lists (element-wise, then the
    shorter first)."""
    n = na if na < nb else nb
    for i in range(n):
        if a[ia + i] != a[ib + i]:
            return a[ia + i] < a[ib + i]
    return na < nb


@njit(cache=True)
def _best_split(ws: Any, w: int, jiang: bool, peng: int, v: int, need_lex: bool, keys: int) -> int:
    """``engine.hu.best_split``: the most 胡息 of an exact partition of the pool
    (``ws[w + _W_POOL:]``, 20 counts) into 一句话/绞 (+ exactly one 将 iff ``jiang``; + the C8
    triple of face ``peng``, −1: none), or −1 if there is none.

    With ``need_lex``, ``ws[keys : keys + info[1]]`` receives the sorted group keys of the
    smallest canonical partition among the best (C9), as the Python's recursion finds it
    (``info`` = ``ws[w + _W_INFO:]``, 2). ``info[0]`` is 1 when the chosen partition has a
    一句话/绞. The pool is restored on return; ``ws[w + _W_SPLIT:]`` is scratch (6 × _MAXD).
    """
    cnt = w + _W_POOL
    inf = w + _W_INFO
    total = 0
    for i in range(NUM_KINDS):
        total += ws[cnt + i]
    ws[inf] = 0
    ws[inf + 1] = 0
    if total == 0:
        return -1 if jiang else 0
    # the DFS stack, one entry per depth: lowest card, next choice, removed group (-1 none,
    # 0 将, 1 triple, 2+j shape), its key and 胡息; then the sort buffer
    lo = w + _W_SPLIT
    ch = lo + _MAXD
    ga = ch + _MAXD
    gkey = ga + _MAXD
    ghx = gkey + _MAXD
    tmp = ghx + _MAXD
    k0 = 0
    while ws[cnt + k0] == 0:
        k0 += 1
    d = 0
    ws[lo] = k0
    ws[ch] = 0
    ws[ga] = -1
    best = -1
    hx = 0
    jl = jiang
    while d >= 0:
        k = ws[lo + d]
        c = ws[ch + d]
        ws[ch + d] = c + 1
        t = ws[ga + d]
        if t >= 0:  # undo the previous choice at this depth
            if t == 0:
                ws[cnt + k] += 2
                jl = True
            elif t == 1:
                ws[cnt + k] += 3
            else:
                j = t - 2
                ws[cnt + HX_SH[v, k, j, 0]] += 1
                ws[cnt + HX_SH[v, k, j, 1]] += 1
                ws[cnt + HX_SH[v, k, j, 2]] += 1
            hx -= ws[ghx + d]
            ws[ga + d] = -1
        nsh = HX_SH_N[v, k]
        if c >= 2 + nsh:
            d -= 1
            continue
        if c == 0:
            if not jl or ws[cnt + k] < 2:
                continue
            ws[cnt + k] -= 2
            jl = False
            ws[ga + d] = 0
            ws[ghx + d] = 0
            ws[gkey + d] = HX_KEY2[k]
        elif c == 1:
            if peng != k or ws[cnt + k] < 3:
                continue
            ws[cnt + k] -= 3
            ws[ga + d] = 1
            ws[ghx + d] = HX_SAME[v, GK_PENG_HU, k]
            ws[gkey + d] = HX_KEY3[k]
        else:
            j = c - 2
            a = cnt + HX_SH[v, k, j, 0]
            b = cnt + HX_SH[v, k, j, 1]
            e = cnt + HX_SH[v, k, j, 2]
            if ws[b] == 0 or ws[e] == 0:
                continue
            ws[a] -= 1
            ws[b] -= 1
            ws[e] -= 1
            if ws[a] < 0 or ws[b] < 0 or ws[e] < 0:
                ws[a] += 1
                ws[b] += 1
                ws[e] += 1
                continue
            ws[ga + d] = c
            ws[ghx + d] = HX_SH[v, k, j, 3]
            ws[gkey + d] = HX_SH[v, k, j, 4]
        hx += ws[ghx + d]
        nk = k
        while nk < NUM_KINDS and ws[cnt + nk] == 0:
            nk += 1
        if nk < NUM_KINDS:
            d += 1
            ws[lo + d] = nk
            # groups of one lowest card in option order: no repeats
            ws[ch + d] = c if nk == k else 0
            ws[ga + d] = -1
            continue
        # a complete partition
        if jl:
            continue
        if hx > best or (need_lex and hx == best):
            ng = d + 1
            if need_lex:
                for i in range(ng):
                    ws[tmp + i] = ws[gkey + i]
                _sort_small(ws, tmp, ng)
                if hx > best or _lex_less(ws, tmp, ng, keys, ws[inf + 1]):
                    for i in range(ng):
                        ws[keys + i] = ws[tmp + i]
                    ws[inf + 1] = ng
                else:
                    continue
            best = hx
            shape = 0
            for i in range(ng):
                if ws[ga + i] >= 2:
                    shape = 1
            ws[inf] = shape
    return best


@njit(cache=True)
def _duidui_split(ws: Any, w: int, jiang: bool, peng: int, v: int, keys: int) -> int:
    """``engine.hu._duidui_split``: 胡息 of the partition of the pool with no 一句话/绞, or
    −1; its keys into ``ws[keys:]`` (scratch as :func:`_best_split`)."""
    cnt = w + _W_POOL
    hx = 0
    ng = 0
    has_j = False
    for k in range(NUM_KINDS):
        n = ws[cnt + k]
        if n == 0:
            continue
        if n == 3 and k == peng:
            hx += HX_SAME[v, GK_PENG_HU, k]
            ws[keys + ng] = HX_KEY3[k]
        elif n == 2 and jiang and not has_j:
            has_j = True
            ws[keys + ng] = HX_KEY2[k]
        else:
            return -1
        ng += 1
    if jiang and not has_j:
        return -1
    ws[w + _W_INFO] = 0
    ws[w + _W_INFO + 1] = ng  # keys are ascending already (faces ascending, one group per face)
    return hx


@njit(cache=True)
def _best_packing(cnt: Any, v: int) -> int:
    """``engine.hu.best_packing``'s 胡息: disjoint 一句话/绞 of ``cnt``, leftovers ignored."""
    total = 0
    for i in range(NUM_KINDS):
        total += cnt[i]
    if total == 0:
        return 0
    lo = np.empty(NUM_KINDS + 2, dtype=np.int64)
    ch = np.empty(NUM_KINDS + 2, dtype=np.int64)
    ga = np.empty(NUM_KINDS + 2, dtype=np.int64)  # -1 none, 0 leftover, 1+j shape
    ghx = np.empty(NUM_KINDS + 2, dtype=np.int64)
    k0 = 0
    while cnt[k0] == 0:
        k0 += 1
    d = 0
    lo[0] = k0
    ch[0] = 0
    ga[0] = -1
    best = 0
    hx = 0
    while d >= 0:
        k = lo[d]
        c = ch[d]
        ch[d] = c + 1
        t = ga[d]
        if t >= 0:
            if t == 0:
                cnt[k] += 1
            else:
                j = t - 1
                cnt[HX_SH[v, k, j, 0]] += 1
                cnt[HX_SH[v, k, j, 1]] += 1
                cnt[HX_SH[v, k, j, 2]] += 1
            hx -= ghx[d]
            ga[d] = -1
        if c >= 1 + HX_SH_N[v, k]:
            d -= 1
            continue
        if c == 0:
            cnt[k] -= 1
            ga[d] = 0
            ghx[d] = 0
        else:
            j = c - 1
            a = HX_SH[v, k, j, 0]
            b = HX_SH[v, k, j, 1]
            e = HX_SH[v, k, j, 2]
            cnt[a] -= 1
            cnt[b] -= 1
            cnt[e] -= 1
            if cnt[a] < 0 or cnt[b] < 0 or cnt[e] < 0:
                cnt[a] += 1
                cnt[b] += 1
                cnt[e] += 1
                continue
            ga[d] = c
            ghx[d] = HX_SH[v, k, j, 3]
        hx += ghx[d]
        nk = k
        while nk < NUM_KINDS and cnt[nk] == 0:
            nk += 1
        if nk < NUM_KINDS:
            d += 1
            lo[d] = nk
            ch[d] = c if nk == k else 0  # groups of one lowest card in option order: no repeats
            ga[d] = -1
            continue
        if hx > best:
            best = hx
    return best


# ---------------------------------------------------------------------------------------------
# 等, 名堂, 番, score
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _field(
    f: int,
    red: int,
    big: int,
    small: int,
    duidui: bool,
    shuahou: bool,
    haidi: bool,
    dihu: bool,
    zimo: bool,
    tianhu: bool,
) -> int:
    """The value of field ``f`` (``engine.fast.codes.FIELDS``) of a reading."""
    if f == F_RED:
        return red
    if f == F_BIG:
        return big
    if f == F_SMALL:
        return small
    if f == F_DUIDUI:
        v = duidui
    elif f == F_SHUAHOU:
        v = shuahou
    elif f == F_HAIDI:
        v = haidi
    elif f == F_DIHU:
        v = dihu
    elif f == F_ZIMO:
        v = zimo
    elif f == F_TIANHU:
        v = tianhu
    else:
        v = False
    return 1 if v else 0


@njit(cache=True)
def _score(
    params: Any,
    hx: int,
    red: int,
    big: int,
    small: int,
    duidui: bool,
    shuahou: bool,
    haidi: bool,
    dihu: bool,
    zimo: bool,
    tianhu: bool,
    auto: bool,
) -> tuple[int, int, int, int]:
    """``engine.scoring.score_hu``: (等, 番, score, 名堂 mask) of a reading of ``hx`` 胡息,
    over the 等 and 名堂 tables of :mod:`engine.fast.codes` (a row per registered 名堂;
    ``auto``: the 3提/5坎 天胡)."""
    deng = DENG[params[P_DENG_VARIANT], 1 if zimo else 0, 1 if tianhu else 0, hx]
    on = params[P_MT_VARIANT]
    a = 1 if auto else 0
    found = 0  # bit i: row i is present
    for i in range(MT_ROWS):
        if MT_ON[on, a, i]:
            x = _field(MT_FIELD[i], red, big, small, duidui, shuahou, haidi, dihu, zimo, tianhu)
            if MT_LO[i] <= x <= MT_HI[i]:
                found |= 1 << i
    mask = 0
    if params[P_LUZHOU]:  # engine.scoring.luzhou_multiplier
        mult = 1
        for i in range(MT_ROWS):
            if found >> i & 1:
                mult *= MT_MULT[i]
                mask |= 1 << MT_BIT[i]
        return deng, mult, deng * mult, mask
    # engine.scoring.combine_fan: 平胡 (1) unless a pattern that is not needs_other is present
    fan = 0
    counting = False
    for i in range(MT_ROWS):
        if found >> i & 1:
            if not MT_NEEDS_OTHER[i]:
                counting = True
            x = _field(MT_FIELD[i], red, big, small, duidui, shuahou, haidi, dihu, zimo, tianhu)
            fan += MT_FAN[i] + MT_SLOPE[i] * (x - MT_LO[i])
            for j in range(MT_ROWS):
                if found >> j & 1:
                    fan += MT_COMBO[i, j]
            mask |= 1 << MT_BIT[i]
    if not counting:
        return deng, 1, deng, 0
    return deng, fan, deng * fan, mask


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _clear(out: Any, o: int) -> None:
    for i in range(OUT_SIZE):
        out[o + i] = 0
    out[o + O_OPTION] = OPT_NONE
    out[o + O_HUXI] = -1


@njit(cache=True)
def _nowin(out: Any, o: int, reason: int) -> int:
    _clear(out, o)
    out[o + O_REASON] = reason
    return 0


@njit(cache=True)
def _meld_hx_key(v: int, kind: int, mc: int) -> tuple[int, int, int, int, int]:
    """(胡息, key, cards, red cards, big cards) of a table meld."""
    red = MELD_RED[kind, mc]
    big = MELD_BIG[kind, mc]
    if kind == GK_CHI:
        return HX_CHI[v, mc], HX_SHAPE_KEY[mc], 3, red, big
    n = 4 if kind >= GK_PAO else 3
    return HX_SAME[v, kind, mc], (HX_KEY4[mc] if n == 4 else HX_KEY3[mc]), n, red, big


@njit(cache=True)
def _finish(
    params: Any,
    ws: Any,
    w: int,
    nc: int,
    need_lex: bool,
    red: int,
    big: int,
    small: int,
    haidi: bool,
    dihu: bool,
    zimo: bool,
    tianhu: bool,
    out: Any,
    o: int,
) -> int:
    """``engine.hu._finish``: C9 over the ``nc`` candidates of the scratch (option, 胡息,
    对对, 耍猴 possible, keys: candidate i's at ``w + _W_CKEYS + i * _MAXG``)."""
    _clear(out, o)
    opt = w + _W_COPT
    chx = w + _W_CHX
    cdd = w + _W_CDD
    csh = w + _W_CSH
    cnk = w + _W_CNK
    ckeys = w + _W_CKEYS
    min_hx = params[P_MIN_HUXI]
    bi = -1
    b_score = 0
    b_deng = 0
    b_fan = 0
    b_mask = 0
    for i in range(nc):
        hx = ws[chx + i]
        if hx < min_hx:
            continue
        deng, fan, score, mask = _score(
            params,
            hx,
            red,
            big,
            small,
            ws[cdd + i] != 0,
            ws[csh + i] != 0,
            haidi,
            dihu,
            zimo,
            tianhu,
            False,
        )
        better = bi < 0
        if not better:
            if score != b_score:
                better = score > b_score
            elif hx != ws[chx + bi]:
                better = hx > ws[chx + bi]
            elif need_lex:
                better = _lex_less(
                    ws, ckeys + i * _MAXG, ws[cnk + i], ckeys + bi * _MAXG, ws[cnk + bi]
                )
        if better:
            bi = i
            b_deng = deng
            b_fan = fan
            b_score = score
            b_mask = mask
    if bi < 0:
        bi = 0
        for i in range(1, nc):
            if ws[chx + i] != ws[chx + bi]:
                if ws[chx + i] > ws[chx + bi]:
                    bi = i
            elif need_lex and _lex_less(
                ws, ckeys + i * _MAXG, ws[cnk + i], ckeys + bi * _MAXG, ws[cnk + bi]
            ):
                bi = i
        out[o + O_REASON] = R_BELOW_MIN
        out[o + O_OPTION] = ws[opt + bi]
        out[o + O_HUXI] = ws[chx + bi]
        if params[P_READING]:
            out[o + O_CHOSEN] = bi
        return 0
    if params[P_READING]:
        out[o + O_CHOSEN] = bi
    out[o + O_WIN] = 1
    out[o + O_OPTION] = ws[opt + bi]
    out[o + O_HUXI] = ws[chx + bi]
    out[o + O_DENG] = b_deng
    out[o + O_FAN] = b_fan
    out[o + O_SCORE] = b_score
    out[o + O_MINGTANG] = b_mask
    out[o + O_ZIMO] = 1 if zimo else 0
    out[o + O_TIANHU] = 1 if tianhu else 0
    return 1


@njit(cache=True)
def _candidate(ws: Any, w: int, i: int, opt: int, hx: int, dd: int, sh: int) -> None:
    """Candidate ``i`` of the scratch: option, 胡息, 对对 (1: no 一句话/绞), 耍猴 possible."""
    ws[w + _W_COPT + i] = opt
    ws[w + _W_CHX + i] = hx
    ws[w + _W_CDD + i] = dd
    ws[w + _W_CSH + i] = sh


@njit(cache=True)
def hu_eval(
    params: Any,
    meld_kind: Any,
    meld_card: Any,
    n_melds: int,
    hand_counts: Any,
    card: int,
    source: int,
    tianhu: int,
    haidi: int,
    dihu: int,
    out: Any,
) -> int:
    """:func:`engine.hu.evaluate_hu_counts` (see the module docstring for the arguments)."""
    ws = np.empty(WS_SIZE, dtype=np.int64)
    return hu_eval_ws(
        params, meld_kind, meld_card, n_melds, hand_counts, card, source, tianhu, haidi, dihu,
        out, ws,
    )  # fmt: skip


@njit(cache=True)
def hu_eval_ws(
    params: Any,
    meld_kind: Any,
    meld_card: Any,
    n_melds: int,
    hand_counts: Any,
    card: int,
    source: int,
    tianhu: int,
    haidi: int,
    dihu: int,
    out: Any,
    ws: Any,
) -> int:
    """:func:`hu_eval` with the caller's scratch ``ws`` (int64[WS_SIZE], any content)."""
    return hu_eval_at(
        params, meld_kind, 0, meld_card, 0, n_melds, hand_counts, 0, card, source, tianhu, haidi,
        dihu, out, 0, ws, 0,
    )  # fmt: skip


@njit(cache=True)
def hu_eval_at(
    params: Any,
    meld_kind: Any,
    k0: int,
    meld_card: Any,
    c0: int,
    n_melds: int,
    hand_counts: Any,
    h0: int,
    card: int,
    source: int,
    tianhu: int,
    haidi: int,
    dihu: int,
    out: Any,
    o: int,
    ws: Any,
    w: int,
) -> int:
    """:func:`hu_eval_ws` on parts of larger arrays, without views: the melds are
    ``meld_kind[k0 : k0 + n_melds]`` / ``meld_card[c0 :]``, the hand
    ``hand_counts[h0 : h0 + 20]``, the result ``out[o : o + OUT_SIZE]``, the scratch
    ``ws[w : w + WS_SIZE]`` (the compiled state machine passes its state and one int64 array
    holding params, out and scratch)."""
    if source == SRC_DISCARD and params[P_HU_ON_DISCARDS] == 0:
        return _nowin(out, o, R_DISCARD)
    v = params[P_VARIANT]
    hc = hand_counts  # read only, at h0
    hand_size = 0
    mx = 0
    for k in range(NUM_KINDS):
        x = hc[h0 + k]
        hand_size += x
        if x > mx:
            mx = x
    th = tianhu != 0 or source == SRC_LIANG_DEALER or source == SRC_LIANG_OTHER  # noqa: SIM109 (numba)
    zimo = th or source == SRC_OWN_DRAW
    if card < 0 or source == SRC_LIANG_DEALER:
        return _eval_dealt(
            params, v, meld_kind, k0, meld_card, c0, n_melds, hc, h0, card, hand_size, haidi, dihu,
            zimo, th, out, o, ws, w,
        )  # fmt: skip
    if hc[h0 + card] >= 4 or mx > 4:
        return _nowin(out, o, R_INVALID)
    q0 = 0
    n = hand_size + 1
    run_i = -1
    run_w = False  # the run meld is a 偎/臭偎 (option W), else a 碰 (P)
    melds_hx = 0
    red = RED[card]
    big = BIG[card]
    has_chi = False
    for i in range(n_melds):
        kind = meld_kind[k0 + i]
        mc = meld_card[c0 + i]
        mhx, _key, m_n, m_red, m_big = _meld_hx_key(v, kind, mc)
        n += m_n
        melds_hx += mhx
        red += m_red
        big += m_big
        if kind >= GK_PAO:
            q0 += 1
        elif kind == GK_CHI:
            has_chi = True
        elif mc == card:
            run_i = i
            run_w = kind != GK_PENG
    nc = hc[h0 + card]
    if source == SRC_OWN_DRAW and (nc >= 2 or (run_i >= 0 and run_w)):
        return _nowin(out, o, R_OWN_PAIR)
    opt_f = n == (21 if q0 <= 1 else 20 + q0)
    opt_run = n == 21 + q0
    if not opt_f and not opt_run:
        return _nowin(out, o, R_CARD_COUNT)
    foreign = source == SRC_OTHER_DRAW or source == SRC_LIANG_OTHER or source == SRC_DISCARD  # noqa: SIM109
    pool = w + _W_POOL
    kan_hx = 0
    for k in range(NUM_KINDS):
        x = hc[h0 + k]
        red += RED[k] * x
        big += BIG[k] * x
        if x == 3:
            ws[pool + k] = 0
            kan_hx += HX_SAME[v, GK_KAN, k]
        else:
            ws[pool + k] = x
    small = n - big
    run_k = opt_run and nc == 3 and foreign
    run_p = (
        opt_run
        and run_i >= 0
        and not run_w
        and (source == SRC_OWN_DRAW or source == SRC_OTHER_DRAW)  # noqa: SIM109
    )
    run_ww = opt_run and run_i >= 0 and run_w and source != SRC_OWN_DRAW
    n_runs = (1 if run_k else 0) + (1 if run_p else 0) + (1 if run_ww else 0)
    if opt_run and n_runs == 0 and not opt_f:
        return _nowin(out, o, R_CARD_COUNT)
    need_lex = (1 if opt_f else 0) + n_runs > 1 or params[P_READING] != 0

    info = w + _W_INFO
    skeys = w + _W_SKEYS
    dkeys = w + _W_DKEYS
    for i in range(_MAXC):
        ws[w + _W_CNK + i] = 0
    ncand = 0
    shua = hand_size == 1
    fixed_base = melds_hx + kan_hx
    if opt_f:
        ws[pool + card] += 1
        jiang = q0 >= 1
        peng = card if foreign and nc == 2 else -1
        r = _best_split(ws, w, jiang, peng, v, need_lex, skeys)
        if r >= 0:
            has_shape = ws[info]
            sh = 1 if (shua and jiang) else 0
            _candidate(ws, w, ncand, OPT_F, fixed_base + r, 0 if (has_chi or has_shape) else 1, sh)
            if need_lex:
                _fill_keys(
                    ws, w, ncand, meld_kind, k0, meld_card, c0, n_melds, hc, h0, -1, -1, -1, skeys,
                    ws[info + 1], False,
                )  # fmt: skip
            ncand += 1
            if has_shape:
                r2 = _duidui_split(ws, w, jiang, peng, v, skeys)
                if r2 >= 0:
                    _candidate(ws, w, ncand, OPT_F, fixed_base + r2, 0 if has_chi else 1, sh)
                    if need_lex:
                        _fill_keys(
                            ws, w, ncand, meld_kind, k0, meld_card, c0, n_melds, hc, h0, -1, -1, -1,
                            skeys, ws[info + 1], False,
                        )  # fmt: skip
                    ncand += 1
        ws[pool + card] -= 1
    if n_runs > 0:
        r = _best_split(ws, w, True, -1, v, need_lex, skeys)
        if r >= 0:
            has_shape = ws[info]
            n_split = ws[info + 1]
            r2 = -1
            n_dd = 0
            if has_shape:
                r2 = _duidui_split(ws, w, True, -1, v, dkeys)
                n_dd = ws[info + 1]
            sh = 1 if shua else 0
            for q in range(3):
                if q == 0:
                    if not run_k:
                        continue
                    opt = OPT_K
                    fx = fixed_base - HX_SAME[v, GK_KAN, card] + HX_SAME[v, GK_PAO, card]
                    ri = -1
                    kq = card
                elif q == 1:
                    if not run_p:
                        continue
                    opt = OPT_P
                    mhx, _key, _n, _r, _b = _meld_hx_key(
                        v, meld_kind[k0 + run_i], meld_card[c0 + run_i]
                    )
                    fx = fixed_base - mhx + HX_SAME[v, GK_PAO, card]
                    ri = run_i
                    kq = -1
                else:
                    if not run_ww:
                        continue
                    opt = OPT_W
                    mhx, _key, _n, _r, _b = _meld_hx_key(
                        v, meld_kind[k0 + run_i], meld_card[c0 + run_i]
                    )
                    fx = fixed_base - mhx + HX_SAME[v, GK_PAO, card]
                    ri = run_i
                    kq = -1
                _candidate(ws, w, ncand, opt, fx + r, 0 if (has_chi or has_shape) else 1, sh)
                if need_lex:
                    _fill_keys(
                        ws, w, ncand, meld_kind, k0, meld_card, c0, n_melds, hc, h0, ri, card, kq,
                        skeys, n_split, False,
                    )  # fmt: skip
                ncand += 1
                if r2 >= 0:
                    _candidate(ws, w, ncand, opt, fx + r2, 0 if has_chi else 1, sh)
                    if need_lex:
                        _fill_keys(
                            ws, w, ncand, meld_kind, k0, meld_card, c0, n_melds, hc, h0, ri, card,
                            kq, dkeys, n_dd, False,
                        )  # fmt: skip
                    ncand += 1
    if ncand == 0:
        return _nowin(out, o, R_NO_SPLIT)
    return _finish(
        params, ws, w, ncand, need_lex, red, big, small, haidi != 0, dihu != 0, zimo, th, out, o
    )


@njit(cache=True)
def _fill_keys(
    ws: Any,
    w: int,
    ci: int,
    meld_kind: Any,
    k0: int,
    meld_card: Any,
    c0: int,
    n_melds: int,
    hc: Any,
    h0: int,
    run_i: int,
    card: int,
    pao_kan: int,
    skeys: int,
    ns: int,
    dealt: bool,
) -> None:
    """The sorted keys of candidate ``ci``'s reading: melds (meld ``run_i`` as 跑 ``card``),
    the 坎 of the hand (face ``pao_kan`` as a 跑) and, for a ``dealt`` hand (``hc`` its copy
    with the card added), its 提, then the split ``ws[skeys : skeys + ns]``."""
    dst = w + _W_CKEYS + ci * _MAXG
    m = dst
    for i in range(n_melds):
        if i == run_i:
            ws[m] = HX_KEY4[card]
        else:
            kind = meld_kind[k0 + i]
            mc = meld_card[c0 + i]
            if kind == GK_CHI:
                ws[m] = HX_SHAPE_KEY[mc]
            elif kind >= GK_PAO:
                ws[m] = HX_KEY4[mc]
            else:
                ws[m] = HX_KEY3[mc]
        m += 1
    for k in range(NUM_KINDS):
        x = hc[h0 + k]
        if x == 3:
            ws[m] = HX_KEY4[k] if k == pao_kan else HX_KEY3[k]
            m += 1
        elif x == 4 and dealt:
            ws[m] = HX_KEY4[k]
            m += 1
    for i in range(ns):
        ws[m] = ws[skeys + i]
        m += 1
    _sort_small(ws, dst, m - dst)
    ws[w + _W_CNK + ci] = m - dst


@njit(cache=True)
def _eval_dealt(
    params: Any,
    v: int,
    meld_kind: Any,
    k0: int,
    meld_card: Any,
    c0: int,
    n_melds: int,
    hand_counts: Any,
    h0: int,
    card: int,
    hand_size: int,
    haidi: int,
    dihu: int,
    zimo: bool,
    th: bool,
    out: Any,
    o: int,
    ws: Any,
    w: int,
) -> int:
    """``engine.hu._evaluate_dealt``: §10.3 step 0 (``hand_counts`` is not modified)."""
    hc = w + _W_HC
    for k in range(NUM_KINDS):
        ws[hc + k] = hand_counts[h0 + k]
    q = 0
    n = 0
    in_ti = False
    melds_hx = 0
    red = 0
    big = 0
    has_chi = False
    for i in range(n_melds):
        kind = meld_kind[k0 + i]
        mc = meld_card[c0 + i]
        mhx, _key, m_n, m_red, m_big = _meld_hx_key(v, kind, mc)
        n += m_n
        melds_hx += mhx
        red += m_red
        big += m_big
        if kind >= GK_PAO:
            q += 1
            if kind == GK_TI and mc == card:
                in_ti = True
        elif kind == GK_CHI:
            has_chi = True
    if card >= 0 and not in_ti:
        ws[hc + card] += 1
    pool = w + _W_POOL
    fixed_hx = melds_hx
    for k in range(NUM_KINDS):
        x = ws[hc + k]
        if x > 4:
            return _nowin(out, o, R_INVALID)
        n += x
        red += RED[k] * x
        big += BIG[k] * x
        if x == 4:
            q += 1
            fixed_hx += HX_SAME[v, GK_TI, k]
            ws[pool + k] = 0
        elif x == 3:
            fixed_hx += HX_SAME[v, GK_KAN, k]
            ws[pool + k] = 0
        else:
            ws[pool + k] = x
    if n != 21 + (q - 1 if q > 1 else 0):
        return _nowin(out, o, R_CARD_COUNT)
    jiang = q >= 1
    info = w + _W_INFO
    skeys = w + _W_SKEYS
    lex = params[P_READING] != 0
    r = _best_split(ws, w, jiang, -1, v, lex, skeys)
    if r < 0:
        return _nowin(out, o, R_NO_SPLIT)
    shua = 1 if (hand_size == 1 and jiang) else 0
    has_shape = ws[info]
    _candidate(ws, w, 0, OPT_DEALT, fixed_hx + r, 0 if (has_chi or has_shape) else 1, shua)
    if lex:
        _fill_keys(
            ws, w, 0, meld_kind, k0, meld_card, c0, n_melds, ws, hc, -1, -1, -1, skeys,
            ws[info + 1], True,
        )  # fmt: skip
    ncand = 1
    if has_shape:
        r2 = _duidui_split(ws, w, jiang, -1, v, skeys)
        if r2 >= 0:
            _candidate(ws, w, 1, OPT_DEALT, fixed_hx + r2, 0 if has_chi else 1, shua)
            if lex:
                _fill_keys(
                    ws, w, 1, meld_kind, k0, meld_card, c0, n_melds, ws, hc, -1, -1, -1, skeys,
                    ws[info + 1], True,
                )  # fmt: skip
            ncand = 2
    return _finish(
        params, ws, w, ncand, lex, red, big, n - big, haidi != 0, dihu != 0, zimo, th, out, o
    )


@njit(cache=True)
def hu_auto_tianhu(params: Any, counts: Any, out: Any) -> int:
    """:func:`engine.hu.evaluate_auto_tianhu` of the dealt cards ``counts`` (int64[20])."""
    return hu_auto_tianhu_at(params, counts, 0, out, 0)


@njit(cache=True)
def hu_auto_tianhu_at(params: Any, counts: Any, h0: int, out: Any, o: int) -> int:
    """:func:`hu_auto_tianhu` of ``counts[h0 : h0 + 20]`` into ``out[o : o + OUT_SIZE]``."""
    _clear(out, o)
    v = params[P_VARIANT]
    n_ti = 0
    n_kan = 0
    red = 0
    big = 0
    n = 0
    for k in range(NUM_KINDS):
        x = counts[h0 + k]
        if x > 4:
            out[o + O_REASON] = R_INVALID
            return 0
        n += x
        red += RED[k] * x
        big += BIG[k] * x
        if x == 4:
            n_ti += 1
        elif x == 3:
            n_kan += 1
    if n_ti < 3 and n_ti + n_kan < 5:
        return 0
    c = np.empty(NUM_KINDS, dtype=np.int64)
    total = 0
    for k in range(NUM_KINDS):
        x = counts[h0 + k]
        if x == 4:
            total += HX_SAME[v, GK_TI, k]
            c[k] = 0
        elif x == 3:
            total += HX_SAME[v, GK_KAN, k]
            c[k] = 0
        else:
            c[k] = x
    total += _best_packing(c, v)
    deng, fan, score, mask = _score(
        params, total, red, big, n - big, False, False, False, False, True, True, True
    )
    out[o + O_WIN] = 1
    out[o + O_OPTION] = OPT_A
    out[o + O_HUXI] = total
    out[o + O_DENG] = deng
    out[o + O_FAN] = fan
    out[o + O_SCORE] = score
    out[o + O_MINGTANG] = mask
    out[o + O_ZIMO] = 1
    out[o + O_TIANHU] = 1
    return 1


# ---------------------------------------------------------------------------------------------
# The chosen reading's groups (facts of recorded wins; not on the play path)
# ---------------------------------------------------------------------------------------------

#: ``groups`` of :func:`hu_reading_at`: the count, then the 胡息, per GroupKind.
READING_SIZE = 2 * N_GROUP_KINDS


@njit(cache=True)
def _reading(
    params: Any,
    ws: Any,
    w: int,
    bi: int,
    meld_kind: Any,
    k0: int,
    meld_card: Any,
    c0: int,
    n_melds: int,
    hand: Any,
    h0: int,
    dealt: bool,
    groups: Any,
    g0: int,
) -> None:
    """The GroupKind of every group of candidate ``bi``'s reading (its sorted keys), counted
    with its 胡息 into ``groups[g0:]`` (:data:`READING_SIZE`). A key names the cards only;
    the kind follows from where such cards can be (``engine.hu._Candidate.groups``): four of
    a face are the table's 跑/提 of it, else a 提 of the dealt hand or the 跑 the option
    made; three of a face are the table's 碰/偎/臭偎 of it, else the hand's 坎, else the C8
    碰-valued triple; an eat shape is a table 吃 while the table has more of it than the
    keys before it, else a hand group (``engine.hu.pool_group``); two cards are the 将.
    ``hand[h0:]`` is the hand the triples are counted in (a dealt hand with its card added)."""
    v = params[P_VARIANT]
    for j in range(READING_SIZE):
        groups[g0 + j] = 0
    base = w + _W_CKEYS + bi * _MAXG
    r = KEY_RADIX
    same = 0  # keys equal to this one before it
    for j in range(ws[w + _W_CNK + bi]):
        key = ws[base + j]
        same = same + 1 if j > 0 and ws[base + j - 1] == key else 0
        d0 = key // (r * r * r) - 1
        d2 = key // r % r - 1
        d3 = key % r - 1
        if d2 < 0:
            kind = GK_JIANG
            hx = 0
        elif d3 >= 0:
            kind = GK_TI if dealt else GK_PAO
            for i in range(n_melds):
                mk = meld_kind[k0 + i]
                if mk >= GK_PAO and meld_card[c0 + i] == d0:
                    kind = mk
            hx = HX_SAME[v, kind, d0]
        elif d0 == d2:
            kind = GK_KAN if hand[h0 + d0] == 3 else GK_PENG_HU
            for i in range(n_melds):
                mk = meld_kind[k0 + i]
                if (mk == GK_PENG or mk == GK_WEI or mk == GK_CHOUWEI) and meld_card[c0 + i] == d0:  # noqa: SIM109 (numba)
                    kind = mk
            hx = HX_SAME[v, kind, d0]
        else:
            sid = 0
            while sid < N_SHAPES and HX_SHAPE_KEY[sid] != key:
                sid += 1
            on_table = 0
            for i in range(n_melds):
                if meld_kind[k0 + i] == GK_CHI and meld_card[c0 + i] == sid:
                    on_table += 1
            if same < on_table:
                kind = GK_CHI
                hx = HX_CHI[v, sid]
            else:
                kind = HX_POOL_KIND[sid]
                hx = HX_POOL[v, sid]
        groups[g0 + kind] += 1
        groups[g0 + N_GROUP_KINDS + kind] += hx


@njit(cache=True)
def hu_reading_at(
    params: Any,
    meld_kind: Any,
    k0: int,
    meld_card: Any,
    c0: int,
    n_melds: int,
    hand_counts: Any,
    h0: int,
    card: int,
    source: int,
    tianhu: int,
    haidi: int,
    dihu: int,
    out: Any,
    o: int,
    ws: Any,
    w: int,
    groups: Any,
    g0: int,
) -> int:
    """:func:`hu_eval_at`, and the groups of the reading it chose (the one
    :func:`engine.hu.evaluate_hu_counts` returns, C9 included) per GroupKind into
    ``groups[g0 : g0 + READING_SIZE]``: the count at ``g0 + kind``, the 胡息 at
    ``g0 + N_GROUP_KINDS + kind``; all 0 when there is no reading (a NoWin before a split).
    ``params`` must be :func:`reading_params`' (``P_READING`` set). Returns ``out[O_WIN]``."""
    win = hu_eval_at(
        params, meld_kind, k0, meld_card, c0, n_melds, hand_counts, h0, card, source, tianhu,
        haidi, dihu, out, o, ws, w,
    )  # fmt: skip
    if out[o + O_HUXI] < 0:
        for j in range(READING_SIZE):
            groups[g0 + j] = 0
        return win
    if card < 0 or source == SRC_LIANG_DEALER:
        _reading(
            params, ws, w, out[o + O_CHOSEN], meld_kind, k0, meld_card, c0, n_melds, ws,
            w + _W_HC, True, groups, g0,
        )  # fmt: skip
    else:
        _reading(
            params, ws, w, out[o + O_CHOSEN], meld_kind, k0, meld_card, c0, n_melds,
            hand_counts, h0, False, groups, g0,
        )  # fmt: skip
    return win


# ---------------------------------------------------------------------------------------------
# Plain-Python helpers
# ---------------------------------------------------------------------------------------------


def meld_arrays(melds: Sequence[Group]) -> tuple[np.ndarray, np.ndarray, int]:
    """Table groups as (meld_kind, meld_card, n_melds) for :func:`hu_eval`."""
    n = len(melds)
    kind = np.zeros(max(n, 1), dtype=np.int64)
    mc = np.zeros(max(n, 1), dtype=np.int64)
    for i, g in enumerate(melds):
        kind[i] = int(g.kind)
        mc[i] = EAT_SHAPE_ID[g.cards] if g.kind == GroupKind.CHI else g.cards[0]  # type: ignore[index]
    return kind, mc, n


def evaluate(
    params: np.ndarray,
    melds: Sequence[Group],
    hand_counts: Sequence[int],
    card: int | None,
    source: int,
    tianhu: bool = False,
    haidi: bool = False,
    dihu: bool = False,
) -> np.ndarray:
    """:func:`hu_eval` with Python arguments; returns the ``out`` vector."""
    kind, mc, n = meld_arrays(melds)
    out = np.zeros(OUT_SIZE, dtype=np.int64)
    hc = np.array(list(hand_counts), dtype=np.int64)
    hu_eval(
        params,
        kind,
        mc,
        n,
        hc,
        -1 if card is None else card,
        int(source),
        int(tianhu),
        int(haidi),
        int(dihu),
        out,
    )
    return out


def reading_params(rules: RuleSet) -> np.ndarray:
    """:func:`rule_params` with ``P_READING`` set: the params of :func:`hu_reading_at`."""
    p = rule_params(rules)
    p[P_READING] = 1
    return p


def reading(
    params: np.ndarray,
    melds: Sequence[Group],
    hand_counts: Sequence[int],
    card: int | None,
    source: int,
    tianhu: bool = False,
    haidi: bool = False,
    dihu: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`hu_reading_at` with Python arguments (``params`` of :func:`reading_params`):
    the ``out`` vector and the ``groups`` vector."""
    kind, mc, n = meld_arrays(melds)
    out = np.zeros(OUT_SIZE, dtype=np.int64)
    groups = np.zeros(READING_SIZE, dtype=np.int64)
    ws = np.zeros(WS_SIZE, dtype=np.int64)
    hc = np.array(list(hand_counts), dtype=np.int64)
    c = -1 if card is None else card
    hu_reading_at(
        params, kind, 0, mc, 0, n, hc, 0, c, int(source), int(tianhu), int(haidi), int(dihu),
        out, 0, ws, 0, groups, 0,
    )  # fmt: skip
    return out, groups


def reference_reading(res: Any) -> np.ndarray:
    """A Python :class:`~engine.hu.HuResult`'s groups as :func:`hu_reading_at`'s vector."""
    groups = np.zeros(READING_SIZE, dtype=np.int64)
    for g, hx in zip(res.groups, res.group_huxi, strict=True):
        groups[int(g.kind)] += 1
        groups[N_GROUP_KINDS + int(g.kind)] += hx
    return groups


def mingtang_mask(rules: RuleSet, items: Sequence[tuple[str, int]]) -> int:
    """The ``MT_*`` bitmask of a Python result's 名堂 items (Chinese names)."""
    from engine.mingtang import HUNAN_MINGTANG, LUZHOU_MINGTANG

    table = LUZHOU_MINGTANG if rules.luzhou else HUNAN_MINGTANG
    by_name = {m.name: MINGTANG_BITS[m.pinyin] for m in table}
    mask = 0
    for name, _ in items:
        mask |= 1 << by_name[name]
    return mask


def reference_vector(rules: RuleSet, res: Any) -> np.ndarray:
    """A Python :class:`~engine.hu.HuResult` (or None from evaluate_auto_tianhu) as ``out``."""
    out = np.zeros(OUT_SIZE, dtype=np.int64)
    out[O_OPTION] = OPT_NONE
    out[O_HUXI] = -1
    if res is None:
        return out
    out[O_WIN] = int(res.win)
    out[O_REASON] = 0 if res.reason is None else int(res.reason)
    out[O_OPTION] = OPT_NONE if res.option is None else OPTION_CODES[res.option]
    out[O_HUXI] = -1 if res.huxi is None else res.huxi
    out[O_DENG] = res.deng
    out[O_FAN] = res.fan
    out[O_SCORE] = res.score
    out[O_MINGTANG] = mingtang_mask(rules, res.mingtang)
    out[O_ZIMO] = int(res.zimo)
    out[O_TIANHU] = int(res.tianhu)
    return out


guard("hu", globals())
